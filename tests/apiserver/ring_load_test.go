package apiserver

// Validation-ring scenarios about the webhook as a dependency: the latency it adds to 200
// concurrent deletes, and what the shipped failure policies do while warrant-admission is down.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admregv1 "k8s.io/api/admissionregistration/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// 200 concurrent deletes of unprotected Deployments by the CI identity (trusted up to standard):
// all admitted. The baseline is the same deletes by the same identity in a namespace the shipped
// namespaceSelector leaves out (warrant-system), so the only difference is the webhook call; the
// same deletes in another namespace they leave out (kube-public) go to the reference webhook, the
// least a webhook can do, so what a webhook call costs on this machine and what warrant adds
// beyond it are told apart.
func TestRingConcurrentDeletesLatency(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	// reference: a namespace the shipped selectors leave out, sent to the reference webhook
	// instead (ring_reference_webhook_test.go): what any webhook call costs here.
	const n, through, excluded, reference = 200, "ring-ci", "warrant-system", "kube-public"
	const sa = "system:serviceaccount:ring-ci:deployer"
	admin := client(t, a, "admin")
	for _, ns := range []string{through, excluded, reference} {
		labelledNamespace(t, a, ns, nil)
		bindClusterAdmin(t, a, ns, "deployer-admin", rbacv1.Subject{Kind: "ServiceAccount", Name: "deployer", Namespace: "ring-ci"})
	}
	for _, ns := range []string{excluded, reference} {
		if h := expectedHook(t, a, "DELETE", "apps", "deployments", ns, nil); h != "" {
			t.Fatalf("%s must be left out by the shipped selectors, but %s covers it", ns, h)
		}
	}
	refServer := startReferenceWebhook(t)
	refHook := installReferenceWebhook(t, admin, refServer, reference)
	hook := expectedHook(t, a, "DELETE", "apps", "deployments", through, nil)
	if hook == "" {
		t.Fatalf("no shipped webhook covers unlabelled Deployments in %s", through)
	}
	ci := impersonating(t, a, sa, "system:serviceaccounts", "system:serviceaccounts:ring-ci")
	eventually(t, 10*time.Second, "the CI identity's RBAC binding", func() error {
		_, err := ci.AppsV1().Deployments(excluded).List(ctx(t), metav1.ListOptions{Limit: 1})
		return err
	})
	// Rounds of n deletes, concurrent or one after the other; the baseline and the ring
	// alternate (A B B A) so that neither gains from running second.
	round := 0
	// warrant-admission's CPU in its own concurrent bursts: from their creates (its cluster cache
	// decodes their watch events) to the last delete, and while the deletes alone ran. The other
	// namespaces' bursts are left out: its cache decodes their events too.
	burstCPU, deletingCPU := 0.0, 0.0
	burst := func(ns string, concurrent bool) []time.Duration {
		round++
		_, started := procStats(t, E.ring.admission.cmd.Process.Pid)
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("job-%d-%03d", round, i)
		}
		parallel(t, 16, names, func(name string) error {
			_, err := admin.AppsV1().Deployments(ns).Create(ctx(t), bareDeployment(name, nil), metav1.CreateOptions{})
			return err
		})
		var mu sync.Mutex
		latencies := make([]time.Duration, 0, n)
		width := 1
		if concurrent {
			width = n
		}
		_, cpu0 := procStats(t, E.ring.admission.cmd.Process.Pid)
		defer func() {
			if _, cpu1 := procStats(t, E.ring.admission.cmd.Process.Pid); concurrent && ns == through {
				deletingCPU += cpu1 - cpu0
				burstCPU += cpu1 - started
			}
		}()
		parallel(t, width, names, func(name string) error {
			began := time.Now()
			err := ci.AppsV1().Deployments(ns).Delete(ctx(t), name, metav1.DeleteOptions{})
			mu.Lock()
			defer mu.Unlock()
			latencies = append(latencies, time.Since(began))
			return err
		})
		return latencies
	}
	mw, ma := markLog(E.ring.audit), markLog(E.ring.apiAudit)
	judgedBefore, callsBefore := admissionSeconds(t), webhookCallSeconds(t, admin, hook)
	refCallsBefore, refServedBefore := webhookCallSeconds(t, admin, refHook), refServer.calls.Load()
	var base, ring, ref, baseSeq, ringSeq []time.Duration
	// Two A B C C B A cycles (no webhook, warrant, the reference webhook): a burst of 200
	// through kube-apiserver and etcd on this machine varies by tens of milliseconds from one
	// burst to the next, more than the webhook adds.
	for cycle := 0; cycle < concurrentCycles; cycle++ {
		base = append(base, burst(excluded, true)...)
		ring = append(ring, burst(through, true)...)
		ref = append(ref, burst(reference, true)...)
		ref = append(ref, burst(reference, true)...)
		ring = append(ring, burst(through, true)...)
		base = append(base, burst(excluded, true)...)
	}
	judgedConcurrent, callsConcurrent := admissionSeconds(t).minus(judgedBefore), webhookCallSeconds(t, admin, hook).minus(callsBefore)
	refCalls, refServed := webhookCallSeconds(t, admin, refHook).minus(refCallsBefore), refServer.calls.Load()-refServedBefore
	connections := metricValue(metricsOf(E.ring.url), "warrant_http_open_connections")
	baseSeq = burst(excluded, false)
	ringSeq = burst(through, false)
	p := func(l []time.Duration, q int) time.Duration {
		sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
		return l[len(l)*q/100]
	}
	fmt.Printf("RING LATENCY (Deployment deletes by %s, client-go; baseline: namespace %s, which the shipped selectors leave out)\n", sa, excluded)
	for _, row := range []struct {
		what       string
		base, ring []time.Duration
	}{{fmt.Sprintf("%d concurrent, %d rounds", n, 2*concurrentCycles), base, ring}, {fmt.Sprintf("%d sequential", n), baseSeq, ringSeq}} {
		fmt.Printf("  %-24s baseline p50 %9s p99 %9s | through %s p50 %9s p99 %9s | added p50 %9s p99 %9s\n",
			row.what, p(row.base, 50), p(row.base, 99), hook, p(row.ring, 50), p(row.ring, 99),
			p(row.ring, 50)-p(row.base, 50), p(row.ring, 99)-p(row.base, 99))
	}
	fmt.Printf("  %-24s through the reference webhook (Go net/http, decodes and allows) p50 %9s p99 %9s | added p50 %9s p99 %9s | warrant over it: p50 %9s p99 %9s; kube-apiserver's time per call to it: mean %s over %d calls\n",
		fmt.Sprintf("%d concurrent, %d rounds", n, 2*concurrentCycles), p(ref, 50), p(ref, 99), p(ref, 50)-p(base, 50), p(ref, 99)-p(base, 99),
		p(ring, 50)-p(ref, 50), p(ring, 99)-p(ref, 99), refCalls.mean(), refCalls.count)
	if refServed < int64(2*concurrentCycles*n) {
		t.Fatalf("the reference webhook served %d calls during %d concurrent deletes through it", refServed, 2*concurrentCycles*n)
	}
	// Where the added time goes during the concurrent bursts: kube-apiserver's own time per call
	// to the webhook (its admission client, the connection, warrant) against warrant's time
	// inside the request, and the connections kube-apiserver keeps open to warrant.
	fmt.Printf("  concurrent bursts: kube-apiserver's time per call to %s (apiserver_admission_webhook_admission_duration_seconds): mean %s over %d calls; warrant's own time per DELETE (warrant_admission_duration_seconds): mean %s over %d; connections open to warrant-admission: %.0f\n",
		hook, callsConcurrent.mean(), callsConcurrent.count, judgedConcurrent.mean(), judgedConcurrent.count, connections)
	perDelete := time.Duration(burstCPU / float64(max(1, judgedConcurrent.count)) * float64(time.Second))
	whileDeleting := time.Duration(deletingCPU / float64(max(1, judgedConcurrent.count)) * float64(time.Second))
	fmt.Printf("  warrant-admission's CPU (user+system, /proc) per DELETE: %s over its concurrent bursts (their creates included: its cluster cache decodes their watch events), %s while the deletes ran, so %s of CPU for a burst of %d\n",
		perDelete, whileDeleting, whileDeleting*n, n)
	total := (2*concurrentCycles + 1) * n // deletes through the ring: the concurrent rounds and one sequential
	judged := admissionSeconds(t).minus(judgedBefore)
	fmt.Printf("  warrant's own time per DELETE (warrant_admission_duration_seconds): mean %s over %d requests\n",
		judged.mean(), judged.count)
	if callsConcurrent.count < 2*concurrentCycles*n {
		t.Fatalf("kube-apiserver counted %d calls to %s during %d concurrent deletes through it", callsConcurrent.count, hook, 2*concurrentCycles*n)
	}

	// warrant-admission judged every delete in ring-ci (ALLOW: a trusted principal) and none in
	// the excluded namespace; kube-apiserver's audit carries the webhook's code on each.
	deadline := time.Now().Add(5 * time.Second)
	var admitted, excludedSeen int
	for {
		admitted, excludedSeen = 0, 0
		for _, r := range readRecords[admissionRecord](mw) {
			if r.ResourceAttributes == nil || r.User != sa {
				continue
			}
			switch r.ResourceAttributes.Namespace {
			case through:
				if g := r.guard(t); r.Allowed && g != nil && g.Code == "ALLOW" {
					admitted++
				}
			case excluded:
				excludedSeen++
			}
		}
		if admitted >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if admitted != total || excludedSeen != 0 {
		t.Fatalf("warrant-admission admitted %d of %d deletes in %s (ALLOW) and saw %d in %s", admitted, total, through, excludedSeen, excluded)
	}
	// Each deleted object counted once: a successful delete's event (a retried or repeated
	// delete of the same object answers 404 and is not one of the measured deletes).
	annotatedNames, plainNames := map[string]bool{}, map[string]bool{}
	for _, ev := range readRecords[apiEvent](ma) {
		if ev.Stage != "ResponseComplete" || ev.Verb != "delete" || ev.ObjectRef == nil || ev.ObjectRef.Resource != "deployments" {
			continue
		}
		if ev.ResponseStatus != nil && ev.ResponseStatus.Code >= 300 {
			continue
		}
		switch ann := ev.warrantAnnotations(); ev.ObjectRef.Namespace {
		case through:
			if ann[hook]["code"] == "ALLOW" {
				annotatedNames[ev.ObjectRef.Name] = true
			}
		case excluded:
			if len(ann) == 0 {
				plainNames[ev.ObjectRef.Name] = true
			}
		}
	}
	annotated, plain := len(annotatedNames), len(plainNames)
	if annotated != total || plain != total {
		t.Fatalf("kube-apiserver audit: %d of %d deletes in %s carry %s/code=ALLOW, %d of %d in %s carry no warrant annotation", annotated, total, through, hook, plain, total, excluded)
	}
}

