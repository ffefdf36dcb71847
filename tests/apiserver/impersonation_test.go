package apiserver

// The verbs of constrained impersonation reach warrant through the real API
// server, and the shipped example's impersonation rule grants exactly what it says. The scenario
// API server runs with --feature-gates=ConstrainedImpersonation=true (alpha in 1.35). Its
// impersonation filter (k8s.io/apiserver pkg/endpoints/filters/impersonation,
// constrained_impersonation.go) tries every mode, the legacy `impersonate` verb included, and
// lets the request through as soon as one mode is authorized: so a rule that also granted the
// legacy verb would grant everything the impersonated account may do.

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// actingAs is a client of user (its static token) impersonating as.
func actingAs(t *testing.T, a *apiserver, user, as string) *kubernetes.Clientset {
	t.Helper()
	cfg := restConfig(a, "tok-"+user)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: as}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConstrainedImpersonationThroughThePolicyExample(t *testing.T) {
	a := E.scenarios
	// pol-alice is in group team-a: the example's team rules apply to namespace "a".
	ensureNamespace(t, a, "a")
	ensureNamespace(t, a, "b")
	admin := client(t, a, "admin")
	for _, ns := range []string{"a", "b"} {
		_, err := admin.CoreV1().ServiceAccounts(ns).Create(ctx(t), &corev1.ServiceAccount{
			ObjectMeta: metav1.ObjectMeta{Name: "reader"}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		// The service account itself may do anything in its namespace: only the impersonation
		// rules stand between pol-alice and a write done as it.
		bindClusterAdmin(t, a, ns, "reader-admin", rbacv1.Subject{Kind: "ServiceAccount", Name: "reader", Namespace: ns})
		makeConfigMap(t, a, ns, "imp", nil)
	}
	cfg, err := os.ReadFile(filepath.Join(repoRoot, "authz-config", "policy-example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	setWarrantConfig(t, string(cfg))

	sa := "system:serviceaccount:a:reader"
	m := markAudit()
	reader := actingAs(t, a, "pol-alice", sa).CoreV1().ConfigMaps("a")
	eventually(t, 10*time.Second, "reading as a's service account (its RoleBinding)", func() error {
		_, err := reader.List(ctx(t), metav1.ListOptions{})
		return err
	})
	// The API server asked warrant the constrained verbs: the account, then the verb done as it.
	waitAudit(t, m, "impersonate:serviceaccount", isReview("pol-alice", "impersonate:serviceaccount", "serviceaccounts", "a"))
	waitAudit(t, m, "impersonate-on:serviceaccount:list", isReview("pol-alice", "impersonate-on:serviceaccount:list", "configmaps", "a"))

	// A write as the account: no mode is granted (the legacy verb is not), so it is refused
	// although the account itself could do it.
	err = reader.Delete(ctx(t), "imp", metav1.DeleteOptions{})
	wantForbidden(t, err, "pol-alice")
	if _, err := admin.CoreV1().ConfigMaps("a").Get(ctx(t), "imp", metav1.GetOptions{}); err != nil {
		t.Fatalf("the configmap must still exist: %v", err)
	}
	// Another team's account, a user, and a node are not granted either.
	_, err = actingAs(t, a, "pol-alice", "system:serviceaccount:b:reader").CoreV1().ConfigMaps("b").List(ctx(t), metav1.ListOptions{})
	wantForbidden(t, err, "pol-alice")
	_, err = actingAs(t, a, "pol-alice", "pol-bob").CoreV1().ConfigMaps("a").List(ctx(t), metav1.ListOptions{})
	wantForbidden(t, err, "pol-alice")
	_, err = actingAs(t, a, "pol-alice", "system:node:n1").CoreV1().ConfigMaps("a").List(ctx(t), metav1.ListOptions{})
	wantForbidden(t, err, "pol-alice")
}
