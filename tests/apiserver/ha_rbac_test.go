package apiserver

// deploy/warrant.yaml's Role for Leases: warrant's service account may get, create and update
// Leases in warrant-system (leader election, cluster-scoped rate-limit buckets) and nothing
// else with them, and nothing with Leases elsewhere. Asked by the service account itself
// (SelfSubjectAccessReview) on the scenario API server where deploy/warrant.yaml was applied.

import (
	"testing"

	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestShippedLeaseRoleIsLeastPrivilege(t *testing.T) {
	setRing(t, "Enforce") // the authorization ring answers NoOpinion: RBAC alone decides
	c := client(t, E.scenarios, warrantSA)
	can := func(verb, ns string) bool {
		t.Helper()
		r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx(t), &authzv1.SelfSubjectAccessReview{
			Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
				Verb: verb, Group: "coordination.k8s.io", Resource: "leases", Namespace: ns}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("SelfSubjectAccessReview %s leases in %q: %v", verb, ns, err)
		}
		return r.Status.Allowed
	}
	for _, verb := range []string{"get", "create", "update"} {
		if !can(verb, "warrant-system") {
			t.Errorf("warrant's service account cannot %s leases in warrant-system: leader election and cluster buckets need it", verb)
		}
		for _, ns := range []string{"default", "kube-system", ""} {
			if can(verb, ns) {
				t.Errorf("warrant's service account may %s leases in %q", verb, ns)
			}
		}
	}
	for _, verb := range []string{"list", "watch", "patch", "delete", "deletecollection"} {
		if can(verb, "warrant-system") {
			t.Errorf("warrant's service account may %s leases in warrant-system: more than it needs", verb)
		}
	}
}
