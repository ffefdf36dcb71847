package apiserver

// Pod security's namespace range allocator through a real kube-apiserver: warrant-admission
// restarted with --pod-security=Enforce (the allocator on by default, on the leader), the CRD,
// the default constraints and the RBAC that deploy/pod-security.yaml ships (warrant may patch
// namespaces; restricted-v2 for system:authenticated). Namespaces created with no annotations
// get non-overlapping uid blocks, the same supplemental groups and distinct MCS labels; a
// plain pod in one of them is defaulted into restricted-v2 with the first uid of its block;
// after a restart of warrant the next namespace still gets a block nobody has.

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	uidRangeAnnotation = "openshift.io/sa.scc.uid-range"
	groupsAnnotation   = "openshift.io/sa.scc.supplemental-groups"
	mcsAnnotation      = "openshift.io/sa.scc.mcs"
	rangesLease        = "warrant-scc-uid-ranges"
)

// installPodSecurity applies the CRD, the default constraints (restricted-v2 for
// system:authenticated and anyuid for alice by their groups and users) and the ClusterRoles
// and ClusterRoleBindings of deploy/pod-security.yaml, restarts warrant-admission with
// --pod-security=Enforce and the extra flags, and sends it the pods of namespaces (the
// mutating and the validating webhook). Everything is undone at the end of the test.
func installPodSecurity(t *testing.T, namespaces []string, extra ...string) *kubernetes.Clientset {
	t.Helper()
	setWarrantConfig(t, cfgStandAside)
	admin := client(t, E.scenarios, "admin")
	files := filepath.Join(repoRoot, "charts", "warrant", "files", "pod-security")
	crd := filepath.Join(files, "crd.yaml")
	if out, err := kubectl(t, E.scenarios, "apply", "-f", crd); err != nil {
		t.Fatalf("applying the CRD: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = kubectl(t, E.scenarios, "delete", "-f", crd, "--wait=true") })
	if out, err := kubectl(t, E.scenarios, "wait", "--for", "condition=established", "--timeout=30s",
		"crd/securitycontextconstraints.security.openshift.io"); err != nil {
		t.Fatalf("the CRD is not established: %v\n%s", err, out)
	}
	defaults, err := os.ReadFile(filepath.Join(files, "defaults.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	granted := grantIn(string(defaults), "restricted-v2", "groups: [system:authenticated]")
	granted = grantIn(granted, "anyuid", "users: [alice]")
	grantedFile := filepath.Join(t.TempDir(), "defaults.yaml")
	writeFile(t, grantedFile, granted)
	if out, err := kubectl(t, E.scenarios, "apply", "-f", grantedFile); err != nil {
		t.Fatalf("applying the defaults: %v\n%s", err, out)
	}

	// The shipped RBAC, as deploy/pod-security.yaml has it (the webhooks there need a CA bundle;
	// this test makes its own).
	shipped, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "pod-security.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rbac []string
	for _, doc := range strings.Split(string(shipped), "\n---\n") {
		if strings.Contains(doc, "\nkind: ClusterRole\n") || strings.Contains(doc, "\nkind: ClusterRoleBinding\n") ||
			strings.HasPrefix(doc, "kind: ClusterRole") {
			rbac = append(rbac, doc)
		}
	}
	if len(rbac) < 3 {
		t.Fatalf("deploy/pod-security.yaml has %d ClusterRoles and bindings", len(rbac))
	}
	rbacFile := filepath.Join(t.TempDir(), "rbac.yaml")
	writeFile(t, rbacFile, strings.Join(rbac, "\n---\n"))
	if out, err := kubectl(t, E.scenarios, "apply", "-f", rbacFile); err != nil {
		t.Fatalf("applying the shipped RBAC: %v\n%s", err, out)
	}
	t.Cleanup(func() { _, _ = kubectl(t, E.scenarios, "delete", "-f", rbacFile) })

	plain := E.ring.args
	E.ring.admission.stop(10 * time.Second)
	E.ring.args = append(append(append([]string{}, plain...), "--pod-security=Enforce"), extra...)
	if err := E.startAdmission(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		E.ring.admission.stop(10 * time.Second)
		E.ring.args = plain
		if err := E.startAdmission(); err != nil {
			t.Errorf("restarting warrant-admission: %v", err)
		}
	})

	c := ctx(t)
	fail := admregv1.Fail
	none := admregv1.SideEffectClassNone
	timeout := int32(10)
	selector := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: namespaces}}}
	rule := func(ops ...admregv1.OperationType) []admregv1.RuleWithOperations {
		return []admregv1.RuleWithOperations{{Operations: ops, Rule: admregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}
	}
	url := func(path string) admregv1.WebhookClientConfig {
		u := E.ring.url + path
		caBytes, _ := base64.StdEncoding.DecodeString(base64.StdEncoding.EncodeToString(E.pki.caPEM))
		return admregv1.WebhookClientConfig{URL: &u, CABundle: caBytes}
	}
	name := "warrant-pod-security-" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-"))
	if len(name) > 63 {
		name = name[:63]
	}
	mutating := &admregv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admregv1.MutatingWebhook{{Name: "pods.pod-security.warrant.dev", ClientConfig: url("/mutate"), Rules: rule(admregv1.Create),
			FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, NamespaceSelector: selector, AdmissionReviewVersions: []string{"v1"}}}}
	validating := &admregv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admregv1.ValidatingWebhook{{Name: "pods.pod-security.warrant.dev", ClientConfig: url("/admit"), Rules: rule(admregv1.Create, admregv1.Update),
			FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, NamespaceSelector: selector, AdmissionReviewVersions: []string{"v1"}}}}
	if _, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(c, mutating, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx(t), mutating.Name, metav1.DeleteOptions{})
	})
	if _, err := admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(c, validating, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx(t), validating.Name, metav1.DeleteOptions{})
	})
	return admin
}

