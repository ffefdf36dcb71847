package apiserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	coordv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// ---- helpers ---------------------------------------------------------------------------------

func ensureNamespace(t *testing.T, a *apiserver, ns string) {
	t.Helper()
	_, err := client(t, a, "admin").CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", ns, err)
	}
}

func makeConfigMap(t *testing.T, a *apiserver, ns, name string, labels map[string]string) {
	t.Helper()
	_, err := client(t, a, "admin").CoreV1().ConfigMaps(ns).Create(ctx(t), &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
}

// bindRole grants user VERBS on configmaps in ns through RBAC (as admin), until the test ends.
func bindRole(t *testing.T, a *apiserver, ns, user string, verbs ...string) {
	t.Helper()
	c := client(t, a, "admin")
	name := "test-" + user
	_, err := c.RbacV1().Roles(ns).Create(ctx(t), &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: verbs}}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	_, err = c.RbacV1().RoleBindings(ns).Create(ctx(t), &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user}}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The API server is shared by every test: the grant ends with the test that made it.
	t.Cleanup(func() {
		_ = c.RbacV1().RoleBindings(ns).Delete(ctx(t), name, metav1.DeleteOptions{})
		_ = c.RbacV1().Roles(ns).Delete(ctx(t), name, metav1.DeleteOptions{})
	})
}

// eventually retries f until it returns nil (RBAC's informer sees new bindings shortly after).
func eventually(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %s: %v", what, d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func wantForbidden(t *testing.T, err error, contains ...string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Fatalf("want 403 Forbidden, got %v", err)
	}
	for _, c := range contains {
		if !strings.Contains(err.Error(), c) {
			t.Fatalf("403 message %q does not contain %q", err.Error(), c)
		}
	}
}

const warrantDenyReason = "protected-deletions: Everything is forbidden."

// requirePolicy marks a scenario that uses warrant's Policy type; it always runs now.
func requirePolicy(t *testing.T) {
	t.Helper()
}

// ---- shipped AuthorizationConfiguration ------------------------------------------------------

// warrant denies -> 403 carrying warrant's reason; warrant allows -> the request succeeds; the
// flip is a hot reload of warrant's config seen at once through the shipped (uncached) entry.
func TestShippedAllowDenyAndHotReload(t *testing.T) {
	a := E.shipped
	ensureNamespace(t, a, "production")
	makeConfigMap(t, a, "production", "web", nil)
	setWarrantConfig(t, cfgAlwaysDeny)

	m := markAudit()
	err := client(t, a, "alice").CoreV1().ConfigMaps("production").Delete(ctx(t), "web", metav1.DeleteOptions{})
	wantForbidden(t, err, warrantDenyReason, `User "alice" cannot delete resource "configmaps"`)
	r := waitAudit(t, m, "alice's delete", isReview("alice", "delete", "configmaps", "production"))
	if r.Decision != "Deny" || !r.Denied || r.ResourceAttributes.Name != "web" {
		t.Fatalf("warrant's audit: %+v", r)
	}

	setWarrantConfig(t, cfgAlwaysAllow)
	flipped := time.Now()
	m = markAudit()
	if err := client(t, a, "alice").CoreV1().ConfigMaps("production").Delete(ctx(t), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("warrant allows, delete must succeed: %v", err)
	}
	t.Logf("decision flipped through the API server %s after warrant loaded the new config", time.Since(flipped).Round(time.Millisecond))
	r = waitAudit(t, m, "alice's allowed delete", isReview("alice", "delete", "configmaps", "production"))
	if r.Decision != "Allow" || !r.Allowed || r.DecidedBy != "allow-everything" {
		t.Fatalf("warrant's audit: %+v", r)
	}
	if _, err := client(t, a, "admin").CoreV1().ConfigMaps("production").Get(ctx(t), "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("configmap must be gone: %v", err)
	}
}

