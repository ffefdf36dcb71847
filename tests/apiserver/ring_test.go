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

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// ringTickets: CHG-RING-1 approves changes in ring-shop, CHG-RING-2 the deletion of namespace
// ring-hold (two approvers each, as critical needs).
const ringTickets = `tickets:
  - id: CHG-RING-1
    status: Approved
    approvers: [carol, dave]
    expires: "2030-01-01T00:00:00Z"
    scope: {namespaces: [ring-shop]}
  - id: CHG-RING-2
    status: Approved
    approvers: [carol, dave]
    expires: "2030-01-01T00:00:00Z"
    scope: {namespaces: [ring-hold], resources: [namespaces]}
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
	// Admission records only: the buffer ring's controller (still running from an earlier test)
	// writes its own records to the same log.
	for _, r := range readRecords[admissionRecord](mw) {
		if r.Stage == "admission" && r.User != ringUser {
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
