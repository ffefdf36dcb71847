package apiserver

// The buffer ring's half of the harness: the chain file with a `buffer` block, a loopback HTTPS
// receiver for its notifications (a certificate from the tier's CA, which the chain file names
// as the receiver's caFile), CRITICAL and HIGH StatefulSets, and readers of warrant-admission's
// buffer audit records. warrant-admission runs the controller: it is the warrant with a cluster
// connection (as the shipped ClusterRole's service account).

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// bufferFinalizer is the default finalizer.
const bufferFinalizer = "warrant.dev/deletion-cooldown"

// bufferTicket approves changes in the buffer scenarios' namespaces (two approvers, as critical needs).
const bufferTickets = `tickets:
  - id: CHG-BUF-1
    status: Approved
    approvers: [carol, dave]
    expires: "2030-01-01T00:00:00Z"
    scope: {namespaces: [buf-cool, buf-high, buf-expire, buf-confirm, buf-retire, buf-restart, buf-failover, buf-join]}
`

// bufferKnobs are what the scenarios vary.
type bufferKnobs struct {
	cooldown, maxHold string
	confirm           bool
	receiver          string // https URL
}

// bufferConfig is the ring's guard with a buffer block on StatefulSets. The thresholds are
// lowered so that a critical label and business hours (every day but its last minute) reach
// CRITICAL: 40 + 10 >= 50 (running pods add 10 more); a high label is 20 + 10 = 30, HIGH.
func bufferConfig(k bufferKnobs) string {
	return fmt.Sprintf(`apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: DeletionGuard
    name: deletion-guard
    failurePolicy: Deny
    guard:
      mode: Enforce
      timeZone: UTC
      businessHours: {days: [Mon, Tue, Wed, Thu, Fri, Sat, Sun], start: %q, end: %q}
      protectionLabel: %s
      ticketAnnotation: %s
      riskThresholds: {medium: 10, high: 30, critical: 50}
      tickets:
        file: buffer-tickets.yaml
        requiredFor: [critical]
        approvals: {critical: 2, high: 1, standard: 0}
      buffer:
        finalizeAt: high
        resources: [{group: apps, resource: statefulsets}]
        cooldown: %s
        requireConfirmation: %t
        maxHold: %s
        notify:
          - {url: %q, caFile: buffer-receiver-ca.pem, timeout: 2s, attempts: 3}
`, ringDayStart, ringDayEnd, protectionLabel, ticketAnnotation, k.cooldown, k.confirm, k.maxHold, k.receiver)
}

// setBuffer serves the buffer chain from every warrant (and waits for warrant-admission).
func setBuffer(t *testing.T, k bufferKnobs) {
	t.Helper()
	writeBufferFiles(t)
	setWarrantConfig(t, bufferConfig(k))
	// The controller looks at the served configuration once a second (src/buffer/run.rs, POLL)
	// and restarts on a change of its buffer blocks: give it that second, so that what a
	// scenario does next meets the new settings.
	time.Sleep(1500 * time.Millisecond)
}

// writeBufferFiles writes the files bufferConfig names (tickets, the receiver's CA) beside the
// served configuration.
func writeBufferFiles(t *testing.T) {
	t.Helper()
	dir := filepath.Dir(E.warrantCfg)
	if err := os.WriteFile(filepath.Join(dir, "buffer-tickets.yaml"), []byte(bufferTickets), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "buffer-receiver-ca.pem"), E.pki.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
}

// receiver is a loopback HTTPS server recording the notifications it is POSTed.
type receiver struct {
	url  string
	srv  *http.Server
	mu   sync.Mutex
	got  []map[string]any
	seen chan struct{}
	// failFirst answers this many POSTs 503 before accepting (warrant retries with backoff).
	failFirst int
	refused   int
}

// newReceiver starts a receiver with a server certificate of the tier's CA.
func newReceiver(t *testing.T) *receiver {
	t.Helper()
	crt, key, err := E.pki.leaf(E.dir, "buffer-receiver", "127.0.0.1", x509.ExtKeyUsageServerAuth)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{url: "https://" + ln.Addr().String() + "/hook", seen: make(chan struct{}, 64)}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.handle), ReadHeaderTimeout: 5 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}}
	go func() { _ = r.srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = r.srv.Close() })
	return r
}

