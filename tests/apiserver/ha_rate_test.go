package apiserver

// A `scope: Cluster` rate limit shared by two `warrant serve` replicas: its bucket is
// a Lease in warrant-system, so 3 namespace deletes per hour are 3 in all, whichever replica
// answers; and a bucket the API server will not let warrant read is the guard's failure policy
// (Deny, with the reason), never a pass.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const cfgClusterRate = `apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: DeletionGuard
    name: deletion-guard
    failurePolicy: Deny
    guard:
      rateLimits:
        - {resource: namespaces, count: 3, per: 1h, scope: Cluster}
`

type sarStatus struct {
	Allowed         bool   `json:"allowed"`
	Denied          bool   `json:"denied"`
	Reason          string `json:"reason"`
	EvaluationError string `json:"evaluationError"`
}

// reviewDelete POSTs a SubjectAccessReview "user deletes namespace ns" to a replica, as
// kube-apiserver would (mutual TLS), and returns its status.
func reviewDelete(t *testing.T, r *replica, user, ns string) sarStatus {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"spec": map[string]any{"user": user, "groups": []string{"dev", "system:authenticated"},
			"resourceAttributes": map[string]any{"verb": "delete", "version": "v1", "resource": "namespaces", "name": ns}},
	})
	resp, err := E.warrantHTTP.Post(r.url+"/authorize", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("%s: %v", r.name, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", r.name, resp.StatusCode, raw)
	}
	var out struct{ Status sarStatus }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v: %s", r.name, err, raw)
	}
	return out.Status
}

func TestClusterRateLimitSharedByReplicas(t *testing.T) {
	setRing(t, "Enforce") // warrant's service account reaches RBAC (deploy/warrant.yaml's Role)
	cfg := writeConfig(t, "ha-rate", cfgClusterRate)
	lease := fmt.Sprintf("ha-rate-%d", time.Now().UnixNano()%1_000_000)
	rs := []*replica{startReplica(t, "ha-rate-a", cfg, lease), startReplica(t, "ha-rate-b", cfg, lease)}
	user := fmt.Sprintf("rate-user-%d", time.Now().UnixNano()%1_000_000)

	for i := 0; i < 6; i++ {
		r := rs[i%2]
		start := time.Now()
		st := reviewDelete(t, r, user, fmt.Sprintf("ns-%d", i))
		took := time.Since(start)
		limited := st.Denied && strings.Contains(st.Reason, "RATE_LIMITED")
		t.Logf("delete %d via %s: denied=%v reason=%q (%s)", i+1, r.name, st.Denied, st.Reason, took.Round(time.Millisecond))
		if i < 3 && (st.Denied || st.Allowed || st.EvaluationError != "") {
			t.Fatalf("delete %d via %s: want NoOpinion (within the limit), got %+v", i+1, r.name, st)
		}
		if i >= 3 && !limited {
			t.Fatalf("delete %d via %s: want RATE_LIMITED (3 per hour across replicas), got %+v", i+1, r.name, st)
		}
	}
	// The bucket is one Lease in warrant-system, emptied.
	leases, err := client(t, E.scenarios, "admin").CoordinationV1().Leases("warrant-system").List(ctx(t),
		metav1.ListOptions{LabelSelector: "warrant.dev/rate-limit=bucket"})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, l := range leases.Items {
		if l.Annotations["warrant.dev/rate-limit-user"] == user {
			found = true
			if tok := l.Annotations["warrant.dev/rate-limit-tokens"]; !strings.HasPrefix(tok, "0.0") {
				t.Errorf("bucket %s holds %s tokens, want about 0", l.Name, tok)
			}
		}
	}
	if !found {
		t.Fatalf("no bucket Lease for %s in warrant-system", user)
	}
}

func TestClusterRateLimitUnreadableBucketDenies(t *testing.T) {
	setRing(t, "Enforce")
	cfg := writeConfig(t, "ha-rate-forbidden", cfgClusterRate)
	// Buckets in "default", where deploy/warrant.yaml grants warrant nothing: the API server
	// refuses, and the guard's failurePolicy (Deny) answers, with the error in the reason.
	r := startReplica(t, "ha-rate-forbidden", cfg, "ha-forbidden", "--leader-elect-resource-namespace", "default")
	st := reviewDelete(t, r, "rate-user-forbidden", "ns-x")
	t.Logf("unreadable bucket: %+v", st)
	if !st.Denied || !strings.Contains(st.Reason+st.EvaluationError, "cluster-scoped rate limit") ||
		!strings.Contains(st.Reason+st.EvaluationError, "forbidden") {
		t.Fatalf("want a Deny naming the cluster-scoped rate limit and the API's refusal, got %+v", st)
	}
	if m := metricsOf(r.url); !strings.Contains(grepLines(m, "warrant_authorizer_failures_total{"), "deletion-guard") {
		t.Errorf("no failure counted:\n%s", grepLines(m, "warrant_authorizer_failures"))
	}
	if !strings.Contains(r.proc.tail(50), "cluster-scoped rate limit unavailable") {
		t.Errorf("no log line for the failure:\n%s", r.proc.tail(20))
	}
}
