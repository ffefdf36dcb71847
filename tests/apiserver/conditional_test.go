package apiserver

// Conditional authorization (KEP-5681) against a real kube-apiserver v1.38.0-beta.0
// built from tools-v1.38 (KUBE138_BIN_DIR, set by run.sh) with the ConditionalAuthorization gate
// and the AuthorizationConditionsEnforcer admission plugin. A second warrant serves a guard that
// protects by label with Deny conditions and a Policy whose Allow rule is conditional on the
// object's owner label; the API server answers the SubjectAccessReview with the union, then asks
// warrant back with an AuthorizationConditionsReview at admission, on the stored object.

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const conditionalWarrantConfig = `apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
- type: DeletionGuard
  name: guard
  conditions:
    whenUnsupported: Fold
  matchConditions:
  - expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'cond'"
  guard:
    protectionLabel: warrant.dev/protection
- type: Policy
  name: owners
  policy:
    rules:
    - name: owner-updates
      effect: Allow
      expression: "has(request.resourceAttributes) && request.resourceAttributes.namespace == 'cond' && request.resourceAttributes.resource == 'configmaps' && request.resourceAttributes.verb == 'update'"
      condition: "has(object.metadata.labels) && 'owner' in object.metadata.labels && object.metadata.labels['owner'] in request.userInfo.groups"
      message: owners may update their configmaps
      code: OWNER_UPDATE
`

const conditionalAuthzConfig = `apiVersion: apiserver.config.k8s.io/v1
kind: AuthorizationConfiguration
authorizers:
  - type: Webhook
    name: warrant
    webhook:
      timeout: 3s
      subjectAccessReviewVersion: v1
      matchConditionSubjectAccessReviewVersion: v1
      failurePolicy: NoOpinion
      authorizedTTL: 5m
      unauthorizedTTL: 30s
      connectionInfo:
        type: KubeConfigFile
        kubeConfigFile: WARRANT_KUBECONFIG
      matchConditions:
        - expression: "has(request.resourceAttributes)"
      conditionsReview:
        version: v1alpha1
  - type: RBAC
    name: rbac
`