func (r *receiver) handle(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	var doc map[string]any
	if err != nil || req.Method != http.MethodPost || json.Unmarshal(body, &doc) != nil {
		http.Error(w, "want a POSTed JSON document", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	if r.refused < r.failFirst {
		r.refused++
		r.mu.Unlock()
		http.Error(w, "not yet", http.StatusServiceUnavailable)
		return
	}
	r.got = append(r.got, doc)
	r.mu.Unlock()
	r.seen <- struct{}{}
	w.WriteHeader(http.StatusNoContent)
}

// waitFor waits (up to d) for a notification about namespace/name.
func (r *receiver) waitFor(t *testing.T, ns, name string, d time.Duration) map[string]any {
	t.Helper()
	deadline := time.After(d)
	for {
		r.mu.Lock()
		for _, doc := range r.got {
			if o, ok := doc["object"].(map[string]any); ok && o["namespace"] == ns && o["name"] == name {
				r.mu.Unlock()
				return doc
			}
		}
		r.mu.Unlock()
		select {
		case <-r.seen:
		case <-deadline:
			t.Fatalf("no notification about %s/%s within %s", ns, name, d)
		}
	}
}

// bufferRecord is the part of a buffer audit record the tests read.
type bufferRecord struct {
	Time   time.Time `json:"time"`
	Stage  string    `json:"stage"`
	Code   string    `json:"code"`
	Object struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
	} `json:"object"`
	Message      string                  `json:"message"`
	Deletion     time.Time               `json:"deletionTimestamp"`
	CooldownEnds time.Time               `json:"cooldownEnds"`
	RequestedBy  string                  `json:"requestedBy"`
	Confirmed    string                  `json:"confirmedByTicket"`
	Risk         *struct{ Level string } `json:"risk"`
	Snapshot     map[string]any          `json:"snapshot"`
}

func (r bufferRecord) is(code, ns, name string) bool {
	return r.Stage == "buffer" && r.Code == code && r.Object.Namespace == ns && r.Object.Name == name
}

// waitBuffer waits (up to d) for a buffer record code about ns/name in the audit log of m
// (warrant-admission's unless the mark names another).
func waitBuffer(t *testing.T, m logMark, code, ns, name string, d time.Duration) bufferRecord {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		for _, r := range readRecords[bufferRecord](m) {
			if r.is(code, ns, name) {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no buffer record %s of %s/%s within %s", filepath.Base(m.path), code, ns, name, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// protectedSet creates namespace ns and a StatefulSet labelled level with the approved ticket
// annotated, and n running pods it owns; it waits for the controller's finalizer.
func protectedSet(t *testing.T, c *kubernetes.Clientset, ns, name, level string, n int) *appsv1.StatefulSet {
	t.Helper()
	return protectedSetWith(t, c, ns, name, level, n, bufferFinalizer)
}

// protectedSetWith is protectedSet waiting for finalizer (a buffer block naming its own).
func protectedSetWith(t *testing.T, c *kubernetes.Clientset, ns, name, level string, n int, finalizer string) *appsv1.StatefulSet {
	t.Helper()
	labelledNamespace(t, E.scenarios, ns, nil)
	lbls := map[string]string{"app": name}
	replicas := int32(n)
	s := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protectionLabel: level},
			Annotations: map[string]string{ticketAnnotation: "CHG-BUF-1"}},
		Spec: appsv1.StatefulSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: lbls},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: lbls},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "db", Image: "registry.k8s.io/pause:3.10"}}},
			},
		},
	}
	s, err := c.AppsV1().StatefulSets(ns).Create(ctx(t), s, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("statefulset %s/%s: %v", ns, name, err)
	}
	for i := 0; i < n; i++ {
		ownedRunningPod(t, c, s, i)
	}
	eventually(t, 15*time.Second, "the buffer finalizer on "+ns+"/"+name, func() error {
		got, err := c.AppsV1().StatefulSets(ns).Get(ctx(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !hasString(got.Finalizers, finalizer) {
			return fmt.Errorf("finalizers %v", got.Finalizers)
		}
		s = got
		return nil
	})
	return s
}

// ownedRunningPod creates pod i of the StatefulSet, Running, as its controller and a kubelet would.
func ownedRunningPod(t *testing.T, c *kubernetes.Clientset, s *appsv1.StatefulSet, i int) {
	t.Helper()
	yes := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", s.Name, i), Labels: s.Spec.Template.Labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: s.Name, UID: s.UID, Controller: &yes}}},
		Spec: *s.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = "node-1"
	created, err := c.CoreV1().Pods(s.Namespace).Create(ctx(t), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("pod %s: %v", pod.Name, err)
	}
	created.Status.Phase = corev1.PodRunning
	if _, err := c.CoreV1().Pods(s.Namespace).UpdateStatus(ctx(t), created, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pod %s status Running: %v", pod.Name, err)
	}
}

func hasString(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// bufferMetric reads one series of warrant-admission's metrics ("" when absent).
func bufferMetric(series string) string {
	for _, l := range strings.Split(metricsOf(E.ring.url), "\n") {
		if strings.HasPrefix(l, series+" ") {
			return strings.TrimPrefix(l, series+" ")
		}
	}
	return ""
}
