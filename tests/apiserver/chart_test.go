package apiserver

// charts/warrant end to end (chart_harness_test.go says how): the published cert-manager and
// prometheus-operator CRDs and two renderings of the chart applied with server-side apply to
// kube-apiserver "chart"; the provided-Secret rendering's Deployment run as a process; one
// validation-ring and one buffer-ring scenario through the chart-installed webhook
// configuration; then a real Prometheus scraping that warrant with the ServiceMonitor's
// authentication, and every panel of the chart's dashboard answering.

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"crypto/tls"
	"crypto/x509"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

const chartNamespace = "warrant-system"

// chartValues are the values of the running release: the serving Secret provided (the tier's
// certificate for warrant.warrant-system.svc), one replica, monitoring on with Prometheus'
// client certificate from a provided Secret, a chain whose buffer holds CRITICAL deletions
// (critical label + business hours reach it) for a short cool-down, a downstream Webhook for
// the authorization ring's load, faster leader election.
// The downstream's kubeconfig is a file of the test (a Webhook's kubeConfigFile is an absolute
// path, which the played pod cannot mount at /etc/warrant/config).
func chartValues(servicePort int, downstreamKubeconfig string) string {
	ca := base64.StdEncoding.EncodeToString(E.pki.caPEM)
	return fmt.Sprintf(`service: {port: %d}
replicaCount: 1
tls: {existingSecret: warrant-tls, caBundle: %s}
extraArgs: [--leader-elect-lease-duration=4s, --leader-elect-renew-deadline=3s, --leader-elect-retry-period=1s, --file-check-interval=1s]
monitoring:
  serviceMonitor: {enabled: true, clientCertificateSecret: warrant-metrics-client, interval: 1s, scrapeTimeout: 1s}
  prometheusRule: {enabled: true}
  dashboard: {enabled: true}
config:
  chain:
    apiVersion: warrant.dev/v1alpha1
    kind: AuthorizationConfiguration
    authorizers:
      - type: DeletionGuard
        name: deletion-defense
        failurePolicy: Deny
        guard:
          mode: Enforce
          timeZone: UTC
          businessHours: {days: [Mon, Tue, Wed, Thu, Fri, Sat, Sun], start: %q, end: %q}
          protectionLabel: %s
          ticketAnnotation: %s
          riskThresholds: {medium: 10, high: 30, critical: 50}
          tickets: {file: tickets.yaml, requiredFor: [critical], approvals: {critical: 2, high: 1, standard: 0}}
          buffer: {finalizeAt: high, cooldown: 6s, maxHold: 1h}
      - type: Webhook
        name: downstream
        webhook:
          matchConditions: [{expression: "request.user.startsWith('load-')"}]
          timeout: 2s
          subjectAccessReviewVersion: v1
          matchConditionSubjectAccessReviewVersion: v1
          failurePolicy: NoOpinion
          authorizedTTL: 1m
          unauthorizedTTL: 10s
          connectionInfo: {type: KubeConfigFile, kubeConfigFile: %q}
  files:
    tickets.yaml: |
      tickets:
        - id: CHG-CHART-1
          status: Approved
          approvers: [carol, dave]
          expires: "2030-01-01T00:00:00Z"
          scope: {namespaces: [chart-shop]}
`, servicePort, ca, ringDayStart, ringDayEnd, protectionLabel, ticketAnnotation, downstreamKubeconfig)
}

// downstreamSAR is a loopback HTTPS SubjectAccessReview webhook that allows every review.
func downstreamSAR(t *testing.T) string {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(E.files.warrantCrt, E.files.warrantKey)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, TLSConfig: &tls.Config{Certificates: []tls.Certificate{pair}},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":true,"reason":"downstream allows"}}`)
		})}
	ln, err := tlsListen()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return "https://" + ln.Addr().String() + "/authorize"
}

