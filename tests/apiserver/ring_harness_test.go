package apiserver

// The validation ring's half of the harness.
//
// kube-apiserver "scenarios" gets, besides the authorization webhook:
//   - its own audit log (testdata/scenarios-audit-policy.yaml, Metadata level), where an admission
//     webhook's auditAnnotations appear as `<webhook name>/<key>`;
//   - --admission-control-config-file (testdata/scenarios-admission-config.yaml): the
//     ValidatingAdmissionWebhook plugin presents the harness's client certificate to
//     127.0.0.1:<port of warrant-admission>, since warrant authenticates /admit's callers;
//   - --delete-collection-workers=1 (the default, written out: the collection-delete scenario
//     relies on the items being deleted one after the other, in name order).
//
// Once the API servers are up, a second warrant ("warrant-admission") serves the same chain file
// with --kubeconfig to the scenario API server (its metadata cache; /readyz answers 200 only once
// the cache has synced for a chain that needs it), and the ValidatingWebhookConfiguration of the
// shipped deploy/validating-webhook.yaml is installed with only its clientConfig replaced (the
// in-cluster Service reference becomes https://127.0.0.1:<port><the Service's path>, the CA
// bundle placeholder the harness's CA): rules, selectors, matchConditions, failure policies and
// timeouts are the shipped ones.

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	admregv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// ring is the validation ring's part of the environment.
type ring struct {
	admission *proc    // warrant-admission
	args      []string // its command line
	url       string   // https://127.0.0.1:<port>
	audit     string   // warrant-admission's --audit-log
	apiAudit  string   // kube-apiserver "scenarios" --audit-log-path
	// The ValidatingWebhookConfiguration as installed (derived from the shipped file).
	config *admregv1.ValidatingWebhookConfiguration
}

// running says whether warrant-admission is up (a scenario stops it on purpose).
func (r *ring) running() bool { return r.admission != nil && !r.admission.exited() }