// createPodWhenJudged creates pod, retrying while warrant says it cannot judge yet (its watches
// list within seconds of a restart, and a namespace's ranges reach its cache within
// milliseconds of the allocator's write).
func createPodWhenJudged(t *testing.T, c *kubernetes.Clientset, ns string, pod *corev1.Pod) (*corev1.Pod, error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		created, err := c.CoreV1().Pods(ns).Create(ctx(t), pod, metav1.CreateOptions{})
		waiting := err != nil && (strings.Contains(err.Error(), "pod security cannot judge the pod") ||
			strings.Contains(err.Error(), "unable to find annotation"))
		if !waiting || time.Now().After(deadline) {
			return created, err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

type idBlock struct{ min, max int64 }

func parseIDBlock(t *testing.T, text string) idBlock {
	t.Helper()
	var start, size int64
	if _, err := fmt.Sscanf(text, "%d/%d", &start, &size); err != nil || size <= 0 {
		t.Fatalf("block %q is not <start>/<size>: %v", text, err)
	}
	return idBlock{start, start + size - 1}
}

// allocated waits until namespace ns has all three annotations and returns them.
func allocated(t *testing.T, admin *kubernetes.Clientset, ns string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := admin.CoreV1().Namespaces().Get(ctx(t), ns, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a := got.Annotations
		if a[uidRangeAnnotation] != "" && a[groupsAnnotation] != "" && a[mcsAnnotation] != "" {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("namespace %s got no ranges within 30s: %v\nwarrant: %s", ns, a, E.ring.admission.tail(30))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestPodSecurityAllocatesNamespaceRangesThroughTheAPIServer(t *testing.T) {
	fresh := []string{"scc-fresh-a", "scc-fresh-b", "scc-fresh-c", "scc-fresh-d"}
	admin := installPodSecurity(t, fresh)
	c := ctx(t)
	t.Cleanup(func() {
		for _, ns := range fresh {
			_ = admin.CoreV1().Namespaces().Delete(ctx(t), ns, metav1.DeleteOptions{})
		}
		_ = admin.CoordinationV1().Leases("warrant-system").Delete(ctx(t), rangesLease, metav1.DeleteOptions{})
	})
	for _, ns := range fresh[:3] {
		if _, err := admin.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	blocks := map[string]idBlock{}
	labels := map[string]string{}
	for _, ns := range fresh[:3] {
		a := allocated(t, admin, ns)
		if a[uidRangeAnnotation] != a[groupsAnnotation] {
			t.Errorf("%s: supplemental groups %q differ from the uid range %q", ns, a[groupsAnnotation], a[uidRangeAnnotation])
		}
		b := parseIDBlock(t, a[uidRangeAnnotation])
		if b.max-b.min+1 != 10000 || b.min < 1000000000 || b.max > 1999999999 || (b.min-1000000000)%10000 != 0 {
			t.Errorf("%s: block %v is not one of OpenShift's default 10000-id blocks", ns, a[uidRangeAnnotation])
		}
		if !strings.HasPrefix(a[mcsAnnotation], "s0:c") {
			t.Errorf("%s: mcs %q", ns, a[mcsAnnotation])
		}
		blocks[ns] = b
		labels[ns] = a[mcsAnnotation]
	}
	assertNoOverlap(t, admin)
	seenLabels := map[string]string{}
	for ns, l := range labels {
		if other, dup := seenLabels[l]; dup {
			t.Errorf("namespaces %s and %s share the MCS label %s", ns, other, l)
		}
		seenLabels[l] = ns
	}

	// A direct create by bob (restricted-v2 by his group, no anyuid), no hand-written
	// annotations: defaulted into restricted-v2 with the first uid of the allocated block.
	bob := impersonating(t, E.scenarios, "bob", "system:authenticated")
	// bob may create pods there, and nothing more (a broader role would grant `use` too).
	if out, err := kubectl(t, E.scenarios, "-n", fresh[0], "create", "role", "pod-creator", "--verb=create,get", "--resource=pods"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if out, err := kubectl(t, E.scenarios, "-n", fresh[0], "create", "rolebinding", "bob-pods", "--role=pod-creator", "--user=bob"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := admin.CoreV1().ServiceAccounts(fresh[0]).Create(c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
	created, err := createPodWhenJudged(t, bob, fresh[0], pod)
	if err != nil {
		t.Fatalf("bob's plain pod in a fresh namespace: %v", err)
	}
	if got := created.Annotations["openshift.io/scc"]; got != "restricted-v2" {
		t.Errorf("bob's pod was admitted with %q, want restricted-v2", got)
	}
	sc := created.Spec.Containers[0].SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != blocks[fresh[0]].min {
		t.Errorf("bob's pod runs as %v, want the allocated block's first uid %d", sc, blocks[fresh[0]].min)
	}
	if ps := created.Spec.SecurityContext; ps == nil || ps.SELinuxOptions == nil || ps.SELinuxOptions.Level != labels[fresh[0]] {
		t.Errorf("bob's pod SELinux options: %v, want level %s", ps, labels[fresh[0]])
	}

	// The taken blocks are in the cluster: after a restart the next namespace gets a new block.
	lease, err := admin.CoordinationV1().Leases("warrant-system").Get(c, rangesLease, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Lease of taken blocks: %v", err)
	}
	if got := lease.Annotations["warrant.dev/scc-uid-range"]; got != "1000000000-1999999999/10000" {
		t.Errorf("the Lease records the range %q", got)
	}
	E.ring.admission.stop(10 * time.Second)
	if err := E.startAdmission(); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fresh[3]}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	after := parseIDBlock(t, allocated(t, admin, fresh[3])[uidRangeAnnotation])
	for ns, b := range blocks {
		if after.min <= b.max && b.min <= after.max {
			t.Errorf("after a restart %s got %v, which overlaps %s's %v", fresh[3], after, ns, b)
		}
	}
	assertNoOverlap(t, admin)
	if m := metricsOf(E.ring.url); !strings.Contains(m, "warrant_pod_security_namespace_allocations_total ") {
		t.Errorf("no allocation counter:\n%s", grepLines(m, "warrant_pod_security"))
	}
}

// assertNoOverlap checks that no two namespaces of the cluster have overlapping uid ranges.
func assertNoOverlap(t *testing.T, admin *kubernetes.Clientset) {
	t.Helper()
	list, err := admin.CoreV1().Namespaces().List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type owned struct {
		ns string
		b  idBlock
	}
	var all []owned
	for _, n := range list.Items {
		if v := n.Annotations[uidRangeAnnotation]; v != "" && strings.Contains(v, "/") {
			all = append(all, owned{n.Name, parseIDBlock(t, v)})
		}
	}
	for i := range all {
		for j := i + 1; j < len(all); j++ {
			a, b := all[i], all[j]
			if a.b.min <= b.b.max && b.b.min <= a.b.max {
				t.Errorf("namespaces %s %v and %s %v overlap", a.ns, a.b, b.ns, b.b)
			}
		}
	}
	if len(all) < 3 {
		t.Errorf("only %d namespaces have ranges", len(all))
	}
}
