package apiserver

// The validation ring through a real kube-apiserver: the shipped ValidatingWebhookConfiguration
// sends deletions (and updates of labelled objects) to warrant-admission's /admit, which judges
// them from the object and its metadata cache of the cluster. Every scenario is asserted on what
// the client sees, on warrant-admission's audit record (stage admission, code, risk, reasons,
// impact) and on kube-apiserver's own audit event (the webhook's auditAnnotations, as
// `<webhook name>/<key>`).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
	"k8s.io/client-go/rest"
)

// ringTickets: CHG-RING-1 approves changes in ring-shop (two approvers, as critical needs).
const ringTickets = `tickets:
  - id: CHG-RING-1
    status: Approved
    approvers: [carol, dave]
    expires: "2030-01-01T00:00:00Z"
    scope: {namespaces: [ring-shop]}
`

// ringConfig is the chain both warrants serve in these scenarios: one DeletionGuard reading the
// protection label and the ticket annotation on objects. The CI identity is trusted up to
// standard.
func ringConfig(mode string) string {
	return fmt.Sprintf(`apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: DeletionGuard
    name: deletion-guard
    failurePolicy: Deny
    guard:
      mode: %s
      timeZone: UTC
      businessHours: {days: [Mon, Tue, Wed, Thu, Fri, Sat, Sun], start: %q, end: %q}
      protectionLabel: %s
      ticketAnnotation: %s
      trusted:
        - serviceAccounts: [ring-ci/deployer]
          maxLevel: standard
      tickets:
        file: ring-tickets.yaml
        extraKey: warrant.dev/ticket
        requiredFor: [critical]
        approvals: {critical: 2, high: 1, standard: 0}
`, mode, ringDayStart, ringDayEnd, protectionLabel, ticketAnnotation)
}

// setRing serves the ring's chain in mode from both warrants (and waits for warrant-admission's
// cache).
func setRing(t *testing.T, mode string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(filepath.Dir(E.warrantCfg), "ring-tickets.yaml"), []byte(ringTickets), 0o600); err != nil {
		t.Fatal(err)
	}
	setWarrantConfig(t, ringConfig(mode))
}

const ringUser = "ring-sre"

// sre is a client acting as ring-sre (cluster-admin through RBAC; its requests pass warrant's
// authorization ring, which has no name-based protection here, and then the validation ring).
// Warnings the API server returns are collected into *warnings when it is not nil.
func sre(t *testing.T, a *apiserver, warnings *[]string) *kubernetes.Clientset {
	t.Helper()
	bindClusterAdmin(t, a, "", "ring-sre-admin", rbacv1.Subject{Kind: "User", APIGroup: "rbac.authorization.k8s.io", Name: ringUser})
	cfg := restConfig(a, "tok-admin")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: ringUser}
	if warnings != nil {
		cfg.WarningHandler = collect{warnings, &sync.Mutex{}}
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "ring-sre's RBAC binding", func() error {
		_, err := c.AppsV1().Deployments("default").List(ctx(t), metav1.ListOptions{Limit: 1})
		return err
	})
	return c
}

type collect struct {
	into *[]string
	mu   *sync.Mutex
}

func (c collect) HandleWarningHeader(_ int, _ string, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.into = append(*c.into, text)
}

// kubectlAsSRE runs kubectl as admin impersonating ring-sre.
func kubectlAsSRE(t *testing.T, a *apiserver, args ...string) (string, error) {
	t.Helper()
	return kubectl(t, a, append(args, "--as", ringUser)...)
}