func apiHTTPClient() *http.Client {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(E.pki.caPEM)
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

func TestConditionalAuthorizationV138(t *testing.T) {
	bin := os.Getenv("KUBE138_BIN_DIR")
	if bin == "" {
		t.Skip("KUBE138_BIN_DIR is not set (tests/apiserver/run.sh builds kube-apiserver v1.38.0-beta.0 into it)")
	}
	f := E.files
	dir := filepath.Join(E.dir, "conditional")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wPort, _ := freePort()
	wURL := fmt.Sprintf("https://127.0.0.1:%d", wPort)
	cfg := write("warrant.yaml", conditionalWarrantConfig)
	w, err := startProc(E.dir, "warrant-conditional", E.warrantBin, "serve", "--config", cfg,
		"--listen", fmt.Sprintf("127.0.0.1:%d", wPort), "--tls-cert-file", f.warrantCrt,
		"--tls-private-key-file", f.warrantKey, "--client-ca-file", f.ca,
		"--state-dir", filepath.Join(dir, "state"), "--shutdown-grace-period", "2s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.stop(5 * time.Second) })
	if err := waitHTTP(E.warrantHTTP, wURL+"/readyz", "", 30*time.Second, w); err != nil {
		t.Fatalf("warrant: %v\n%s", err, w.tail(30))
	}
	tmpl, err := os.ReadFile(filepath.Join(repoRoot, "kubeconfigs", "apiserver-to-warrant.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	kc := write("apiserver-to-warrant.yaml", strings.NewReplacer(
		"WARRANT_HOST:8443", fmt.Sprintf("127.0.0.1:%d", wPort),
		"WARRANT_CA_FILE", f.ca, "CLIENT_CERT_FILE", f.clientCrt, "CLIENT_KEY_FILE", f.clientKey,
	).Replace(string(tmpl)))
	authz := write("authorization-config.yaml", strings.ReplaceAll(conditionalAuthzConfig, "WARRANT_KUBECONFIG", kc))
	port, _ := freePort()
	p, err := startProc(E.dir, "kube-apiserver-v1.38", filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers="+f.etcdURL, "--etcd-prefix=/conditional",
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file="+f.apiCrt, "--tls-private-key-file="+f.apiKey, "--client-ca-file="+f.ca,
		"--token-auth-file="+f.tokens,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+f.saPub, "--service-account-signing-key-file="+f.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-config="+authz,
		"--feature-gates=ConditionalAuthorization=true",
		"--enable-admission-plugins=AuthorizationConditionsEnforcer",
		"--disable-admission-plugins=ServiceAccount", "--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false", "--profiling=false", "--v=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(10 * time.Second) })
	a := &apiserver{name: "v1.38", url: fmt.Sprintf("https://127.0.0.1:%d", port), proc: p}
	if err := waitHTTP(apiHTTPClient(), a.url+"/readyz", "tok-admin", 180*time.Second, p); err != nil {
		t.Fatalf("kube-apiserver v1.38: %v\n%s", err, p.tail(40))
	}
	c := ctx(t)
	admin := client(t, a, "admin")
	if _, err := admin.CoreV1().Namespaces().Create(c, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "cond"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// RBAC lets the team members delete deployments and update configmaps in "cond".
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "editor", Namespace: "cond"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: []string{"get", "list", "delete", "create", "update", "patch"}},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get", "list", "create"}},
	}}
	if _, err := admin.RbacV1().Roles("cond").Create(c, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "editors", Namespace: "cond"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "editor"},
		Subjects: []rbacv1.Subject{{Kind: "Group", Name: "team-a"}, {Kind: "Group", Name: "team-b"}}}
	if _, err := admin.RbacV1().RoleBindings("cond").Create(c, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deployment := func(name string, labels map[string]string) *appsv1.Deployment {
		one := int32(1)
		sel := map[string]string{"app": name}
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
			Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel},
				Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel},
					Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}}}
	}
	alice := client(t, a, "pol-alice") // group team-a
	bob := client(t, a, "pol-bob")     // group team-b
	deps := admin.AppsV1().Deployments("cond")
	for _, d := range []*appsv1.Deployment{
		deployment("critical", map[string]string{"warrant.dev/protection": "critical"}),
		deployment("plain", nil),
		deployment("late", nil),
	} {
		if _, err := deps.Create(c, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("critical-labelled delete is denied by warrant's condition", func(t *testing.T) {
		err := alice.AppsV1().Deployments("cond").Delete(c, "critical", metav1.DeleteOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("delete of a critical deployment: want 403, got %v", err)
		}
		for _, want := range []string{"guard/protection-critical", "[LABEL_PROTECTED]"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("403 message %q does not name %q", err.Error(), want)
			}
		}
	})
	t.Run("unlabelled delete is allowed by RBAC", func(t *testing.T) {
		if err := alice.AppsV1().Deployments("cond").Delete(c, "plain", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("delete of an unlabelled deployment: %v", err)
		}
	})
	t.Run("label added a moment before the delete is still enforced", func(t *testing.T) {
		// The SubjectAccessReview for this exact delete is answered (and cached by the API
		// server) while the object is unlabelled: a dry run goes through authorization and admission.
		dry := metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
		if err := alice.AppsV1().Deployments("cond").Delete(c, "late", dry); err != nil {
			t.Fatalf("dry-run delete of the unlabelled deployment: %v", err)
		}
		d, err := deps.Get(c, "late", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		d.Labels = map[string]string{"warrant.dev/protection": "critical"}
		if _, err := deps.Update(c, d, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		err = alice.AppsV1().Deployments("cond").Delete(c, "late", metav1.DeleteOptions{})
		if !apierrors.IsForbidden(err) {
			t.Fatalf("delete after labelling: want 403 (the condition reads the stored object), got %v", err)
		}
	})
	t.Run("Policy condition allows owners only", func(t *testing.T) {
		cms := admin.CoreV1().ConfigMaps("cond")
		for name, owner := range map[string]string{"a-owned": "team-a", "b-owned": "team-b"} {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"owner": owner}}}
			if _, err := cms.Create(c, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		try := func(who string, name string) error {
			cm, err := cms.Get(c, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cm.Data = map[string]string{"k": who}
			cl := alice
			if who == "bob" {
				cl = bob
			}
			_, err = cl.CoreV1().ConfigMaps("cond").Update(c, cm, metav1.UpdateOptions{})
			return err
		}
		if err := try("alice", "a-owned"); err != nil {
			t.Errorf("team-a updating its own configmap: %v", err)
		}
		if err := try("alice", "b-owned"); !apierrors.IsForbidden(err) {
			t.Errorf("team-a updating team-b's configmap: want 403, got %v", err)
		}
		if err := try("bob", "b-owned"); err != nil {
			t.Errorf("team-b updating its own configmap: %v", err)
		}
	})
	m := metricsOf(wURL)
	for _, want := range []string{`warrant_authorization_attempts_total{result="conditional"}`, `warrant_conditions_evaluations_total{result="denied"}`} {
		if !strings.Contains(m, want) {
			t.Errorf("warrant's metrics lack %s:\n%s", want, grepLines(m, "conditional"))
		}
	}
}
