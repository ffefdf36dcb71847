package apiserver

// The unusual-deletion gate through a real kube-apiserver with the shipped routing: a
// principal's deletions at its usual pace go through; a burst far above its baseline is
// refused with UNUSUAL_DELETION_RATE (action Deny), passes with an approved change ticket
// (action RequireTicket), or is only counted and audited (action Observe). The model is scaled
// to a test's minute: a one-minute window, a prior and floor of 60 per hour, a factor of 5, so a
// new principal may delete 5 configmaps within a minute and the sixth is a burst.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const unusualTickets = `tickets:
  - id: CHG-BULK
    status: Approved
    approvers: [carol]
    expires: "2030-01-01T00:00:00Z"
    scope: {namespaces: [bulk]}
`

func unusualConfig(action string) string {
	return `apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: DeletionGuard
    name: deletion-guard
    guard:
      tickets:
        file: apiserver-unusual-tickets.yaml
      unusualDeletions:
        action: ` + action + `
        resources: [{resource: configmaps}]
        window: 1m
        halfLife: 1h
        priorPerHour: 60
        floorPerHour: 60
        factor: 5
`
}

// deleteConfigMaps deletes n fresh configmaps in ns as c, returning each delete's error.
func deleteConfigMaps(t *testing.T, c *kubernetes.Clientset, ns, prefix string, n int) []error {
	t.Helper()
	for i := 0; i < n; i++ {
		makeConfigMap(t, E.shipped, ns, fmt.Sprintf("%s-%d", prefix, i), nil)
	}
	out := make([]error, n)
	for i := 0; i < n; i++ {
		out[i] = c.CoreV1().ConfigMaps(ns).Delete(ctx(t), fmt.Sprintf("%s-%d", prefix, i), metav1.DeleteOptions{})
	}
	return out
}

func TestUnusualDeletionsThroughAPIServer(t *testing.T) {
	a := E.shipped
	if err := os.WriteFile(filepath.Join(filepath.Dir(E.warrantCfg), "apiserver-unusual-tickets.yaml"), []byte(unusualTickets), 0o600); err != nil {
		t.Fatal(err)
	}
	ensureNamespace(t, a, "bulk")
	run := time.Now().UnixNano() % 1_000_000
	user := func(role string) string { return fmt.Sprintf("%s-%d", role, run) }
	for _, u := range []string{user("steady"), user("looper"), user("ticketed"), user("watched")} {
		bindEdit(t, a, "bulk", u+"-edit", rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: u})
	}

	// Deny: the steady principal's 4 deletes pass; the looper's 12 in a row pass up to 5.
	setWarrantConfig(t, unusualConfig("Deny"))
	for i, err := range deleteConfigMaps(t, impersonating(t, a, user("steady")), "bulk", "steady", 4) {
		if err != nil {
			t.Fatalf("steady delete %d: %v", i+1, err)
		}
	}
	m := markAudit()
	errs := deleteConfigMaps(t, impersonating(t, a, user("looper")), "bulk", "loop", 12)
	for i, err := range errs {
		if i < 5 && err != nil {
			t.Fatalf("looper delete %d (within 5 a minute): %v", i+1, err)
		}
		if i >= 5 {
			wantForbidden(t, err, "[UNUSUAL_DELETION_RATE]", "deletion-guard: unusual deletion rate:", "by "+user("looper"))
		}
	}
	t.Logf("refused burst: %v", errs[5])
	rec := waitAudit(t, m, "the refused burst", func(r auditRecord) bool {
		return r.User == user("looper") && r.Code == "UNUSUAL_DELETION_RATE" && r.Denied
	})
	t.Logf("audit: decision=%s code=%s", rec.Decision, rec.Code)
	if got := grepLines(warrantMetrics(t), `warrant_guard_unusual_deletions_total{name="deletion-guard",action="Deny"}`); !strings.HasSuffix(got, " 7") {
		t.Errorf("want 7 bursts counted, got %q", got)
	}

	// RequireTicket: past the threshold a delete needs a ticket; with an approved one it passes.
	setWarrantConfig(t, unusualConfig("RequireTicket"))
	errs = deleteConfigMaps(t, impersonating(t, a, user("ticketed")), "bulk", "held", 6)
	wantForbidden(t, errs[5], "[UNUSUAL_DELETION_RATE]", "a change ticket is required")
	cfg := restConfig(a, "tok-admin")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user("ticketed"), Extra: map[string][]string{"warrant.dev/ticket": {"CHG-BULK"}}}
	withTicket, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := withTicket.CoreV1().ConfigMaps("bulk").Delete(ctx(t), "held-5", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("the burst's delete with an approved ticket: %v", err)
	}

	// Observe: a burst of 12 all go through, counted and audited with the numbers.
	setWarrantConfig(t, unusualConfig("Observe"))
	m = markAudit()
	for i, err := range deleteConfigMaps(t, impersonating(t, a, user("watched")), "bulk", "watched", 12) {
		if err != nil {
			t.Fatalf("observed delete %d must pass: %v", i+1, err)
		}
	}
	// The audit writer flushes every 20 ms: wait for all seven.
	observed := 0
	for deadline := time.Now().Add(5 * time.Second); observed < 7 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		raw, err := os.ReadFile(E.auditLog)
		if err != nil {
			t.Fatal(err)
		}
		observed = 0
		for _, line := range strings.Split(string(raw[int(m):]), "\n") {
			if strings.Contains(line, `"user":"`+user("watched")+`"`) && strings.Contains(line, `"unusual":{"action":"Observe"`) {
				observed++
			}
		}
	}
	if observed != 7 {
		t.Errorf("want 7 audit records of the observed burst with its numbers, got %d", observed)
	}
	if got := grepLines(warrantMetrics(t), `warrant_guard_unusual_deletions_total{name="deletion-guard",action="Observe"}`); !strings.HasSuffix(got, " 7") {
		t.Errorf("want 7 observed bursts counted, got %q", got)
	}
}

// With `scope: Cluster` the baseline is one Lease in warrant-system that every replica reads
// and writes: five namespace deletes a minute in all pass, whichever replica judges them, and
// the sixth is a burst.
func TestUnusualDeletionsBaselineSharedByReplicas(t *testing.T) {
	setRing(t, "Enforce") // warrant's service account reaches RBAC (deploy/warrant.yaml's Role)
	cfg := writeConfig(t, "ha-unusual", `apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: DeletionGuard
    name: deletion-guard
    failurePolicy: Deny
    guard:
      unusualDeletions: {action: Deny, scope: Cluster, window: 1m, halfLife: 1h, priorPerHour: 60, floorPerHour: 60, factor: 5}
`)
	lease := fmt.Sprintf("ha-unusual-%d", time.Now().UnixNano()%1_000_000)
	rs := []*replica{startReplica(t, "ha-unusual-a", cfg, lease), startReplica(t, "ha-unusual-b", cfg, lease)}
	user := fmt.Sprintf("unusual-user-%d", time.Now().UnixNano()%1_000_000)
	for i := 0; i < 7; i++ {
		r := rs[i%2]
		st := reviewDelete(t, r, user, fmt.Sprintf("ns-%d", i))
		t.Logf("delete %d via %s: denied=%v reason=%q", i+1, r.name, st.Denied, st.Reason)
		if i < 5 && (st.Denied || st.EvaluationError != "") {
			t.Fatalf("delete %d via %s: want NoOpinion (5 a minute across replicas), got %+v", i+1, r.name, st)
		}
		if i >= 5 && !(st.Denied && strings.Contains(st.Reason, "[UNUSUAL_DELETION_RATE]")) {
			t.Fatalf("delete %d via %s: want UNUSUAL_DELETION_RATE (the shared baseline), got %+v", i+1, r.name, st)
		}
	}
	leases, err := client(t, E.scenarios, "admin").CoordinationV1().Leases("warrant-system").List(ctx(t),
		metav1.ListOptions{LabelSelector: "warrant.dev/deletion-baseline=principal"})
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, l := range leases.Items {
		if l.Annotations["warrant.dev/deletion-baseline-of"] == user+" on namespaces" {
			found++
			t.Logf("baseline %s: %s", l.Name, l.Annotations["warrant.dev/deletion-baseline"])
			if !strings.Contains(l.Annotations["warrant.dev/deletion-baseline"], `"current":7`) {
				t.Errorf("the shared baseline must have counted all 7 requests: %s", l.Annotations["warrant.dev/deletion-baseline"])
			}
		}
	}
	if found != 1 {
		t.Fatalf("want one baseline Lease for %s in warrant-system, found %d", user, found)
	}
}