// prepareRing writes what kube-apiserver "scenarios" needs for the validation ring and returns
// its extra flags.
func (e *env) prepareRing(caFile, cCrt, cKey, wCrt, wKey string) ([]string, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	e.ring.url = fmt.Sprintf("https://127.0.0.1:%d", port)
	e.ring.audit = filepath.Join(e.dir, "warrant-admission-audit.jsonl")
	e.ring.apiAudit = filepath.Join(e.dir, "kube-apiserver-scenarios-audit.jsonl")
	e.ring.args = []string{"serve", "--config", e.warrantCfg,
		"--kubeconfig", filepath.Join(e.dir, "warrant-sa-kubeconfig.yaml"), // installClusterService
		"--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--tls-cert-file", wCrt, "--tls-private-key-file", wKey, "--client-ca-file", caFile,
		"--state-dir", filepath.Join(e.dir, "warrant-admission-state"), "--audit-log", e.ring.audit,
		"--file-check-interval", "1s", "--shutdown-grace-period", "2s"}

	// The credentials kube-apiserver presents to the webhook: a user named after its host:port.
	webhookKC := filepath.Join(e.dir, "admission-webhook-kubeconfig.yaml")
	if err := os.WriteFile(webhookKC, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
users:
  - name: "127.0.0.1:%d"
    user: {client-certificate: %q, client-key: %q}
`, port, cCrt, cKey)), 0o600); err != nil {
		return nil, err
	}
	tmpl, err := os.ReadFile(filepath.Join(repoRoot, "tests", "apiserver", "testdata", "scenarios-admission-config.yaml"))
	if err != nil {
		return nil, err
	}
	admissionCfg := filepath.Join(e.dir, "scenarios-admission-config.yaml")
	if err := os.WriteFile(admissionCfg, []byte(strings.ReplaceAll(string(tmpl), "WEBHOOK_KUBECONFIG", webhookKC)), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--audit-policy-file=" + filepath.Join(repoRoot, "tests", "apiserver", "testdata", "scenarios-audit-policy.yaml"),
		"--audit-log-path=" + e.ring.apiAudit, "--audit-log-mode=blocking",
		"--admission-control-config-file=" + admissionCfg,
		"--delete-collection-workers=1",
	}, nil
}

// startRing starts warrant-admission and installs the shipped webhook configuration.
func (e *env) startRing() error {
	if err := e.startAdmission(); err != nil {
		return err
	}
	return e.installWebhook()
}

// startAdmission starts warrant-admission and waits for its /readyz.
func (e *env) startAdmission() error {
	p, err := startProc(e.dir, "warrant-admission", e.warrantBin, e.ring.args...)
	if err != nil {
		return err
	}
	e.ring.admission = p
	content, err := os.ReadFile(e.warrantCfg)
	if err != nil {
		return err
	}
	if err := e.ring.waitReady(e.warrantHTTP, string(content), 60*time.Second); err != nil {
		return fmt.Errorf("warrant-admission: %w", err)
	}
	return nil
}

// waitReady waits until warrant-admission, serving chain file content, can judge: /readyz
// answers 200 only once the cluster cache has synced for a chain that needs it. But the cache
// opens up to a second after a chain with a DeletionGuard is loaded (warrant polls the chain),
// and until then /readyz says 200 (an idle cache counts as no cluster) while /admit answers
// "no cluster connection is configured" (reported as a warrant bug). So for such a chain, first
// wait for the cache's readiness gauge, which exists only once the cache is open.
func (r *ring) waitReady(c *http.Client, content string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for strings.Contains(content, "type: DeletionGuard") && !hasLine(metricsOf(r.url), "warrant_cluster_cache_ready 1") {
		if r.admission.exited() {
			return fmt.Errorf("exited: %s", r.admission.tail(20))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster cache not open after %s; metrics:\n%s", d, grepLines(metricsOf(r.url), "warrant_cluster"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return waitHTTP(c, r.url+"/readyz", "", time.Until(deadline), r.admission)
}

// shippedWebhookConfiguration reads deploy/validating-webhook.yaml and points every webhook at
// base (warrant-admission on loopback) with the harness's CA: the Service reference becomes a
// URL with the Service's path; nothing else changes. Unknown fields in the shipped file are an
// error (the API server would drop them silently).
func shippedWebhookConfiguration(base string, caPEM []byte) (*admregv1.ValidatingWebhookConfiguration, error) {
	path := filepath.Join(repoRoot, "deploy", "validating-webhook.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, err
	}
	hooks, _ := doc["webhooks"].([]any)
	if len(hooks) == 0 {
		return nil, fmt.Errorf("%s: no webhooks", path)
	}
	for i, h := range hooks {
		hook, _ := h.(map[string]any)
		cc, _ := hook["clientConfig"].(map[string]any)
		svc, _ := cc["service"].(map[string]any)
		if svc == nil {
			return nil, fmt.Errorf("%s: webhooks[%d].clientConfig has no service reference to replace", path, i)
		}
		p, _ := svc["path"].(string)
		if p != "/admit" {
			return nil, fmt.Errorf("%s: webhooks[%d] calls path %q; warrant serves the validation ring at /admit", path, i, p)
		}
		hook["clientConfig"] = map[string]any{"url": base + p, "caBundle": base64.StdEncoding.EncodeToString(caPEM)}
	}
	js, err = json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var cfg admregv1.ValidatingWebhookConfiguration
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if cfg.Kind != "ValidatingWebhookConfiguration" || cfg.APIVersion != "admissionregistration.k8s.io/v1" {
		return nil, fmt.Errorf("%s: %s %s is not an admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration", path, cfg.APIVersion, cfg.Kind)
	}
	return &cfg, nil
}

// installWebhook creates the derived configuration on kube-apiserver "scenarios" and waits until
// the API server calls warrant-admission (its webhook informer is asynchronous).
func (e *env) installWebhook() error {
	cfg, err := shippedWebhookConfiguration(e.ring.url, e.pki.caPEM)
	if err != nil {
		return err
	}
	c, err := kubernetes.NewForConfig(restConfig(e.scenarios, "tok-admin"))
	if err != nil {
		return err
	}
	bg, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(bg, cfg, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the shipped ValidatingWebhookConfiguration: %w", err)
	}
	e.ring.config = cfg
	if err := e.probeRing(bg, c); err != nil {
		return err
	}
	return e.refusesAnonymous()
}

// refusesAnonymous checks that warrant-admission turns away a caller without credentials, so
// the calls it answers were authenticated with the certificate kube-apiserver presents.
func (e *env) refusesAnonymous() error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.pki.caPEM)
	anon := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := anon.Post(e.ring.url+"/admit", "application/json", strings.NewReader(`{}`))
	if err != nil {
		return fmt.Errorf("anonymous POST /admit: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return fmt.Errorf("anonymous POST /admit: %d, want 401", resp.StatusCode)
	}
	return nil
}

// probeRing deletes throwaway Deployments in an unlabelled namespace until warrant-admission
// records one: then the API server's webhook configuration is in force.
func (e *env) probeRing(bg context.Context, c *kubernetes.Clientset) error {
	const ns = "ring-probe"
	if _, err := c.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	started := time.Now()
	for i := 0; time.Since(started) < 20*time.Second; i++ {
		name := fmt.Sprintf("probe-%d", i)
		if _, err := c.AppsV1().Deployments(ns).Create(bg, bareDeployment(name, nil), metav1.CreateOptions{}); err != nil {
			return err
		}
		m := markLog(e.ring.audit)
		if err := c.AppsV1().Deployments(ns).Delete(bg, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("probe delete: %w", err)
		}
		for until := time.Now().Add(time.Second); time.Now().Before(until); time.Sleep(25 * time.Millisecond) {
			for _, r := range readRecords[admissionRecord](m) {
				if r.is("DELETE", ns, name) {
					fmt.Printf("validation ring in force %s after the webhook configuration was created\n", time.Since(started).Round(time.Millisecond))
					return nil
				}
			}
		}
	}
	return fmt.Errorf("warrant-admission saw none of the probe deletes within 20s")
}

// bareDeployment is a Deployment with no pods of its own (there is no controller manager).
func bareDeployment(name string, labels map[string]string) *appsv1.Deployment {
	sel := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
			},
		},
	}
}