// warrant-admission stopped: the shipped failurePolicy Fail refuses deletions in protected scope
// (a labelled object, an object in a labelled namespace); unprotected objects (failurePolicy
// Ignore, recorded by kube-apiserver as failed open) and namespaces the selectors leave out are
// deleted. Restarted, it judges again.
func TestRingStoppedFailurePolicy(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	labelledNamespace(t, a, "ring-shop", nil)
	labelledNamespace(t, a, "ring-std", map[string]string{protectionLabel: "standard"})
	labelledNamespace(t, a, "ring-loose", nil)
	labelledNamespace(t, a, "warrant-system", nil)
	c := sre(t, a, nil)
	critical := map[string]string{protectionLabel: "critical"}
	objects := []struct {
		ns, name string
		labels   map[string]string
	}{{"ring-shop", "vault", critical}, {"ring-std", "batch", nil}, {"ring-loose", "scratch", nil}, {"warrant-system", "helper", nil}}
	// Which shipped webhook judges each, and whether a failed call refuses (failurePolicy Fail).
	type judge struct {
		hook string
		fail bool
	}
	hooks := map[string]judge{}
	for _, o := range objects {
		workload{ns: o.ns, name: o.name, labels: o.labels}.build(t, a)
		h := expectedHook(t, a, "DELETE", "apps", "deployments", o.ns, o.labels)
		if h == "" {
			hooks[o.name] = judge{}
			continue
		}
		fp := E.ring.webhook(h).FailurePolicy
		hooks[o.name] = judge{h, fp == nil || *fp == admregv1.Fail}
	}
	// The scenario needs protected scope with Fail, an unprotected object with Ignore, and an
	// excluded namespace.
	if want := map[string]bool{"vault": true, "batch": true, "scratch": false}; !hooks["vault"].fail || !hooks["batch"].fail ||
		hooks["scratch"].hook == "" || hooks["scratch"].fail || hooks["helper"].hook != "" {
		t.Fatalf("the shipped failure policies do not split as the scenario expects (Fail: %v, helper excluded): %+v", want, hooks)
	}

	E.ring.admission.stop(10 * time.Second)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = E.startAdmission()
		}
	})
	ma := markLog(E.ring.apiAudit)
	for _, o := range objects[:2] {
		err := c.AppsV1().Deployments(o.ns).Delete(ctx(t), o.name, metav1.DeleteOptions{})
		if !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), fmt.Sprintf("failed calling webhook %q", hooks[o.name].hook)) ||
			!strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("warrant-admission down, %s/%s in protected scope: want refused (failurePolicy Fail), got %v", o.ns, o.name, err)
		}
	}
	for _, o := range objects[2:] {
		if err := c.AppsV1().Deployments(o.ns).Delete(ctx(t), o.name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("warrant-admission down, %s/%s outside protected scope: want deleted, got %v", o.ns, o.name, err)
		}
	}
	if got := deploymentNames(t, a, "ring-shop"); !containsString(got, "vault") {
		t.Fatalf("vault must survive: %v", got)
	}
	ev := waitFor(t, ma, "the failed-open delete", func(e apiEvent) bool { return e.is("delete", "deployments", "ring-loose", "scratch") })
	failedOpen := false
	for k, v := range ev.Annotations {
		failedOpen = failedOpen || (strings.HasPrefix(k, "failed-open.validating.webhook.admission.k8s.io/") && v == hooks["scratch"].hook)
	}
	if !failedOpen {
		t.Fatalf("kube-apiserver must record the failed-open webhook call: %v", ev.Annotations)
	}

	// Restarted: judged again (the cache lists afresh; readyz waits for it).
	if err := E.startAdmission(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	mw := markLog(E.ring.audit)
	err := c.AppsV1().Deployments("ring-shop").Delete(ctx(t), "vault", metav1.DeleteOptions{})
	wantForbidden(t, err, fmt.Sprintf("admission webhook %q denied the request", hooks["vault"].hook), "[MISSING_TICKET]")
	waitFor(t, mw, "vault after the restart", func(r admissionRecord) bool { return r.is("DELETE", "ring-shop", "vault") && r.Denied })
}

