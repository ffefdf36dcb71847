package apiserver

// The `scope: Cluster` rate limit end to end through kube-apiserver: the validation
// ring spends its tokens (`rateLimitStage: Admission`) for the Namespace deletions the API
// server's admission client sends warrant-admission, whose bucket is a Lease in warrant-system;
// the fourth deletion is refused, and the bucket Lease shows what was spent.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func TestClusterRateLimitThroughKubeAPIServer(t *testing.T) {
	// A user of its own: buckets are per (guard, limit, user) and outlive the test.
	user := fmt.Sprintf("rate-e2e-%d", time.Now().UnixNano()%1_000_000)
	setWarrantConfig(t, ringConfig("Enforce")+`      rateLimitStage: Admission
      rateLimits:
        - {resource: namespaces, count: 3, per: 1h, scope: Cluster}
`)
	a := E.scenarios
	bindClusterAdmin(t, a, "", user+"-admin", rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: user})
	cfg := restConfig(a, "tok-admin")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	who, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 0; i < 4; i++ {
		ns := fmt.Sprintf("%s-ns-%d", user, i)
		ensureNamespace(t, a, ns)
		names = append(names, ns)
	}
	eventually(t, 10*time.Second, user+"'s RBAC binding", func() error {
		_, err := who.CoreV1().Namespaces().Get(ctx(t), names[0], metav1.GetOptions{})
		return err
	})
	for i, ns := range names {
		err := who.CoreV1().Namespaces().Delete(ctx(t), ns, metav1.DeleteOptions{})
		switch {
		case i < 3 && err != nil:
			t.Fatalf("delete %d (%s) refused within the limit: %v", i+1, ns, err)
		case i == 3:
			wantForbidden(t, err, "[RATE_LIMITED]", "rate limit of 3 namespaces deletions")
		}
	}
	// The bucket is a Lease in warrant-system (src/cluster/buckets.rs): one, holding (about)
	// no token after three spends.
	leases, err := client(t, a, "admin").CoordinationV1().Leases("warrant-system").List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var tokens []string
	for _, l := range leases.Items {
		if strings.HasPrefix(l.Name, "warrant-rl-") && l.Annotations["warrant.dev/rate-limit-user"] == user {
			tokens = append(tokens, l.Annotations["warrant.dev/rate-limit-tokens"])
		}
	}
	if len(tokens) != 1 {
		t.Fatalf("want one bucket Lease for %s in warrant-system, found %d", user, len(tokens))
	}
	left, err := strconv.ParseFloat(tokens[0], 64)
	if err != nil || left >= 1 {
		t.Fatalf("the bucket holds %q tokens after three spends of three", tokens[0])
	}
	t.Logf("3 namespace deletions admitted through kube-apiserver's admission client, the 4th RATE_LIMITED; the bucket Lease holds %s tokens", tokens[0])
}
