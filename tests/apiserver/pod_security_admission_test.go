package apiserver

// Pod security through a real kube-apiserver: warrant-admission restarted with
// --pod-security=Enforce, the CRD and the default constraints installed, a namespace with its
// pre-allocated ranges, and the pod webhooks (MutatingWebhookConfiguration to /mutate,
// ValidatingWebhookConfiguration to /admit) for that namespace only. Who may use what is said
// by the constraints' users and groups (restricted-v2 for system:authenticated, anyuid for
// alice) and by RBAC: carol may `use` anyuid through a Role, which warrant learns by asking the
// API server (a SubjectAccessReview). Asserted on what client-go sees and on the stored pod.

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
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// cfgStandAside has warrant's authorizer chain answer no opinion, so RBAC decides.
const cfgStandAside = `apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: AlwaysDeny
    name: nobody
    matchConditions:
      - expression: "request.user == 'nobody-at-all'"
`

func TestPodSecurityAdmitsByIdentityThroughTheAPIServer(t *testing.T) {
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

	// warrant's own account may watch the constraints.
	c := ctx(t)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "warrant-pod-security-test"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"security.openshift.io"}, Resources: []string{"securitycontextconstraints"}, Verbs: []string{"list", "watch"}}}}
	if _, err := admin.RbacV1().ClusterRoles().Create(c, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "warrant-pod-security-test"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "warrant", Namespace: "warrant-system"}}}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(c, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.RbacV1().ClusterRoleBindings().Delete(ctx(t), binding.Name, metav1.DeleteOptions{})
		_ = admin.RbacV1().ClusterRoles().Delete(ctx(t), role.Name, metav1.DeleteOptions{})
	})

	ns := "scc-team-a"
	if _, err := admin.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Annotations: map[string]string{
		"openshift.io/sa.scc.uid-range":           "1000680000/10000",
		"openshift.io/sa.scc.supplemental-groups": "1000680000/10000",
		"openshift.io/sa.scc.mcs":                 "s0:c26,c5",
	}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.CoreV1().Namespaces().Delete(ctx(t), ns, metav1.DeleteOptions{}) })
	// Pods only: a broader role in the namespace (cluster-admin, say) would grant `use` of every
	// constraint too, since a SubjectAccessReview for `use` is asked in the pod's namespace.
	podEditor := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "pod-editor", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"create", "get", "list", "delete"}}}}
	if _, err := admin.RbacV1().Roles(ns).Create(c, podEditor, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	edit := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "editors", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: podEditor.Name},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "alice"}, {Kind: "User", Name: "bob"}, {Kind: "User", Name: "carol"}}}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(c, edit, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// carol may use anyuid by RBAC (the way OpenShift grants constraints), not by its users list.
	useAnyuid := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "use-anyuid", Namespace: ns},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"security.openshift.io"}, Resources: []string{"securitycontextconstraints"}, ResourceNames: []string{"anyuid"}, Verbs: []string{"use"}}}}
	if _, err := admin.RbacV1().Roles(ns).Create(c, useAnyuid, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	useBinding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "use-anyuid", Namespace: ns},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: useAnyuid.Name},
		Subjects: []rbacv1.Subject{{Kind: "User", Name: "carol"}}}
	if _, err := admin.RbacV1().RoleBindings(ns).Create(c, useBinding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.CoreV1().ServiceAccounts(ns).Create(c, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, metav1.CreateOptions{}); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}

	// warrant-admission again, judging pods.
	plain := E.ring.args
	E.ring.admission.stop(10 * time.Second)
	E.ring.args = append(append([]string{}, plain...), "--pod-security=Enforce")
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

	ca := base64.StdEncoding.EncodeToString(E.pki.caPEM)
	fail := admregv1.Fail
	none := admregv1.SideEffectClassNone
	timeout := int32(10)
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}}
	rule := func(ops ...admregv1.OperationType) []admregv1.RuleWithOperations {
		return []admregv1.RuleWithOperations{{Operations: ops, Rule: admregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}}}}
	}
	url := func(path string) admregv1.WebhookClientConfig {
		u := E.ring.url + path
		caBytes, _ := base64.StdEncoding.DecodeString(ca)
		return admregv1.WebhookClientConfig{URL: &u, CABundle: caBytes}
	}
	mutating := &admregv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "warrant-pod-security-test"},
		Webhooks: []admregv1.MutatingWebhook{{Name: "pods.pod-security.warrant.dev", ClientConfig: url("/mutate"), Rules: rule(admregv1.Create),
			FailurePolicy: &fail, SideEffects: &none, TimeoutSeconds: &timeout, NamespaceSelector: selector, AdmissionReviewVersions: []string{"v1"}}}}
	validating := &admregv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: "warrant-pod-security-test"},
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

	pod := func(name string, sc *corev1.SecurityContext, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: annotations},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1", SecurityContext: sc}}}}
	}
	root := int64(0)
	bob := impersonating(t, E.scenarios, "bob", "system:authenticated")
	alice := impersonating(t, E.scenarios, "alice", "system:authenticated")

	// The watches list within a few seconds of the restart; until then warrant refuses, saying so.
	var created *corev1.Pod
	deadline := time.Now().Add(30 * time.Second)
	for {
		created, err = bob.CoreV1().Pods(ns).Create(ctx(t), pod("plain", nil, nil), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "pod security cannot judge the pod") || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("bob's plain pod: %v", err)
	}
	if got := created.Annotations["openshift.io/scc"]; got != "restricted-v2" {
		t.Errorf("bob's pod was admitted with %q, want restricted-v2", got)
	}
	sc := created.Spec.Containers[0].SecurityContext
	if sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 1000680000 {
		t.Errorf("bob's pod runs as %v, want the namespace's first uid 1000680000", sc)
	}
	if ps := created.Spec.SecurityContext; ps == nil || ps.FSGroup == nil || *ps.FSGroup != 1000680000 {
		t.Errorf("bob's pod fsGroup: %v, want 1000680000", ps)
	}

	kept, err := alice.CoreV1().Pods(ns).Create(ctx(t), pod("root", &corev1.SecurityContext{RunAsUser: &root}, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("alice's root pod: %v", err)
	}
	if got := kept.Annotations["openshift.io/scc"]; got != "anyuid" {
		t.Errorf("alice's pod was admitted with %q, want anyuid", got)
	}
	if u := kept.Spec.Containers[0].SecurityContext.RunAsUser; u == nil || *u != 0 {
		t.Errorf("alice's pod lost its uid: %v", u)
	}

	carol := impersonating(t, E.scenarios, "carol", "system:authenticated")
	byRBAC, err := carol.CoreV1().Pods(ns).Create(ctx(t), pod("root-by-rbac", &corev1.SecurityContext{RunAsUser: &root}, nil), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("carol's root pod (anyuid granted by RBAC): %v", err)
	}
	if got := byRBAC.Annotations["openshift.io/scc"]; got != "anyuid" {
		t.Errorf("carol's pod was admitted with %q, want anyuid (granted by RBAC use)", got)
	}
	if u := byRBAC.Spec.Containers[0].SecurityContext.RunAsUser; u == nil || *u != 0 {
		t.Errorf("carol's pod lost its uid: %v", u)
	}

	_, err = bob.CoreV1().Pods(ns).Create(ctx(t), pod("root", &corev1.SecurityContext{RunAsUser: &root}, nil), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "provider restricted-v2: .containers[0].runAsUser: Invalid value: 0: must be in the ranges: [1000680000, 1000689999]") {
		t.Errorf("bob's root pod: %v", err)
	}

	privileged := true
	_, err = alice.CoreV1().Pods(ns).Create(ctx(t), pod("priv", &corev1.SecurityContext{Privileged: &privileged}, nil), metav1.CreateOptions{})
	for _, want := range []string{
		"unable to validate against any security context constraint: [",
		"provider anyuid: .containers[0].privileged: Invalid value: true: Privileged containers are not allowed",
		"provider restricted-v2: .containers[0].privileged: Invalid value: true: Privileged containers are not allowed",
		`provider "privileged": Forbidden: not usable by user or serviceaccount`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("alice's privileged pod: %v\nwant %s", err, want)
		}
	}

	pinned, err := alice.CoreV1().Pods(ns).Create(ctx(t), pod("pinned", nil, map[string]string{"openshift.io/required-scc": "restricted-v2"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("alice's pinned pod: %v", err)
	}
	if got := pinned.Annotations["openshift.io/scc"]; got != "restricted-v2" {
		t.Errorf("required-scc restricted-v2 chose %q", got)
	}
	_, err = bob.CoreV1().Pods(ns).Create(ctx(t), pod("pinned-anyuid", nil, map[string]string{"openshift.io/required-scc": "anyuid"}), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s: Forbidden: not usable by user or serviceaccount", `provider "anyuid"`)) {
		t.Errorf("bob's pod pinned to anyuid: %v", err)
	}
}

// grantIn adds line to the constraint named name in a multi-document YAML of constraints,
// replacing its empty users or groups.
func grantIn(docs, name, line string) string {
	parts := strings.Split(docs, "\n---\n")
	key := strings.SplitN(line, ":", 2)[0]
	for i, p := range parts {
		if strings.Contains(p, "\n  name: "+name+"\n") {
			parts[i] = strings.Replace(p, key+": []", line, 1)
		}
	}
	return strings.Join(parts, "\n---\n")
}
