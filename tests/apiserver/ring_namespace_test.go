package apiserver

// A Namespace's deletion deletes everything in it (the namespace controller, which the shipped
// matchConditions keep away from warrant, does it), so the validation ring judges an unlabelled
// namespace at the highest protection label on the objects it holds.

import (
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// An unlabelled namespace holding a Deployment labelled critical (no replicas, no pods, no
// Ingress, no claim): deleting the namespace without a ticket is refused MISSING_TICKET, the
// reason naming the Deployment; with an approved ticket annotated on the namespace it is
// admitted (ALLOW_WITH_COOLDOWN) and the namespace starts terminating.
func TestRingNamespaceHoldingCriticalDeploymentNeedsTicket(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	const ns, name = "ring-hold", "checkout"
	labelledNamespace(t, a, ns, nil)
	c := sre(t, a, nil)
	workload{ns: ns, name: name, labels: map[string]string{protectionLabel: "critical"}}.build(t, a)
	hook := expectedHook(t, a, "DELETE", "", "namespaces", ns, nil)
	if hook == "" {
		t.Fatalf("no shipped webhook covers the deletion of an unlabelled Namespace")
	}
	held := fmt.Sprintf("namespace holds deployments.apps/%s labelled %s=critical", name, protectionLabel)
	namespaceSeen(t, c, ns, func(g *guardReport) bool { return g.Protection == "critical" })
	model := func(at time.Time) expected {
		return usersModel.assess(exposure{object: side{"critical", held}, namespaceDeletion: true,
			inBusiness: within(at, ringDayStart, ringDayEnd)})
	}

	// No ticket: refused, naming the Deployment.
	mw, ma := markLog(E.ring.audit), markLog(E.ring.apiAudit)
	err := c.CoreV1().Namespaces().Delete(ctx(t), ns, metav1.DeleteOptions{})
	rec := waitFor(t, mw, "the refused namespace delete", func(r admissionRecord) bool { return r.is("DELETE", ns, ns) })
	want := model(rec.Time)
	wantForbidden(t, err, fmt.Sprintf("admission webhook %q denied the request", hook), "[MISSING_TICKET]", held,
		fmt.Sprintf("risk=%s score=%d", want.level, want.score))
	g := rec.guard(t)
	if !rec.Denied || g == nil || g.Code != "MISSING_TICKET" || g.Protection != "critical" {
		t.Fatalf("warrant-admission's record: %+v / %+v", rec, g)
	}
	want.check(t, g)
	wantEvent(t, waitFor(t, ma, "the refused namespace delete", func(e apiEvent) bool { return e.is("delete", "namespaces", ns, ns) }), 403, hook, g)
	admin := client(t, a, "admin")
	if n, err := admin.CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{}); err != nil || n.DeletionTimestamp != nil {
		t.Fatalf("the refused namespace must stay, not terminating: %v %+v", err, n)
	}
	if _, err := admin.AppsV1().Deployments(ns).Get(ctx(t), name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the Deployment must still exist: %v", err)
	}
	t.Logf("refused: %s", err)

	// An approved ticket annotated on the namespace (an update of an unlabelled namespace, which
	// no shipped webhook is sent), then kubectl delete: admitted with a cool-down.
	if out, err := kubectlAsSRE(t, a, "annotate", "namespace", ns, ticketAnnotation+"=CHG-RING-2"); err != nil {
		t.Fatalf("kubectl annotate: %v\n%s", err, out)
	}
	mw, ma = markLog(E.ring.audit), markLog(E.ring.apiAudit)
	if err := c.CoreV1().Namespaces().Delete(ctx(t), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("namespace delete with an approved ticket: %v", err)
	}
	rec = waitFor(t, mw, "the ticketed namespace delete", func(r admissionRecord) bool { return r.is("DELETE", ns, ns) })
	g = rec.guard(t)
	if !rec.Allowed || g == nil || g.Code != "ALLOW_WITH_COOLDOWN" || g.Ticket != "CHG-RING-2" {
		t.Fatalf("warrant-admission's record of the ticketed delete: %+v / %+v", rec, g)
	}
	model(rec.Time).check(t, g)
	wantEvent(t, waitFor(t, ma, "the ticketed namespace delete", func(e apiEvent) bool { return e.is("delete", "namespaces", ns, ns) }), 200, hook, g)
	// There is no namespace controller here: the namespace stays, terminating.
	n, err := admin.CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) || err == nil && n.DeletionTimestamp == nil {
		t.Fatalf("the ticketed namespace must be terminating or gone: %v %+v", err, n)
	}
}

// namespaceSeen dry-runs the deletion of namespace ns until warrant-admission's assessment
// satisfies ok (its cache learns of the objects inside through watches, shortly after they are
// created).
func namespaceSeen(t *testing.T, c *kubernetes.Clientset, ns string, ok func(*guardReport) bool) {
	t.Helper()
	dry := metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
	deadline := time.Now().Add(15 * time.Second)
	var last *guardReport
	for time.Now().Before(deadline) {
		m := markLog(E.ring.audit)
		_ = c.CoreV1().Namespaces().Delete(ctx(t), ns, dry)
		for until := time.Now().Add(2 * time.Second); time.Now().Before(until); time.Sleep(20 * time.Millisecond) {
			recs := readRecords[admissionRecord](m)
			if i := lastIndex(recs, func(r admissionRecord) bool { return r.isAny("DELETE", ns, ns) && r.Admission.DryRun }); i >= 0 {
				last = recs[i].guard(t)
				break
			}
		}
		if last != nil && ok(last) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("warrant-admission's view of namespace %s did not converge in 15s; last assessment: %+v", ns, last)
}
