package apiserver

// Validation-ring scenarios that sweep or rewrite: a collection delete with one critical object
// in it, the protection label removed or lowered, and Observe mode (everything admitted).

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A collection delete sweeping one critical Deployment among unlabelled ones. kube-apiserver runs
// admission for each object (k8s.io/apiserver registry/generic/registry/store.go DeleteCollection)
// with --delete-collection-workers (1 here) workers in the order the list returns (by name): a
// worker stops at the first error, which becomes the answer of the whole request. So the
// objects before the critical one are deleted, it is refused and the request fails with its
// refusal, and the objects after it are left. kubectl delete --all deletes object by object:
// everything but the critical one goes, and kubectl reports its refusal.
func TestRingCollectionDeleteSparesTheCriticalOne(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	const ns = "ring-sweep"
	labelledNamespace(t, a, ns, nil)
	c := sre(t, a, nil)
	critical := map[string]string{protectionLabel: "critical"}
	admin := client(t, a, "admin")
	for _, n := range []string{"sweep-a", "sweep-b", "sweep-c", "sweep-d", "sweep-e"} {
		var l map[string]string
		if n == "sweep-c" {
			l = critical
		}
		if _, err := admin.AppsV1().Deployments(ns).Create(ctx(t), bareDeployment(n, l), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	protectedHook := expectedHook(t, a, "DELETE", "apps", "deployments", ns, critical)
	plainHook := expectedHook(t, a, "DELETE", "apps", "deployments", ns, nil)
	if protectedHook == "" || plainHook == "" || protectedHook == plainHook {
		t.Fatalf("shipped webhooks for labelled / unlabelled Deployments: %q / %q", protectedHook, plainHook)
	}

	mw, ma := markLog(E.ring.audit), markLog(E.ring.apiAudit)
	err := c.AppsV1().Deployments(ns).DeleteCollection(ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{})
	wantForbidden(t, err, fmt.Sprintf("admission webhook %q denied the request", protectedHook), "[MISSING_TICKET]")
	if got := deploymentNames(t, a, ns); !reflect.DeepEqual(got, []string{"sweep-c", "sweep-d", "sweep-e"}) {
		t.Fatalf("after the collection delete: %v; want sweep-c refused and the two after it left", got)
	}
	refused := waitFor(t, mw, "sweep-c", func(r admissionRecord) bool { return r.is("DELETE", ns, "sweep-c") })
	if g := refused.guard(t); !refused.Denied || g == nil || g.Code != "MISSING_TICKET" {
		t.Fatalf("sweep-c: %+v / %+v", refused, g)
	}
	seen := map[string]string{}
	for _, r := range readRecords[admissionRecord](mw) {
		if r.ResourceAttributes != nil && r.ResourceAttributes.Namespace == ns {
			seen[r.ResourceAttributes.Name] = r.guard(t).Code
		}
	}
	if want := map[string]string{"sweep-a": "ALLOW", "sweep-b": "ALLOW", "sweep-c": "MISSING_TICKET"}; !reflect.DeepEqual(seen, want) {
		t.Fatalf("the ring judged %v; want %v (one admission request per object, none after the refusal)", seen, want)
	}
	ev := waitFor(t, ma, "the deletecollection", func(e apiEvent) bool { return e.is("deletecollection", "deployments", ns, "") })
	ann := ev.warrantAnnotations()
	if ev.ResponseStatus == nil || ev.ResponseStatus.Code != 403 || ann[protectedHook]["code"] != "MISSING_TICKET" || ann[plainHook]["code"] != "ALLOW" {
		t.Fatalf("kube-apiserver audit event of the deletecollection: %+v, warrant annotations %v", ev.ResponseStatus, ann)
	}

	// kubectl delete --all: one DELETE per object.
	mw = markLog(E.ring.audit)
	out, err := kubectlAsSRE(t, a, "delete", "deployments", "--all", "-n", ns)
	if err == nil || !strings.Contains(out, `deployment.apps "sweep-d" deleted`) || !strings.Contains(out, `deployment.apps "sweep-e" deleted`) ||
		!strings.Contains(out, fmt.Sprintf("admission webhook %q denied the request", protectedHook)) || !strings.Contains(out, "[MISSING_TICKET]") {
		t.Fatalf("kubectl delete deployments --all: want sweep-d and sweep-e deleted and sweep-c refused, got %v:\n%s", err, out)
	}
	if got := deploymentNames(t, a, ns); !reflect.DeepEqual(got, []string{"sweep-c"}) {
		t.Fatalf("after kubectl delete --all: %v", got)
	}
	waitFor(t, mw, "sweep-c again", func(r admissionRecord) bool { return r.is("DELETE", ns, "sweep-c") && r.Denied })
	t.Logf("kubectl delete --all:\n%s", out)
}

// Removing the protection label without a ticket is refused; so is lowering it.
func TestRingLabelRemovalNeedsTicket(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	const ns, name = "ring-shop", "ledger"
	labelledNamespace(t, a, ns, nil)
	sre(t, a, nil)
	w := workload{ns: ns, name: name, labels: map[string]string{protectionLabel: "critical"}}
	w.build(t, a)
	hook := expectedHook(t, a, "UPDATE", "apps", "deployments", ns, w.labels)
	if hook == "" {
		t.Fatalf("no shipped webhook covers updates of a labelled Deployment")
	}
	for _, tc := range []struct{ arg, to string }{
		{protectionLabel + "-", "removed"},
		{protectionLabel + "=standard", "standard"},
	} {
		mw, ma := markLog(E.ring.audit), markLog(E.ring.apiAudit)
		out, err := kubectlAsSRE(t, a, "label", "deployment", name, "-n", ns, "--overwrite", tc.arg)
		if err == nil || !strings.Contains(out, fmt.Sprintf("admission webhook %q denied the request", hook)) || !strings.Contains(out, "[MISSING_TICKET]") ||
			!strings.Contains(out, "critical -> "+tc.to) {
			t.Fatalf("kubectl label %s: want refused MISSING_TICKET (critical -> %s), got %v:\n%s", tc.arg, tc.to, err, out)
		}
		d, err := client(t, a, "admin").AppsV1().Deployments(ns).Get(ctx(t), name, metav1.GetOptions{})
		if err != nil || d.Labels[protectionLabel] != "critical" {
			t.Fatalf("the label must stay critical: %v %v", err, d.Labels)
		}
		rec := waitFor(t, mw, "the label change", func(r admissionRecord) bool { return r.is("UPDATE", ns, name) })
		g := rec.guard(t)
		if !rec.Denied || g == nil || g.Code != "MISSING_TICKET" || g.Protection != "critical" {
			t.Fatalf("warrant-admission's record: %+v / %+v", rec, g)
		}
		usersModel.assess(exposure{object: side{"critical", protectionLabel}, inBusiness: within(rec.Time, ringDayStart, ringDayEnd)}).check(t, g)
		ev := waitFor(t, ma, "the label change", func(e apiEvent) bool { return e.is("patch", "deployments", ns, name) })
		wantEvent(t, ev, 403, hook, g)
	}
}

// Observe mode: everything is admitted, warrant records OBSERVED_<CODE> and the client gets
// warrant's would-be refusal as a warning.
func TestRingObserveModeAdmitsEverything(t *testing.T) {
	a := E.scenarios
	setRing(t, "Observe")
	const ns = "ring-observe"
	labelledNamespace(t, a, ns, nil)
	var warnings []string
	c := sre(t, a, &warnings)
	critical := map[string]string{protectionLabel: "critical"}
	workload{ns: ns, name: "spare", labels: critical, pods: 2}.build(t, a)
	for _, n := range []string{"spare-2", "spare-3", "extra"} {
		var l map[string]string
		if n != "extra" {
			l = critical
		}
		workload{ns: ns, name: n, labels: l}.build(t, a)
	}
	hook := expectedHook(t, a, "DELETE", "apps", "deployments", ns, critical)
	ringSees(t, c, ns, "spare", func(g *guardReport) bool { return g.Impact != nil && g.Impact.RunningPods == 2 })

	// A critical Deployment without a ticket: deleted.
	warnings = nil
	mw, ma := markLog(E.ring.audit), markLog(E.ring.apiAudit)
	if err := c.AppsV1().Deployments(ns).Delete(ctx(t), "spare", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("Observe mode must admit: %v", err)
	}
	rec := waitFor(t, mw, "the observed delete", func(r admissionRecord) bool { return r.is("DELETE", ns, "spare") })
	g := rec.guard(t)
	if !rec.Allowed || g == nil || g.Code != "OBSERVED_MISSING_TICKET" || g.Mode != "Observe" {
		t.Fatalf("warrant-admission's record: %+v / %+v", rec, g)
	}
	usersModel.assess(exposure{object: side{"critical", protectionLabel + "=critical"}, pods: 2,
		inBusiness: within(rec.Time, ringDayStart, ringDayEnd)}).check(t, g)
	wantEvent(t, waitFor(t, ma, "the observed delete", func(e apiEvent) bool { return e.is("delete", "deployments", ns, "spare") }), 200, hook, g)
	if len(warnings) != 1 || !strings.Contains(warnings[0], "observed, not enforced") || !strings.Contains(warnings[0], "[OBSERVED_MISSING_TICKET]") {
		t.Fatalf("the client must see warrant's would-be refusal as a warning: %q", warnings)
	}

	// The protection label removed without a ticket: done.
	mw = markLog(E.ring.audit)
	if out, err := kubectlAsSRE(t, a, "label", "deployment", "spare-2", "-n", ns, protectionLabel+"-"); err != nil || !strings.Contains(out, "Warning: warrant:") {
		t.Fatalf("kubectl label in Observe mode: want admitted with a warning, got %v\n%s", err, out)
	}
	rec = waitFor(t, mw, "the observed label removal", func(r admissionRecord) bool { return r.is("UPDATE", ns, "spare-2") })
	if g := rec.guard(t); !rec.Allowed || g == nil || g.Code != "OBSERVED_MISSING_TICKET" {
		t.Fatalf("warrant-admission's record: %+v / %+v", rec, g)
	}

	// A collection delete with a critical Deployment in it: everything goes.
	mw = markLog(E.ring.audit)
	if err := c.AppsV1().Deployments(ns).DeleteCollection(ctx(t), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Fatalf("Observe mode must admit the collection delete: %v", err)
	}
	if got := deploymentNames(t, a, ns); len(got) != 0 {
		t.Fatalf("left after the collection delete: %v", got)
	}
	rec = waitFor(t, mw, "spare-3", func(r admissionRecord) bool { return r.is("DELETE", ns, "spare-3") })
	if g := rec.guard(t); !rec.Allowed || g == nil || g.Code != "OBSERVED_MISSING_TICKET" {
		t.Fatalf("spare-3: %+v / %+v", rec, g)
	}
}
