package apiserver

// A real Prometheus (Debian's package) scraping the chart's warrant as prometheus-operator
// would from the ServiceMonitor stored in the API server: its scheme, path, interval, server
// name and the client certificate, key and CA from the Secrets it names; the target labelled as
// the operator labels it (namespace, job = the Service's name). A second job without the client
// certificate must be refused. The PrometheusRule's groups are loaded and must evaluate. After a
// short bounded load (SubjectAccessReviews on /authorize, admitted and refused deletions
// through the API server), every query of the chart's dashboard, as stored in its ConfigMap,
// must return data through Prometheus' HTTP API.

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

func tlsListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

func prometheusScrapesTheChart(t *testing.T, a *apiserver, c *kubernetes.Clientset, p *pod, podHTTP *http.Client, rendered string) {
	bg := ctx(t)
	dir := filepath.Join(E.dir, "chart-prometheus")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	dyn := dynamic.NewForConfigOrDie(restConfig(a, "tok-admin"))
	sm, err := dyn.Resource(schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}).
		Namespace(chartNamespace).Get(bg, "warrant", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	if len(eps) != 1 {
		t.Fatalf("ServiceMonitor has %d endpoints, want 1", len(eps))
	}
	ep := eps[0].(map[string]any)
	str := func(path ...string) string {
		s, _, _ := unstructured.NestedString(ep, path...)
		return s
	}
	// A secret key reference of the tlsConfig, written to a file.
	secretFile := func(name string, path ...string) string {
		ref, ok, _ := unstructured.NestedMap(ep, path...)
		if !ok {
			t.Fatalf("ServiceMonitor endpoint has no %s", strings.Join(path, "."))
		}
		s, err := c.CoreV1().Secrets(chartNamespace).Get(bg, ref["name"].(string), metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name)
		writeFile(t, f, string(s.Data[ref["key"].(string)]))
		return f
	}
	if str("scheme") != "https" || str("path") != "/metrics" || str("port") != "https" {
		t.Fatalf("ServiceMonitor endpoint: %v", ep)
	}
	caFile := secretFile("ca.crt", "tlsConfig", "ca", "secret")
	certFile := secretFile("tls.crt", "tlsConfig", "cert", "secret")
	keyFile := secretFile("tls.key", "tlsConfig", "keySecret")
	serverName := str("tlsConfig", "serverName")
	target := strings.TrimPrefix(p.url, "https://")

	// The rules as prometheus-operator hands them to Prometheus.
	pr, err := dyn.Resource(schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "prometheusrules"}).
		Namespace(chartNamespace).Get(bg, "warrant", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := yaml.Marshal(pr.Object["spec"])
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "rules.yaml"), string(rules))

	port, _ := freePort()
	cfg := fmt.Sprintf(`global: {scrape_interval: %[1]s, scrape_timeout: %[2]s, evaluation_interval: 1s}
rule_files: [rules.yaml]
scrape_configs:
  - job_name: warrant
    scheme: https
    metrics_path: /metrics
    tls_config: {ca_file: %[3]q, cert_file: %[4]q, key_file: %[5]q, server_name: %[6]q}
    static_configs: [{targets: [%[7]q], labels: {namespace: %[8]q}}]
  - job_name: without-client-certificate
    scheme: https
    metrics_path: /metrics
    tls_config: {ca_file: %[3]q, server_name: %[6]q}
    static_configs: [{targets: [%[7]q], labels: {namespace: %[8]q}}]
`, str("interval"), str("scrapeTimeout"), caFile, certFile, keyFile, serverName, target, chartNamespace)
	writeFile(t, filepath.Join(dir, "prometheus.yml"), cfg)
	prom, err := startProc(E.dir, "prometheus", prometheusBin(t),
		"--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port), "--log.level=warn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { prom.stop(10 * time.Second) })
	api := fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := waitHTTP(http.DefaultClient, api+"/-/ready", "", 60*time.Second, prom); err != nil {
		t.Fatalf("prometheus: %v", err)
	}

	// Both targets scraped once: warrant's up, the one without a certificate refused.
	health := map[string]string{}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		var targets struct {
			Data struct {
				ActiveTargets []struct {
					ScrapePool, Health, LastError string
				} `json:"activeTargets"`
			} `json:"data"`
		}
		getJSON(t, api+"/api/v1/targets", &targets)
		for _, tg := range targets.Data.ActiveTargets {
			health[tg.ScrapePool] = tg.Health + " " + tg.LastError
		}
		if strings.HasPrefix(health["warrant"], "up") && strings.HasPrefix(health["without-client-certificate"], "down") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("scrape targets after 30s: %v", health)
		}
	}
	if !strings.Contains(health["without-client-certificate"], "401") {
		t.Errorf("the scrape without a client certificate failed for another reason: %s", health["without-client-certificate"])
	}
	t.Logf("targets: %v", health)

	chartLoad(t, c, p, podHTTP)

	// The dashboard as stored.
	cm, err := c.CoreV1().ConfigMaps(chartNamespace).Get(bg, "warrant-dashboard", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal([]byte(cm.Data["warrant.json"]), &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	if len(dash.Panels) == 0 {
		t.Fatal("the dashboard has no panels")
	}
	vars := strings.NewReplacer("$namespace", chartNamespace, "$job", "warrant", "$__rate_interval", "1m", "$__range", "5m")
	queries := 0
	for _, panel := range dash.Panels {
		for _, target := range panel.Targets {
			q := vars.Replace(target.Expr)
			queries++
			var got int
			var last string
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Second) {
				got, last = queryPoints(t, api, q)
				if got > 0 || time.Now().After(deadline) {
					break
				}
			}
			if got == 0 {
				t.Errorf("panel %q: no data for %s (%s)", panel.Title, q, last)
			} else {
				t.Logf("panel %q: %d series", panel.Title, got)
			}
		}
	}

	// The expiry warrant exports is the notAfter of the certificate in the serving Secret.
	tlsSecret, err := c.CoreV1().Secrets(chartNamespace).Get(bg, "warrant-tls", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(tlsSecret.Data["tls.crt"])
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	expiry := `warrant_tls_serving_certificate_expiry_timestamp_seconds{namespace="warrant-system",job="warrant"}`
	if got := queryValue(t, api, expiry); got != float64(leaf.NotAfter.Unix()) {
		t.Errorf("%s = %v, the serving certificate's notAfter is %d", expiry, got, leaf.NotAfter.Unix())
	}

	// Every alerting rule evaluates.
	var rs struct {
		Data struct {
			Groups []struct {
				Rules []struct{ Name, Health, LastError string }
			}
		}
	}
	getJSON(t, api+"/api/v1/rules", &rs)
	n := 0
	for _, g := range rs.Data.Groups {
		for _, r := range g.Rules {
			n++
			if r.Health != "ok" {
				t.Errorf("rule %s: %s %s", r.Name, r.Health, r.LastError)
			}
		}
	}
	if n == 0 {
		t.Error("Prometheus loaded no rule")
	}
	t.Logf("%d dashboard queries, %d rules evaluated", queries, n)
}

// chartLoad is a short, bounded load on the chart's warrant: SubjectAccessReviews on
// /authorize (repeated users, so the downstream webhook's cache hits), admitted deletions of
// unlabelled Deployments and refused deletions of unticketed critical ones.
func chartLoad(t *testing.T, c *kubernetes.Clientset, p *pod, podHTTP *http.Client) {
	t.Helper()
	bg := ctx(t)
	const ns = "chart-load"
	if _, err := c.CoreV1().Namespaces().Create(bg, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	sars, admitted, refused := 0, 0, 0
	// Three rounds two scrapes apart: a series born in the first round has increased by the
	// last, which is what rate() and increase() see.
	for round := 0; round < 3; round++ {
		if round > 0 {
			time.Sleep(2500 * time.Millisecond)
		}
		for i := 0; i < 70; i++ {
			body := fmt.Sprintf(`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"load-%d","groups":["dev"],"resourceAttributes":{"namespace":"%s","verb":"get","group":"apps","resource":"deployments","name":"x-%d"}}}`, i%5, ns, round)
			resp, err := podHTTP.Post(p.url+"/authorize", "application/json", bytes.NewReader([]byte(body)))
			if err != nil {
				t.Fatalf("POST /authorize: %v", err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(b), `"allowed":true`) {
				t.Fatalf("POST /authorize: %d %s", resp.StatusCode, b)
			}
			sars++
		}
		for i := 0; i < 5; i++ {
			name := fmt.Sprintf("plain-%d-%d", round, i)
			if _, err := c.AppsV1().Deployments(ns).Create(bg, bareDeployment(name, nil), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := c.AppsV1().Deployments(ns).Delete(bg, name, metav1.DeleteOptions{}); err != nil {
				t.Fatalf("delete %s: %v", name, err)
			}
			admitted++
			crit := fmt.Sprintf("critical-%d-%d", round, i)
			if _, err := c.AppsV1().Deployments(ns).Create(bg, bareDeployment(crit, map[string]string{protectionLabel: "critical"}), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := c.AppsV1().Deployments(ns).Delete(bg, crit, metav1.DeleteOptions{}); err == nil {
				t.Fatalf("the unticketed critical %s was deleted", crit)
			}
			refused++
		}
	}
	t.Logf("load: %d SubjectAccessReviews, %d admitted and %d refused deletions in %s", sars, admitted, refused, time.Since(started).Round(time.Millisecond))
	// Two more scrapes after the load.
	time.Sleep(2500 * time.Millisecond)
}

// queryPoints runs an instant query and counts the series with a finite value.
func queryPoints(t *testing.T, api, q string) (int, string) {
	t.Helper()
	var r struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	getJSON(t, api+"/api/v1/query?query="+url.QueryEscape(q), &r)
	if r.Status != "success" {
		t.Fatalf("query %s: %s %s", q, r.Status, r.Error)
	}
	n := 0
	for _, s := range r.Data.Result {
		v, _ := s.Value[1].(string)
		f, err := strconv.ParseFloat(v, 64)
		if err == nil && !math.IsNaN(f) {
			n++
		}
	}
	raw, _ := json.Marshal(r.Data.Result)
	return n, string(raw)
}

// queryValue runs an instant query that must return one series and returns its value.
func queryValue(t *testing.T, api, q string) float64 {
	t.Helper()
	var r struct {
		Data struct {
			Result []struct{ Value [2]any }
		}
	}
	getJSON(t, api+"/api/v1/query?query="+url.QueryEscape(q), &r)
	if len(r.Data.Result) != 1 {
		t.Fatalf("query %s: %d series, want 1", q, len(r.Data.Result))
	}
	v, _ := r.Data.Result[0].Value[1].(string)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("query %s: value %q", q, v)
	}
	return f
}

func getJSON(t *testing.T, u string, into any) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(c, "GET", u, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("GET %s: %v: %s", u, err, b)
	}
}