// ringSees dry-runs the deletion of a Deployment until warrant-admission's assessment satisfies
// ok: its cache learns of new pods, claims and Ingresses through watches, shortly after they
// are created. A dry run changes nothing (sideEffects: NoneOnDryRun sends it to warrant).
func ringSees(t *testing.T, c *kubernetes.Clientset, ns, name string, ok func(*guardReport) bool) {
	t.Helper()
	dry := metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
	deadline := time.Now().Add(15 * time.Second)
	var last *guardReport
	for time.Now().Before(deadline) {
		m := markLog(E.ring.audit)
		_ = c.AppsV1().Deployments(ns).Delete(ctx(t), name, dry)
		for until := time.Now().Add(2 * time.Second); time.Now().Before(until); time.Sleep(20 * time.Millisecond) {
			recs := readRecords[admissionRecord](m)
			if i := lastIndex(recs, func(r admissionRecord) bool { return r.isAny("DELETE", ns, name) && r.Admission.DryRun }); i >= 0 {
				last = recs[i].guard(t)
				break
			}
		}
		if last != nil && ok(last) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("warrant-admission's view of %s/%s did not converge in 15s; last assessment: %+v", ns, name, last)
}

func lastIndex[T any](xs []T, pred func(T) bool) int {
	for i := len(xs) - 1; i >= 0; i-- {
		if pred(xs[i]) {
			return i
		}
	}
	return -1
}

// wantEvent checks kube-apiserver's audit event for a request the validation ring judged: the
// response code, and the webhook's annotations carrying warrant's assessment (code, risk level,
// risk score and the report, which is the assessment warrant audited).
func wantEvent(t *testing.T, ev apiEvent, code int, hook string, g *guardReport) {
	t.Helper()
	if ev.ResponseStatus == nil || ev.ResponseStatus.Code != code {
		t.Fatalf("kube-apiserver audit event %s: response %+v, want %d", ev.AuditID, ev.ResponseStatus, code)
	}
	ann := ev.warrantAnnotations()[hook]
	if ann == nil {
		t.Fatalf("kube-apiserver audit event %s has no annotations of webhook %s: %v", ev.AuditID, hook, ev.Annotations)
	}
	if ann["code"] != g.Code || ann["risk-level"] != g.RiskLevel || ann["risk-score"] != strconv.Itoa(g.RiskScore) {
		t.Fatalf("kube-apiserver audit annotations of %s: %v; warrant audited %s %s %d", hook, ann, g.Code, g.RiskLevel, g.RiskScore)
	}
	var report guardReport
	if err := json.Unmarshal([]byte(ann["report"]), &report); err != nil {
		t.Fatalf("%s/report is not the JSON report: %v: %q", hook, err, ann["report"])
	}
	if !reflect.DeepEqual(&report, g) {
		t.Fatalf("%s/report in kube-apiserver's audit differs from warrant's audit:\n%+v\n%+v", hook, report, *g)
	}
}

func deploymentNames(t *testing.T, a *apiserver, ns string) []string {
	t.Helper()
	l, err := client(t, a, "admin").AppsV1().Deployments(ns).List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range l.Items {
		names = append(names, d.Name)
	}
	sort.Strings(names)
	return names
}

// ---- scenarios --------------------------------------------------------------------------------

// A critical Deployment backing 25 running pods, a Service, an Ingress and a bound PVC: deleted
// without a ticket -> refused MISSING_TICKET at the risk the model gives; with an approved ticket
// annotated on it -> deleted, ALLOW_WITH_COOLDOWN.
func TestRingCriticalDeploymentNeedsTicket(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	const ns, name = "ring-shop", "checkout"
	labelledNamespace(t, a, ns, nil)
	c := sre(t, a, nil)
	w := workload{ns: ns, name: name, labels: map[string]string{protectionLabel: "critical"},
		pods: 25, claim: "checkout-data", service: true, ingress: true}
	w.build(t, a)
	hook := expectedHook(t, a, "DELETE", "apps", "deployments", ns, w.labels)
	if hook == "" {
		t.Fatalf("no shipped webhook covers the deletion of a labelled Deployment")
	}
	ringSees(t, c, ns, name, func(g *guardReport) bool {
		return g.Impact != nil && g.Impact.RunningPods == 25 && len(g.Impact.Services) == 1 &&
			len(g.Impact.Ingresses) == 1 && len(g.Impact.BoundVolumes) == 1
	})
	model := func(at time.Time) expected {
		return usersModel.assess(exposure{
			object: side{"critical", protectionLabel + "=critical"},
			pods:   25, ingresses: []string{ns + "/" + name}, ingressPods: 25, volumes: 1,
			inBusiness: within(at, ringDayStart, ringDayEnd),
		})
	}

	// No ticket: refused.
	mw, ma := markLog(E.ring.audit), markLog(E.ring.apiAudit)
	err := c.AppsV1().Deployments(ns).Delete(ctx(t), name, metav1.DeleteOptions{})
	rec := waitFor(t, mw, "the refused delete", func(r admissionRecord) bool { return r.is("DELETE", ns, name) })
	want := model(rec.Time)
	wantForbidden(t, err, fmt.Sprintf("admission webhook %q denied the request", hook), "[MISSING_TICKET]",
		fmt.Sprintf("risk=%s score=%d", want.level, want.score))
	if want.level != "CRITICAL" {
		t.Fatalf("the model grades this deletion %s %d: the scenario needs CRITICAL", want.level, want.score)
	}
	g := rec.guard(t)
	if !rec.Denied || rec.Allowed || g == nil || g.Code != "MISSING_TICKET" || g.Protection != "critical" || rec.User != ringUser {
		t.Fatalf("warrant-admission's record: %+v / %+v", rec, g)
	}
	want.check(t, g)
	wantImpact(t, g, 25, []string{ns + "/" + name}, []string{ns + "/" + name}, []string{ns + "/checkout-data"}, want.qps)
	ev := waitFor(t, ma, "the refused delete", func(e apiEvent) bool { return e.is("delete", "deployments", ns, name) })
	wantEvent(t, ev, 403, hook, g)
	if ev.ImpersonatedUser == nil || ev.ImpersonatedUser.Username != ringUser {
		t.Fatalf("kube-apiserver audit event user: %+v / %+v", ev.User, ev.ImpersonatedUser)
	}
	if _, err := client(t, a, "admin").AppsV1().Deployments(ns).Get(ctx(t), name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the refused Deployment must still exist: %v", err)
	}
	t.Logf("refused: %s", err)

	// An approved ticket annotated on the object (an update of a labelled object, which the
	// ring lets through: it lowers nothing), then kubectl delete: admitted with a cool-down.
	if out, err := kubectlAsSRE(t, a, "annotate", "deployment", name, "-n", ns, ticketAnnotation+"=CHG-RING-1"); err != nil {
		t.Fatalf("kubectl annotate: %v\n%s", err, out)
	}
	mw, ma = markLog(E.ring.audit), markLog(E.ring.apiAudit)
	out, err := kubectlAsSRE(t, a, "delete", "deployment", name, "-n", ns)
	if err != nil || !strings.Contains(out, fmt.Sprintf("deployment.apps %q deleted", name)) {
		t.Fatalf("kubectl delete with an approved ticket: %v\n%s", err, out)
	}
	rec = waitFor(t, mw, "the ticketed delete", func(r admissionRecord) bool { return r.is("DELETE", ns, name) })
	g = rec.guard(t)
	if !rec.Allowed || g == nil || g.Code != "ALLOW_WITH_COOLDOWN" || g.Ticket != "CHG-RING-1" {
		t.Fatalf("warrant-admission's record of the ticketed delete: %+v / %+v", rec, g)
	}
	model(rec.Time).check(t, g)
	ev = waitFor(t, ma, "the ticketed delete", func(e apiEvent) bool { return e.is("delete", "deployments", ns, name) })
	wantEvent(t, ev, 200, hook, g)
	if _, err := client(t, a, "admin").AppsV1().Deployments(ns).Get(ctx(t), name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("the ticketed Deployment must be gone: %v", err)
	}
}

func wantImpact(t *testing.T, g *guardReport, pods int, services, ingresses, volumes []string, qps int) {
	t.Helper()
	i := g.Impact
	if i == nil || i.RunningPods != pods || !reflect.DeepEqual(i.Services, services) || !reflect.DeepEqual(i.Ingresses, ingresses) ||
		!reflect.DeepEqual(i.BoundVolumes, volumes) || i.EstimatedQPS != qps {
		t.Fatalf("impact: %+v; want %d pods, services %v, ingresses %v, volumes %v, ~%d QPS", i, pods, services, ingresses, volumes, qps)
	}
}

// An unlabelled Deployment in a namespace labelled standard: ALLOW, with the score the model
// gives (standard +0, a few running pods, business hours).
func TestRingStandardNamespaceAllows(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	const ns, name = "ring-std", "worker"
	labelledNamespace(t, a, ns, map[string]string{protectionLabel: "standard"})
	c := sre(t, a, nil)
	workload{ns: ns, name: name, pods: 3}.build(t, a)
	hook := expectedHook(t, a, "DELETE", "apps", "deployments", ns, nil)
	if hook == "" {
		t.Fatalf("no shipped webhook covers a Deployment in a labelled namespace")
	}
	ringSees(t, c, ns, name, func(g *guardReport) bool {
		return g.Impact != nil && g.Impact.RunningPods == 3 && g.Protection == "standard"
	})
	mw, ma := markLog(E.ring.audit), markLog(E.ring.apiAudit)
	if err := c.AppsV1().Deployments(ns).Delete(ctx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete in a standard namespace: %v", err)
	}
	rec := waitFor(t, mw, "the delete", func(r admissionRecord) bool { return r.is("DELETE", ns, name) })
	g := rec.guard(t)
	if !rec.Allowed || g == nil || g.Code != "ALLOW" {
		t.Fatalf("warrant-admission's record: %+v / %+v", rec, g)
	}
	want := usersModel.assess(exposure{namespace: side{"standard", "namespace " + ns}, pods: 3,
		inBusiness: within(rec.Time, ringDayStart, ringDayEnd)})
	want.check(t, g)
	ev := waitFor(t, ma, "the delete", func(e apiEvent) bool { return e.is("delete", "deployments", ns, name) })
	wantEvent(t, ev, 200, hook, g)
	t.Logf("ALLOW risk=%s score=%d (%s)", g.RiskLevel, g.RiskScore, strings.Join(g.RiskReasons, ", "))
}

// The shipped matchConditions keep the control plane and warrant's own service account away
// from the validation ring: the garbage collector (kube-system, allowed by the bootstrap RBAC
// role) and warrant itself delete critical Deployments without a call to warrant.
func TestRingControlPlaneIsNotSent(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	const ns = "ring-shop"
	labelledNamespace(t, a, ns, nil)
	c := sre(t, a, nil)
	critical := map[string]string{protectionLabel: "critical"}
	bindClusterAdmin(t, a, ns, "warrant-sa-admin", rbacv1.Subject{Kind: "ServiceAccount", Name: "warrant", Namespace: "warrant-system"})
	ids := []struct {
		name, user string
		groups     []string
	}{
		{"gc-target", "system:serviceaccount:kube-system:generic-garbage-collector", []string{"system:serviceaccounts", "system:serviceaccounts:kube-system"}},
		{"warrant-target", "system:serviceaccount:warrant-system:warrant", []string{"system:serviceaccounts", "system:serviceaccounts:warrant-system"}},
	}
	for _, id := range ids {
		workload{ns: ns, name: id.name, labels: critical}.build(t, a)
	}
	if expectedHook(t, a, "DELETE", "apps", "deployments", ns, critical) == "" {
		t.Fatalf("no shipped webhook covers a labelled Deployment")
	}
	mw, ma := markLog(E.ring.audit), markLog(E.ring.apiAudit)
	for _, id := range ids {
		who := impersonating(t, a, id.user, id.groups...)
		eventually(t, 10*time.Second, id.user+" deletes "+id.name, func() error {
			return who.AppsV1().Deployments(ns).Delete(ctx(t), id.name, metav1.DeleteOptions{})
		})
	}
	// A marker that does reach warrant-admission: once its record is written, any record of the
	// deletes above would be written too.
	workload{ns: ns, name: "marker"}.build(t, a)
	if err := c.AppsV1().Deployments(ns).Delete(ctx(t), "marker", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, mw, "the marker", func(r admissionRecord) bool { return r.is("DELETE", ns, "marker") })
	for _, r := range readRecords[admissionRecord](mw) {
		if r.User != ringUser {
			t.Fatalf("warrant-admission judged a request the shipped matchConditions leave out: %+v", r)
		}
	}
	for _, id := range ids {
		ev := waitFor(t, ma, id.name, func(e apiEvent) bool {
			return e.is("delete", "deployments", ns, id.name) && e.ResponseStatus != nil && e.ResponseStatus.Code == 200
		})
		if ann := ev.warrantAnnotations(); len(ann) != 0 {
			t.Fatalf("%s: kube-apiserver recorded warrant annotations for an excluded identity: %v", id.name, ann)
		}
	}
}

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

// 200 concurrent deletes of unprotected Deployments by the CI identity (trusted up to standard):
// all admitted. The baseline is the same deletes by the same identity in a namespace the shipped
// namespaceSelector leaves out (warrant-system), so the only difference is the webhook call.
func TestRingConcurrentDeletesLatency(t *testing.T) {
	a := E.scenarios
	setRing(t, "Enforce")
	const n, through, excluded = 200, "ring-ci", "warrant-system"
	const sa = "system:serviceaccount:ring-ci:deployer"
	admin := client(t, a, "admin")
	for _, ns := range []string{through, excluded} {
		labelledNamespace(t, a, ns, nil)
		bindClusterAdmin(t, a, ns, "deployer-admin", rbacv1.Subject{Kind: "ServiceAccount", Name: "deployer", Namespace: "ring-ci"})
	}
	if h := expectedHook(t, a, "DELETE", "apps", "deployments", excluded, nil); h != "" {
		t.Fatalf("%s must be left out by the shipped selectors, but %s covers it", excluded, h)
	}
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
	burst := func(ns string, concurrent bool) []time.Duration {
		round++
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
	var base, ring, baseSeq, ringSeq []time.Duration
	base = append(base, burst(excluded, true)...)
	ring = append(ring, burst(through, true)...)
	ring = append(ring, burst(through, true)...)
	base = append(base, burst(excluded, true)...)
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
	}{{fmt.Sprintf("%d concurrent, 2 rounds", n), base, ring}, {fmt.Sprintf("%d sequential", n), baseSeq, ringSeq}} {
		fmt.Printf("  %-24s baseline p50 %9s p99 %9s | through %s p50 %9s p99 %9s | added p50 %9s p99 %9s\n",
			row.what, p(row.base, 50), p(row.base, 99), hook, p(row.ring, 50), p(row.ring, 99),
			p(row.ring, 50)-p(row.base, 50), p(row.ring, 99)-p(row.base, 99))
	}
	const total = 3 * n // deletes through the ring: two concurrent rounds and one sequential

	// warrant-admission judged every delete in ring-ci (ALLOW: a trusted principal) and none in
	// the excluded namespace; kube-apiserver's audit carries the webhook's code on each.
	deadline := time.Now().Add(5 * time.Second)
	var judged, excludedSeen int
	for {
		judged, excludedSeen = 0, 0
		for _, r := range readRecords[admissionRecord](mw) {
			if r.ResourceAttributes == nil || r.User != sa {
				continue
			}
			switch r.ResourceAttributes.Namespace {
			case through:
				if g := r.guard(t); r.Allowed && g != nil && g.Code == "ALLOW" {
					judged++
				}
			case excluded:
				excludedSeen++
			}
		}
		if judged >= total || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if judged != total || excludedSeen != 0 {
		t.Fatalf("warrant-admission admitted %d of %d deletes in %s (ALLOW) and saw %d in %s", judged, total, through, excludedSeen, excluded)
	}
	annotated, plain := 0, 0
	for _, ev := range readRecords[apiEvent](ma) {
		if ev.Stage != "ResponseComplete" || ev.Verb != "delete" || ev.ObjectRef == nil || ev.ObjectRef.Resource != "deployments" {
			continue
		}
		switch ann := ev.warrantAnnotations(); ev.ObjectRef.Namespace {
		case through:
			if ann[hook]["code"] == "ALLOW" {
				annotated++
			}
		case excluded:
			if len(ann) == 0 {
				plain++
			}
		}
	}
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