// histogramTotal is the sum and count of a histogram's observations.
type histogramTotal struct {
	sum   float64
	count int
}

func (h histogramTotal) minus(o histogramTotal) histogramTotal {
	return histogramTotal{h.sum - o.sum, h.count - o.count}
}

func (h histogramTotal) mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.count) * float64(time.Second))
}

// admissionSeconds adds up warrant-admission's warrant_admission_duration_seconds for DELETEs,
// over every outcome.
// concurrentCycles is how many A B B A cycles of concurrent bursts the latency test runs.
const concurrentCycles = 2

// webhookCallSeconds is kube-apiserver's own histogram of its calls to one validating webhook
// for DELETE (apiserver_admission_webhook_admission_duration_seconds, read from its /metrics):
// the time its admission client waited for each answer.
func webhookCallSeconds(t *testing.T, admin *kubernetes.Clientset, hook string) histogramTotal {
	t.Helper()
	raw, err := admin.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx(t))
	if err != nil {
		t.Fatalf("kube-apiserver /metrics: %v", err)
	}
	return histogramOf(t, string(raw), "apiserver_admission_webhook_admission_duration_seconds",
		`name="`+hook+`"`, `operation="DELETE"`)
}

// histogramOf sums the _sum and _count series of histogram `family` in a Prometheus text page
// over the series whose labels contain every one of `labels`.
func histogramOf(t *testing.T, page, family string, labels ...string) histogramTotal {
	t.Helper()
	var h histogramTotal
	for _, l := range strings.Split(page, "\n") {
		name, rest, ok := strings.Cut(l, "{")
		have, value, ok2 := strings.Cut(rest, "} ")
		if !ok || !ok2 || (name != family+"_sum" && name != family+"_count") {
			continue
		}
		matches := true
		for _, want := range labels {
			matches = matches && strings.Contains(have, want)
		}
		if !matches {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			t.Fatalf("metric line %q: %v", l, err)
		}
		if name == family+"_sum" {
			h.sum += v
		} else {
			h.count += int(v)
		}
	}
	return h
}

// metricValue is the value of an unlabelled metric in a Prometheus text page (0 when absent).
func metricValue(page, name string) float64 {
	for _, l := range strings.Split(page, "\n") {
		if rest, ok := strings.CutPrefix(l, name+" "); ok {
			v, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return v
		}
	}
	return 0
}

func admissionSeconds(t *testing.T) histogramTotal {
	t.Helper()
	return histogramOf(t, metricsOf(E.ring.url), "warrant_admission_duration_seconds", `operation="DELETE"`)
}

// parallel runs f on every item, at most width at a time, and fails the test with the first
// error (and how many failed).
func parallel(t *testing.T, width int, items []string, f func(string) error) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	sem := make(chan struct{}, width)
	for _, it := range items {
		wg.Add(1)
		go func(it string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := f(it); err != nil {
				mu.Lock()
				failures = append(failures, it+": "+err.Error())
				mu.Unlock()
			}
		}(it)
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of %d failed, first: %s", len(failures), len(items), failures[0])
	}
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