// The shipped matchConditions keep control-plane identities away from warrant; with warrant's
// shipped default chain (authz-config/warrant.yaml), a delete outside the protected namespaces
// reaches warrant, which has no opinion, so RBAC decides.
func TestShippedMatchConditionsKeepControlPlaneAway(t *testing.T) {
	a := E.shipped
	ensureNamespace(t, a, "production")
	ensureNamespace(t, a, "dev")
	shippedDefault, err := os.ReadFile(filepath.Join(repoRoot, "authz-config", "warrant.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	setWarrantConfig(t, string(shippedDefault))
	m := markAudit()

	excluded := []struct {
		user   string
		groups []string
	}{
		{"system:kube-controller-manager", nil},
		{"system:kube-scheduler", nil},
		{"system:serviceaccount:kube-system:namespace-controller", []string{"system:serviceaccounts", "system:serviceaccounts:kube-system"}},
		{"system:node:node-1", []string{"system:nodes"}},
		{"system:serviceaccount:warrant-system:warrant", []string{"system:serviceaccounts"}},
	}
	for i, id := range excluded {
		name := fmt.Sprintf("cp-%d", i)
		makeConfigMap(t, a, "production", name, nil)
		err := impersonating(t, a, id.user, id.groups...).CoreV1().ConfigMaps("production").Delete(ctx(t), name, metav1.DeleteOptions{})
		if err != nil && strings.Contains(err.Error(), "protected-deletions") {
			t.Fatalf("%s reached warrant: %v", id.user, err)
		}
	}
	// Outside the protected namespaces: warrant's default chain has no opinion, RBAC decides.
	makeConfigMap(t, a, "dev", "x", nil)
	err = client(t, a, "bob").CoreV1().ConfigMaps("dev").Delete(ctx(t), "x", metav1.DeleteOptions{})
	wantForbidden(t, err, `User "bob" cannot delete resource "configmaps"`) // RBAC: no binding
	if strings.Contains(err.Error(), "protected-deletions") {
		t.Fatalf("a delete in dev was denied by warrant: %v", err)
	}
	_, _ = client(t, a, "bob").CoreV1().ConfigMaps("production").Get(ctx(t), "cp-0", metav1.GetOptions{})

	// The cluster keeps working for the control plane: namespaces, service accounts, leases.
	admin := client(t, a, "admin")
	ensureNamespace(t, a, "keeps-working")
	if _, err := admin.CoreV1().ServiceAccounts("keeps-working").Create(ctx(t), &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("service account: %v", err)
	}
	if _, err := admin.CoreV1().ServiceAccounts("keeps-working").CreateToken(ctx(t), "app", &authnTokenRequest, metav1.CreateOptions{}); err != nil {
		t.Fatalf("token request: %v", err)
	}
	sched := impersonating(t, a, "system:kube-scheduler")
	holder := "scheduler-1"
	lease := &coordv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler"}, Spec: coordv1.LeaseSpec{HolderIdentity: &holder}}
	if _, err := sched.CoordinationV1().Leases("kube-system").Create(ctx(t), lease, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("scheduler lease: %v", err)
	}
	if _, err := sched.CoordinationV1().Leases("kube-system").Get(ctx(t), "kube-scheduler", metav1.GetOptions{}); err != nil {
		t.Fatalf("scheduler lease get: %v", err)
	}
	kcm := impersonating(t, a, "system:kube-controller-manager")
	if _, err := kcm.CoreV1().Namespaces().List(ctx(t), metav1.ListOptions{}); err != nil {
		t.Fatalf("controller-manager list namespaces: %v", err)
	}

	// A marker that does reach warrant; the writer keeps order, so once it is there, any record of
	// the requests above would be there too.
	makeConfigMap(t, a, "production", "marker", nil)
	_ = client(t, a, "alice").CoreV1().ConfigMaps("production").Delete(ctx(t), "marker", metav1.DeleteOptions{})
	waitAudit(t, m, "the marker", isReview("alice", "delete", "configmaps", "production"))
	// bob's requests reach warrant by design (the shipped routing sends it every non-control-
	// plane resource request); no control-plane identity ever does.
	for _, r := range auditSince(t, m) {
		if r.User != "alice" && r.User != "bob" {
			t.Fatalf("warrant saw a review the shipped matchConditions exclude: %+v", r)
		}
	}
	out, err := kubectl(t, a, "get", "namespaces", "-o", "name")
	if err != nil || !strings.Contains(out, "namespace/keeps-working") {
		t.Fatalf("kubectl get namespaces: %v\n%s", err, out)
	}
}

var authnTokenRequest = authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{Audiences: []string{"https://kubernetes.default.svc"}}}

// ---- scenario AuthorizationConfiguration -----------------------------------------------------

// SelfSubjectAccessReview and `kubectl auth can-i` answer as warrant decides.
func TestCanIFollowsWarrant(t *testing.T) {
	a := E.scenarios
	ensureNamespace(t, a, "team")
	for _, tc := range []struct {
		cfg     string
		allowed bool
		kubectl string
	}{{cfgAlwaysAllow, true, "yes"}, {cfgAlwaysDeny, false, "no"}} {
		setWarrantConfig(t, tc.cfg)
		m := markAudit()
		ssar, err := client(t, a, "dave").AuthorizationV1().SelfSubjectAccessReviews().Create(ctx(t), &authzv1.SelfSubjectAccessReview{
			Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{Namespace: "team", Verb: "delete", Resource: "configmaps", Name: "x"}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ssar.Status.Allowed != tc.allowed {
			t.Fatalf("SSAR allowed=%v, want %v: %+v", ssar.Status.Allowed, tc.allowed, ssar.Status)
		}
		if !tc.allowed && (!ssar.Status.Denied || !strings.Contains(ssar.Status.Reason, warrantDenyReason)) {
			t.Fatalf("SSAR must carry warrant's deny: %+v", ssar.Status)
		}
		waitAudit(t, m, "dave's SSAR", isReview("dave", "delete", "configmaps", "team"))
		// kubectl prints "yes", or "no - <reason>" when the reason is set.
		out, _ := kubectlAs(t, a, "tok-dave", "auth", "can-i", "delete", "configmaps/x", "-n", "team")
		first := strings.Fields(out + " ")
		if len(first) == 0 || first[0] != tc.kubectl || (!tc.allowed && !strings.Contains(out, warrantDenyReason)) {
			t.Fatalf("kubectl auth can-i: %q, want %q (with warrant's reason on no)", out, tc.kubectl)
		}
	}
}

// Impersonation (--as, --as-group) is authorized by warrant through the impersonate verbs. The
// scenario API server has constrained impersonation on, which asks impersonate:user-info on
// users.authentication.k8s.io first and the legacy impersonate on users (core) only when that
// is refused (k8s.io/apiserver pkg/endpoints/filters/impersonation/mode.go).
func TestImpersonationThroughWarrant(t *testing.T) {
	a := E.scenarios
	ensureNamespace(t, a, "team")
	makeConfigMap(t, a, "team", "imp", nil)
	setWarrantConfig(t, cfgAlwaysAllow)
	m := markAudit()
	out, err := kubectlAs(t, a, "tok-erin", "get", "configmap", "imp", "-n", "team", "--as", "frank", "--as-group", "qa", "-o", "name")
	if err != nil || strings.TrimSpace(out) != "configmap/imp" {
		t.Fatalf("kubectl --as frank --as-group qa: %v\n%s", err, out)
	}
	impersonates := func(resource, name string) func(auditRecord) bool {
		return func(r auditRecord) bool {
			return (isReview("erin", "impersonate", resource, "*")(r) || isReview("erin", "impersonate:user-info", resource, "*")(r)) &&
				r.ResourceAttributes.Name == name && r.Allowed
		}
	}
	waitAudit(t, m, "impersonate user frank", impersonates("users", "frank"))
	waitAudit(t, m, "impersonate group qa", impersonates("groups", "qa"))
	got := waitAudit(t, m, "frank's get", isReview("frank", "get", "configmaps", "team"))
	if !contains(got.Groups, "qa") || !contains(got.Groups, "system:authenticated") {
		t.Fatalf("impersonated groups: %v", got.Groups)
	}

	setWarrantConfig(t, cfgAlwaysDeny)
	_, err = impersonatingAs(t, a, "tok-erin", "frank").CoreV1().ConfigMaps("team").Get(ctx(t), "imp", metav1.GetOptions{})
	// The API server caches a granted constrained impersonation (impersonation/cache.go), so the
	// refusal may come from the second check, impersonate-on:user-info:get on the configmap.
	wantForbidden(t, err, `User "erin" cannot impersonate`, warrantDenyReason)
}

// Latency warrant adds per request as seen by the client: the same GET through an entry whose
// answers the API server caches, through an uncached entry, and with no webhook (RBAC only).
func TestLatencyAddedByWarrant(t *testing.T) {
	a := E.scenarios
	ensureNamespace(t, a, "lat")
	makeConfigMap(t, a, "lat", "c", nil)
	bindRole(t, a, "lat", "lat-base", "get")
	setWarrantConfig(t, cfgAlwaysAllow)
	eventually(t, 10*time.Second, "RBAC binding", func() error {
		_, err := client(t, a, "lat-base").CoreV1().ConfigMaps("lat").Get(ctx(t), "c", metav1.GetOptions{})
		return err
	})
	const n = 400
	measure := func(user string) (p50, p99 time.Duration) {
		c := client(t, a, user)
		for i := 0; i < 20; i++ { // warm the connection and, for the cached entry, the cache
			if _, err := c.CoreV1().ConfigMaps("lat").Get(ctx(t), "c", metav1.GetOptions{}); err != nil {
				t.Fatalf("%s: %v", user, err)
			}
		}
		d := make([]time.Duration, n)
		for i := range d {
			s := time.Now()
			if _, err := c.CoreV1().ConfigMaps("lat").Get(context.Background(), "c", metav1.GetOptions{}); err != nil {
				t.Fatalf("%s: %v", user, err)
			}
			d[i] = time.Since(s)
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[n/2], d[n*99/100]
	}
	m := markAudit()
	b50, b99 := measure("lat-base")
	c50, c99 := measure("lat-cached")
	u50, u99 := measure("lat-uncached")
	seen := map[string]int{}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		seen = map[string]int{}
		for _, r := range auditSince(t, m) {
			seen[r.User]++
		}
		if seen["lat-uncached"] >= n {
			break
		}
	}
	if seen["lat-base"] != 0 || seen["lat-uncached"] < n || seen["lat-cached"] > 5 {
		t.Fatalf("reviews warrant saw per user: %v (want none for the baseline, >= %d uncached, a handful cached)", seen, n)
	}
	fmt.Printf("LATENCY (client-go GET configmap, %d sequential requests each, warrant binary %s)\n", n, E.warrantBuild)
	fmt.Printf("  baseline (no webhook, RBAC):    p50 %8s  p99 %8s\n", b50, b99)
	fmt.Printf("  warrant, API server cache on:   p50 %8s  p99 %8s  (added p50 %s, p99 %s)\n", c50, c99, c50-b50, c99-b99)
	fmt.Printf("  warrant, uncached:              p50 %8s  p99 %8s  (added p50 %s, p99 %s)\n", u50, u99, u50-b50, u99-b99)
	fmt.Printf("  reviews seen by warrant: uncached user %d, cached user %d, baseline user %d\n", seen["lat-uncached"], seen["lat-cached"], seen["lat-base"])
}

// warrant stopped: each API server entry applies its own failurePolicy (NoOpinion -> RBAC
// decides, Deny -> 403); warrant restarted -> its decisions resume. Runs last (Go runs tests in
// source order and this one is at the end of the file list).
func TestWarrantStoppedFailurePolicy(t *testing.T) {
	sh, sc := E.shipped, E.scenarios
	ensureNamespace(t, sh, "production")
	ensureNamespace(t, sc, "team")
	makeConfigMap(t, sc, "team", "fp", nil)
	bindRole(t, sc, "team", "carol", "get")
	setWarrantConfig(t, cfgAlwaysDeny)

	E.warrant.stop(10 * time.Second)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = E.startWarrant()
		}
	})

	// Shipped entry, failurePolicy NoOpinion: RBAC decides. Without a binding RBAC has no
	// opinion either, and the webhook's error then makes the filter answer 500, not 403
	// (apiserver filters/authorization.go: a non-Allow decision with an error is an internal
	// error); that is upstream's behaviour, asserted as such.
	makeConfigMap(t, sh, "production", "fp", nil)
	err := client(t, sh, "alice").CoreV1().ConfigMaps("production").Delete(ctx(t), "fp", metav1.DeleteOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("warrant down, no RBAC binding: want 500 carrying the webhook error, got %v", err)
	}
	// After a RoleBinding: allowed.
	bindRole(t, sh, "production", "alice", "delete")
	eventually(t, 10*time.Second, "delete allowed by RBAC with warrant down", func() error {
		return client(t, sh, "alice").CoreV1().ConfigMaps("production").Delete(ctx(t), "fp", metav1.DeleteOptions{})
	})

	// Scenario entry warrant-fail-closed, failurePolicy Deny: refused although carol's RBAC
	// binding allows the get; the chain stops at the Deny (with the webhook error, hence 500).
	_, err = client(t, sc, "carol").CoreV1().ConfigMaps("team").Get(ctx(t), "fp", metav1.GetOptions{})
	if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("warrant down, Deny entry: want the request refused with the webhook error, got %v", err)
	}
	// Control: the same binding does let a NoOpinion-routed user through (proves RBAC would allow).
	bindRole(t, sc, "team", "bob", "get")
	eventually(t, 10*time.Second, "bob allowed by RBAC with warrant down (NoOpinion entry)", func() error {
		_, err := client(t, sc, "bob").CoreV1().ConfigMaps("team").Get(ctx(t), "fp", metav1.GetOptions{})
		return err
	})

	// Restart: decisions resume.
	if err := E.startWarrant(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	m := markAudit()
	makeConfigMap(t, sh, "production", "fp2", nil)
	err = client(t, sh, "alice").CoreV1().ConfigMaps("production").Delete(ctx(t), "fp2", metav1.DeleteOptions{})
	wantForbidden(t, err, warrantDenyReason)
	waitAudit(t, m, "alice's delete after restart", isReview("alice", "delete", "configmaps", "production"))
	_, err = client(t, sc, "carol").CoreV1().ConfigMaps("team").Get(ctx(t), "fp", metav1.GetOptions{})
	wantForbidden(t, err, warrantDenyReason)
}

// ---- helpers used above ----------------------------------------------------------------------

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func kubectlAs(t *testing.T, a *apiserver, token string, args ...string) (string, error) {
	t.Helper()
	return kubectl(t, a, append([]string{"--token", token}, args...)...)
}

func impersonatingAs(t *testing.T, a *apiserver, token, user string, groups ...string) *kubernetes.Clientset {
	t.Helper()
	cfg := restConfig(a, token)
	cfg.Impersonate.UserName, cfg.Impersonate.Groups = user, groups
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
