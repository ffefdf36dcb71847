package apiserver

// The DeletionGuard through a real kube-apiserver with the shipped routing (destructive verbs
// to warrant's uncached entry): a protected Deployment's delete is denied with the guard's code,
// allowed with an approved ticket presented as the user's extra (set here by impersonation, as
// an authenticator mapping a token claim would), and 200 concurrent deletes of unprotected
// objects by a trusted CI identity all go through, with the latency they see.

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const guardTickets = `tickets:
  - id: CHG-200
    status: Approved
    approvers: [carol, dave]
    expires: "2030-01-01T00:00:00Z"
    scope: {namespaces: [production]}
`

const guardConfig = `apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: DeletionGuard
    name: deletion-guard
    guard:
      mode: Enforce
      protectedNamespaces:
        - {names: [production], level: critical}
      protectedResources:
        - {group: apps, resource: deployments, names: [web], level: critical}
      trusted:
        - serviceAccounts: [ci/deployer]
          maxLevel: standard
      tickets:
        file: apiserver-guard-tickets.yaml
        extraKey: warrant.dev/ticket
        requiredFor: [critical]
        approvals: {critical: 2, high: 1, standard: 0}
`

func bindEdit(t *testing.T, a *apiserver, ns, name string, subject rbacv1.Subject) {
	t.Helper()
	t.Cleanup(func() {
		_ = client(t, a, "admin").RbacV1().RoleBindings(ns).Delete(ctx(t), name, metav1.DeleteOptions{})
	})
	_, err := client(t, a, "admin").RbacV1().RoleBindings(ns).Create(ctx(t), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		// cluster-admin, bound in one namespace: the aggregated "edit" role stays empty without a
		// controller-manager to aggregate it.
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects: []rbacv1.Subject{subject},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("rolebinding %s/%s: %v", ns, name, err)
	}
}

func makeDeployment(t *testing.T, a *apiserver, ns, name string) {
	t.Helper()
	labels := map[string]string{"app": name}
	_, err := client(t, a, "admin").AppsV1().Deployments(ns).Create(ctx(t), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
			},
		},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("deployment %s/%s: %v", ns, name, err)
	}
}

func TestGuardThroughAPIServer(t *testing.T) {
	a := E.shipped
	if err := os.WriteFile(filepath.Join(filepath.Dir(E.warrantCfg), "apiserver-guard-tickets.yaml"), []byte(guardTickets), 0o600); err != nil {
		t.Fatal(err)
	}
	setWarrantConfig(t, guardConfig)
	ensureNamespace(t, a, "production")
	ensureNamespace(t, a, "ci-tests")
	// A user of its own (by impersonation), so no other scenario sees these bindings.
	bindEdit(t, a, "production", "gina-edit", rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: "gina"})
	bindEdit(t, a, "ci-tests", "deployer-edit", rbacv1.Subject{Kind: "ServiceAccount", Name: "deployer", Namespace: "ci"})

	// A protected Deployment, no ticket: denied with the guard's code, though RBAC would allow.
	// The risk, from the model: critical twice (the namespace rule and the name rule are the two
	// sides of the protection, which add up) and business hours when warrant judged inside the
	// default 10:00-22:00 (UTC, no timeZone configured).
	makeDeployment(t, a, "production", "web")
	m := markAudit()
	err := impersonating(t, a, "gina").AppsV1().Deployments("production").Delete(ctx(t), "web", metav1.DeleteOptions{})
	denied := waitAudit(t, m, "gina's refused delete", isReview("gina", "delete", "deployments", "production"))
	risk := usersModel.assess(exposure{namespace: side{"critical", "production"}, object: side{"critical", "web"},
		inBusiness: within(denied.Time, "10:00", "22:00")})
	wantForbidden(t, err, "[MISSING_TICKET]", fmt.Sprintf("risk=%s score=%d", risk.level, risk.score))

	// The same delete with the approved ticket: the guard stands aside and RBAC allows.
	cfg := restConfig(a, "tok-admin")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "gina", Extra: map[string][]string{"warrant.dev/ticket": {"CHG-200"}}}
	withTicket, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m = markAudit()
	if err := withTicket.AppsV1().Deployments("production").Delete(ctx(t), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete with an approved ticket: %v", err)
	}
	rec := waitAudit(t, m, "the ticketed delete", isReview("gina", "delete", "deployments", "production"))
	if rec.Decision != "NoOpinion" {
		t.Fatalf("the guard must stand aside for a ticketed delete: %+v", rec)
	}

	// 200 concurrent deletes of unprotected objects by the trusted CI identity, and the same by
	// an identity the shipped matchConditions keep away from warrant (the baseline).
	const n = 200
	bindEdit(t, a, "ci-tests", "baseline-edit", rbacv1.Subject{Kind: "ServiceAccount", Name: "baseline", Namespace: "kube-system"})
	ci := impersonating(t, a, "system:serviceaccount:ci:deployer", "system:serviceaccounts", "system:serviceaccounts:ci")
	base := impersonating(t, a, "system:serviceaccount:kube-system:baseline", "system:serviceaccounts", "system:serviceaccounts:kube-system")
	burst := func(c *kubernetes.Clientset, prefix string) []time.Duration {
		for i := 0; i < n; i++ {
			makeConfigMap(t, a, "ci-tests", fmt.Sprintf("%s-%d", prefix, i), nil)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failures []string
		latencies := make([]time.Duration, 0, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				started := time.Now()
				err := c.CoreV1().ConfigMaps("ci-tests").Delete(ctx(t), fmt.Sprintf("%s-%d", prefix, i), metav1.DeleteOptions{})
				took := time.Since(started)
				mu.Lock()
				defer mu.Unlock()
				latencies = append(latencies, took)
				if err != nil {
					failures = append(failures, err.Error())
				}
			}(i)
		}
		wg.Wait()
		if len(failures) > 0 {
			t.Fatalf("%s: %d of %d concurrent deletes failed, first: %s", prefix, len(failures), n, failures[0])
		}
		sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
		return latencies
	}
	baseline := burst(base, "base")
	m = markAudit()
	through := burst(ci, "test")
	p := func(l []time.Duration, q int) time.Duration { return l[len(l)*q/100] }
	t.Logf("GUARD: %d concurrent deletes: baseline (not sent to warrant) p50 %v p99 %v; CI identity through the guard p50 %v p99 %v (added p50 %v, p99 %v)",
		n, p(baseline, 50), p(baseline, 99), p(through, 50), p(through, 99),
		p(through, 50)-p(baseline, 50), p(through, 99)-p(baseline, 99))
	seen := 0
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		seen = 0
		for _, r := range auditSince(t, m) {
			if r.User == "system:serviceaccount:ci:deployer" && strings.EqualFold(r.Decision, "NoOpinion") {
				seen++
			}
		}
		if seen >= n {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if seen < n {
		t.Fatalf("warrant audited %d of %d CI deletes as standing aside", seen, n)
	}
}