func TestChartInstallsTheDeletionDefense(t *testing.T) {
	if os.Getenv("HELM_BIN") == "" {
		t.Skip("HELM_BIN is not set (tests/apiserver/run.sh builds helm with tests/chart/build-helm.sh)")
	}
	servicePort, _ := freePort()
	a, c := chartAPIServer(t, servicePort)
	bg := ctx(t)
	dir := filepath.Join(E.dir, "chart")

	crds := installPublishedCRDs(t, a)
	t.Logf("published CRDs applied: %s", strings.Join(crds, ", "))

	t.Run("the cert-manager rendering with monitoring and autoscaling is accepted", func(t *testing.T) {
		const ns = "warrant-cm"
		if _, err := c.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		values := filepath.Join(dir, "cert-manager-values.yaml")
		writeFile(t, values, "tls: {certManager: {enabled: true}}\nautoscaling: {enabled: true}\n"+
			"monitoring: {serviceMonitor: {enabled: true}, prometheusRule: {enabled: true}, dashboard: {enabled: true}}\n")
		out := serverSideApply(t, a, helmTemplate(t, "warrant-cm", ns, values))
		for _, want := range []string{
			"issuer.cert-manager.io/warrant-cm-selfsigned serverside-applied",
			"certificate.cert-manager.io/warrant-cm-serving serverside-applied",
			"certificate.cert-manager.io/warrant-cm-apiserver-client serverside-applied",
			"certificate.cert-manager.io/warrant-cm-metrics-client serverside-applied",
			"servicemonitor.monitoring.coreos.com/warrant-cm serverside-applied",
			"prometheusrule.monitoring.coreos.com/warrant-cm serverside-applied",
			"horizontalpodautoscaler.autoscaling/warrant-cm serverside-applied",
			"validatingwebhookconfiguration.admissionregistration.k8s.io/warrant-cm-validation-ring serverside-applied",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("kubectl apply did not report %q:\n%s", want, out)
			}
		}
		// cert-manager's CA injector would fill the caBundle; there is none here, so the
		// release's webhooks are removed before the running release's scenarios.
		vwc, err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(bg, "warrant-cm-validation-ring", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := vwc.Annotations["cert-manager.io/inject-ca-from"]; got != ns+"/warrant-cm-serving" {
			t.Errorf("inject-ca-from = %q", got)
		}
		if err := c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(bg, vwc.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		// The stored Certificate is what cert-manager would read.
		dyn := dynamic.NewForConfigOrDie(restConfig(a, "tok-admin"))
		cert, err := dyn.Resource(schema.GroupVersionResource{Group: "cert-manager.io", Version: "v1", Resource: "certificates"}).
			Namespace(ns).Get(bg, "warrant-cm-serving", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		names, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
		if len(names) == 0 || names[0] != "warrant-cm.warrant-cm.svc" {
			t.Errorf("serving certificate dnsNames = %v", names)
		}
	})

	// The running release: namespace, the provided Secrets, then the chart.
	if _, err := c.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: chartNamespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for name, pair := range map[string][2]string{
		"warrant-tls":            {E.files.warrantCrt, E.files.warrantKey},
		"warrant-metrics-client": {E.files.clientCrt, E.files.clientKey},
	} {
		if _, err := c.CoreV1().Secrets(chartNamespace).Create(bg, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{"tls.crt": read(pair[0]), "tls.key": read(pair[1]), "ca.crt": E.pki.caPEM},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	values := filepath.Join(dir, "values.yaml")
	downstream := filepath.Join(dir, "downstream.kubeconfig")
	writeFile(t, downstream, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: d, cluster: {server: %q, certificate-authority-data: %s}}]
users: [{name: w, user: {}}]
contexts: [{name: d, context: {cluster: d, user: w}}]
current-context: d
`, downstreamSAR(t), base64.StdEncoding.EncodeToString(E.pki.caPEM)))
	writeFile(t, values, chartValues(servicePort, downstream))
	rendered := helmTemplate(t, "warrant", chartNamespace, values)
	writeFile(t, filepath.Join(dir, "rendered.yaml"), rendered)
	serverSideApply(t, a, rendered)
	p := runPod(t, a, c, chartNamespace, "warrant")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(E.pki.caPEM)
	cliCert, err := tls.LoadX509KeyPair(E.files.clientCrt, E.files.clientKey)
	if err != nil {
		t.Fatal(err)
	}
	podHTTP := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, ServerName: p.host, Certificates: []tls.Certificate{cliCert}}}}
	if err := waitHTTP(podHTTP, p.url+"/readyz", "", 60*time.Second, p.proc); err != nil {
		t.Fatalf("the chart's warrant: %v\n%s", err, p.proc.tail(20))
	}
	// The cache opens once the chain is loaded; ready then means every watch listed as the
	// chart's service account.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		m := scrape(podHTTP, p.url)
		if hasLine(m, "warrant_cluster_cache_ready 1") && hasLine(m, "warrant_leader_is_leader 1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the chart's warrant: cache not ready or not leading after 30s:\n%s\n%s", grepLines(m, "warrant_cluster"), p.proc.tail(30))
		}
	}

	const shop = "chart-shop"
	if _, err := c.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: shop}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("the validation ring refuses an unticketed critical deletion through the chart's webhooks", func(t *testing.T) {
		dep := bareDeployment("guarded", map[string]string{protectionLabel: "critical"})
		if _, err := c.AppsV1().Deployments(shop).Create(bg, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The webhook configuration's informer is asynchronous: retry while no webhook answered.
		var err error
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			err = c.AppsV1().Deployments(shop).Delete(bg, "guarded", metav1.DeleteOptions{})
			if err == nil || strings.Contains(err.Error(), "denied the request") {
				break
			}
		}
		if err == nil {
			t.Fatal("the critical Deployment was deleted without a ticket")
		}
		msg := err.Error()
		if !apierrors.IsForbidden(err) || !strings.Contains(msg, `admission webhook "protected-objects.warrant.dev" denied the request`) ||
			!strings.Contains(msg, "MISSING_TICKET") {
			t.Fatalf("delete: %v", err)
		}
		if _, err := c.AppsV1().Deployments(shop).Get(bg, "guarded", metav1.GetOptions{}); err != nil {
			t.Fatalf("the refused Deployment is gone: %v", err)
		}
	})

	t.Run("the buffer ring holds a ticketed critical deletion for its cool-down, then releases it", func(t *testing.T) {
		dep := bareDeployment("held", map[string]string{protectionLabel: "critical"})
		dep.Annotations = map[string]string{ticketAnnotation: "CHG-CHART-1"}
		if _, err := c.AppsV1().Deployments(shop).Create(bg, dep, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitFinalizer(t, c, shop, "held", bufferFinalizer, 30*time.Second)
		if err := c.AppsV1().Deployments(shop).Delete(bg, "held", metav1.DeleteOptions{}); err != nil {
			t.Fatalf("the ticketed deletion was refused: %v", err)
		}
		got, err := c.AppsV1().Deployments(shop).Get(bg, "held", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the held Deployment is gone at once: %v", err)
		}
		if got.DeletionTimestamp == nil {
			t.Fatal("the held Deployment is not Terminating")
		}
		if by := got.Annotations["warrant.dev/deletion-requested-by"]; by != "admin" {
			t.Errorf("requester annotation = %q, want admin", by)
		}
		for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(250 * time.Millisecond) {
			_, err := c.AppsV1().Deployments(shop).Get(bg, "held", metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				held := time.Since(got.DeletionTimestamp.Time)
				t.Logf("released %s after its deletionTimestamp (cool-down 6s)", held.Round(100*time.Millisecond))
				if held < 5*time.Second { // deletionTimestamp has whole seconds
					t.Fatalf("released after %s, before the 6s cool-down", held)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("still held 40s after the delete: %v", err)
			}
		}
	})

	t.Run("Prometheus scrapes with the ServiceMonitor's authentication and every dashboard panel returns data", func(t *testing.T) {
		prometheusScrapesTheChart(t, a, c, p, podHTTP, rendered)
	})
}

// scrape reads /metrics with the given client ("" when it does not answer 200).
func scrape(c *http.Client, base string) string {
	resp, err := c.Get(base + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return ""
	}
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// prometheusBin is Debian's prometheus (tests/monitoring/check.sh installs it).
func prometheusBin(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus is not installed (tests/monitoring/check.sh installs Debian's prometheus package)")
	}
	return p
}
