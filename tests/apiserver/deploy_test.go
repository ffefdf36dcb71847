package apiserver

import (
	"strings"
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The shipped ClusterRole (deploy/warrant.yaml) grants warrant's service account list and watch
// of the kinds its cluster cache holds and nothing else: asked by the service account itself
// (SelfSubjectAccessReview) on the scenario API server where deploy/warrant.yaml was applied.
// That it is enough is shown by warrant-admission, whose watches run as that account: the
// harness waits for its cache to be ready before any test runs.
func TestShippedClusterRoleIsLeastPrivilege(t *testing.T) {
	// A chain with a DeletionGuard: warrant-admission opens its cluster cache, as warrantSA, and
	// setRing waits until every watch has listed; warrant's authorization ring then answers
	// NoOpinion to the service account's reads, so RBAC alone answers the reviews below.
	setRing(t, "Enforce")
	m := metricsOf(E.ring.url)
	if !hasLine(m, "warrant_cluster_cache_ready 1") {
		t.Fatalf("warrant-admission's cache (as %s) is not ready:\n%s", warrantSA, grepLines(m, "warrant_cluster"))
	}
	for _, l := range strings.Split(grepLines(m, "warrant_cluster_watch_errors_total{"), "\n") {
		if l != "" && !strings.HasSuffix(l, " 0") {
			t.Errorf("a watch failed as %s (missing permission?): %s", warrantSA, l)
		}
	}
	c := client(t, E.scenarios, warrantSA)
	can := func(verb, group, resource string) bool {
		t.Helper()
		r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx(t), &authzv1.SelfSubjectAccessReview{
			Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
				Verb: verb, Group: group, Resource: resource}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SelfSubjectAccessReview %s %s.%s: %v", verb, resource, group, err)
		}
		return r.Status.Allowed
	}
	cached := []struct{ group, resource string }{
		{"", "pods"}, {"", "services"}, {"", "persistentvolumeclaims"}, {"", "namespaces"},
		{"apps", "replicasets"}, {"apps", "deployments"}, {"apps", "statefulsets"}, {"apps", "daemonsets"},
		{"batch", "jobs"}, {"batch", "cronjobs"}, {"networking.k8s.io", "ingresses"},
	}
	// The buffer ring's default kinds: get (risk, snapshot) and patch (the finalizer) too.
	buffered := map[string]bool{"persistentvolumeclaims": true, "namespaces": true,
		"deployments": true, "statefulsets": true, "daemonsets": true}
	for _, k := range cached {
		allowed := []string{"list", "watch"}
		denied := []string{"get", "create", "update", "patch", "delete", "deletecollection"}
		if buffered[k.resource] {
			allowed = []string{"list", "watch", "get", "patch"}
			denied = []string{"create", "update", "delete", "deletecollection"}
		}
		for _, verb := range allowed {
			if !can(verb, k.group, k.resource) {
				t.Errorf("warrant's service account cannot %s %s.%s: the cluster cache or the buffer ring needs it", verb, k.resource, k.group)
			}
		}
		for _, verb := range denied {
			if can(verb, k.group, k.resource) {
				t.Errorf("warrant's service account may %s %s.%s: more than the cache and the buffer ring need", verb, k.resource, k.group)
			}
		}
	}
	// DeletionTickets: the guard's watch, and marking a single-use ticket Used (read, then
	// replace its status); never creating, approving or deleting one.
	for _, k := range []struct {
		verb, resource string
		allowed        bool
	}{
		{"list", "deletiontickets", true}, {"watch", "deletiontickets", true}, {"get", "deletiontickets", true},
		{"update", "deletiontickets/status", true}, {"create", "deletiontickets", false},
		{"update", "deletiontickets", false}, {"delete", "deletiontickets", false},
		{"approve", "deletiontickets", false}, {"patch", "deletiontickets/status", false},
	} {
		resource, sub, _ := strings.Cut(k.resource, "/")
		r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx(t), &authzv1.SelfSubjectAccessReview{
			Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
				Verb: k.verb, Group: "warrant.dev", Resource: resource, Subresource: sub}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed != k.allowed {
			t.Errorf("warrant's service account %s %s %s.warrant.dev: allowed %v, want %v", k.verb, k.resource, resource, r.Status.Allowed, k.allowed)
		}
	}
	// Who may approve a ticket or use a constraint is asked of the API server: create
	// SubjectAccessReviews, nothing else of authorization.k8s.io.
	if !can("create", "authorization.k8s.io", "subjectaccessreviews") {
		t.Errorf("warrant's service account cannot create subjectaccessreviews: ticket approvals and constraint use need it")
	}
	for _, verb := range []string{"get", "list", "delete"} {
		if can(verb, "authorization.k8s.io", "subjectaccessreviews") {
			t.Errorf("warrant's service account may %s subjectaccessreviews: more than asking needs", verb)
		}
	}
	for _, verb := range []string{"create", "patch"} {
		if !can(verb, "events.k8s.io", "events") {
			t.Errorf("warrant's service account cannot %s events.events.k8s.io: the buffer ring needs it", verb)
		}
	}
	for _, k := range []struct{ verb, group, resource string }{
		{"list", "", "secrets"}, {"get", "", "secrets"}, {"list", "", "configmaps"},
		{"list", "", "nodes"}, {"create", "", "events"}, {"list", "rbac.authorization.k8s.io", "clusterroles"},
		{"escalate", "rbac.authorization.k8s.io", "clusterroles"}, {"impersonate", "", "users"},
	} {
		if can(k.verb, k.group, k.resource) {
			t.Errorf("warrant's service account may %s %s.%s", k.verb, k.resource, k.group)
		}
	}
}
