package apiserver

// The chart's half of the harness (chart_test.go): charts/warrant rendered by a real helm
// (HELM_BIN, built by tests/chart/build-helm.sh) and applied with server-side apply to a third
// kube-apiserver, "chart", that authorizes with RBAC alone (so warrant's service account has
// exactly what the chart grants). That API server gives Services ClusterIPs from a loopback
// range (127.0.100.0/24): kube-apiserver resolves a webhook's service reference to the Service's
// ClusterIP and port, so a warrant listening on that address is reached through the chart's own
// ValidatingWebhookConfiguration, with the Service's name verified on its certificate. There is
// no kubelet: runPod plays it for the chart's Deployment (the volumes from the API server's
// ConfigMap and Secrets, a TokenRequest token at the in-cluster path in a private mount
// namespace, KUBERNETES_SERVICE_HOST/PORT), and kube-proxy's part is the one rewrite of the
// container's arguments (--listen=0.0.0.0:8443 becomes the ClusterIP and the Service's port).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The published CRDs the chart's optional objects need, read from their projects' Go module
// zips (go mod download -json), never committed.
var chartCRDModules = []struct{ module, dir string }{
	{"github.com/cert-manager/cert-manager@v1.21.2", "deploy/crds"},
	{"github.com/prometheus-operator/prometheus-operator@v0.85.0", "example/prometheus-operator-crd"},
}

// chartServiceRange is the "chart" API server's Service range: loopback, so a ClusterIP is an
// address a local process can listen on.
const chartServiceRange = "127.0.100.0/24"

// chartAPIServer starts kube-apiserver "chart" (RBAC only; its admission webhooks' client
// certificate for the Service's host and port) and returns it with an admin client.
func chartAPIServer(t *testing.T, servicePort int) (*apiserver, *kubernetes.Clientset) {
	t.Helper()
	f := E.files
	dir := filepath.Join(E.dir, "chart")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	host := fmt.Sprintf("warrant.warrant-system.svc:%d", servicePort)
	kc := filepath.Join(dir, "admission-kubeconfig.yaml")
	writeFile(t, kc, fmt.Sprintf(`apiVersion: v1
kind: Config
users:
  - name: %q
    user: {client-certificate: %q, client-key: %q}
`, host, f.clientCrt, f.clientKey))
	admission := filepath.Join(dir, "admission-config.yaml")
	writeFile(t, admission, fmt.Sprintf(`apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: ValidatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: %q
`, kc))
	port, _ := freePort()
	p, err := startProc(E.dir, "kube-apiserver-chart", filepath.Join(E.kubeBin, "kube-apiserver"),
		"--etcd-servers="+f.etcdURL, "--etcd-prefix=/chart",
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file="+f.apiCrt, "--tls-private-key-file="+f.apiKey, "--client-ca-file="+f.ca,
		"--token-auth-file="+f.tokens,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+f.saPub, "--service-account-signing-key-file="+f.saKey,
		"--service-cluster-ip-range="+chartServiceRange,
		"--authorization-mode=RBAC",
		"--admission-control-config-file="+admission,
		"--disable-admission-plugins=ServiceAccount", "--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false", "--profiling=false", "--v=1")
	if err != nil {
		t.Fatal(err)
	}
	a := &apiserver{name: "chart", url: fmt.Sprintf("https://127.0.0.1:%d", port), proc: p,
		kcfg: filepath.Join(dir, "kubeconfig.yaml")}
	t.Cleanup(func() { p.stop(10 * time.Second) })
	writeFile(t, a.kcfg, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: admin, user: {token: tok-admin}}]
contexts: [{name: c, context: {cluster: c, user: admin}}]
current-context: c
`, a.url, f.ca))
	if err := waitHTTP(apiHTTPClient(), a.url+"/readyz", "tok-admin", 180*time.Second, p); err != nil {
		t.Fatalf("kube-apiserver chart: %v", err)
	}
	return a, client(t, a, "admin")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// helmTemplate renders charts/warrant as release `release` in namespace `ns` with the values
// file, and returns the manifests.
func helmTemplate(t *testing.T, release, ns, values string) string {
	t.Helper()
	out, err := exec.Command(os.Getenv("HELM_BIN"), "template", release, filepath.Join(repoRoot, "charts", "warrant"),
		"--namespace", ns, "--values", values).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("helm template: %v\n%s", err, stderr)
	}
	return string(out)
}

// serverSideApply applies manifests to the API server as kubectl apply --server-side does.
func serverSideApply(t *testing.T, a *apiserver, manifests string) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(E.kubeBin, "kubectl"), "--kubeconfig", a.kcfg,
		"apply", "--server-side", "--field-manager=helm-chart-test", "-f", "-")
	cmd.Stdin = strings.NewReader(manifests)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl apply --server-side: %v\n%s", err, out)
	}
	return string(out)
}

// installPublishedCRDs applies the cert-manager and prometheus-operator CRDs from their Go
// module zips and waits until they are established.
func installPublishedCRDs(t *testing.T, a *apiserver) []string {
	t.Helper()
	var names []string
	for _, m := range chartCRDModules {
		cmd := exec.Command("go", "mod", "download", "-json", m.module)
		cmd.Dir = t.TempDir() // outside any module: the version is the one named
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go mod download %s: %v", m.module, err)
		}
		var info struct{ Dir, Error string }
		if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
			t.Fatalf("go mod download %s: %s %v", m.module, info.Error, err)
		}
		files, _ := filepath.Glob(filepath.Join(info.Dir, m.dir, "*.yaml"))
		sort.Strings(files)
		if len(files) == 0 {
			t.Fatalf("%s: no CRD files under %s", m.module, m.dir)
		}
		var all strings.Builder
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all.WriteString("\n---\n")
			all.Write(b)
			names = append(names, filepath.Base(f))
		}
		serverSideApply(t, a, all.String())
	}
	out, err := kubectl(t, a, "wait", "--for=condition=Established", "--timeout=60s",
		"crd/certificates.cert-manager.io", "crd/issuers.cert-manager.io",
		"crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com")
	if err != nil {
		t.Fatalf("CRDs not established: %v\n%s", err, out)
	}
	return names
}

// pod is a local process playing one replica of the chart's Deployment.
type pod struct {
	proc *proc
	url  string // https://<ClusterIP>:<service port>
	host string // the Service's DNS name, on the serving certificate
}

// runPod starts the Deployment's container as the kubelet would start it, as far as a process
// can: the container's command line from the Deployment stored in the API server, its volumes
// from the stored ConfigMap and Secrets, its service account's token (TokenRequest) at the
// in-cluster path in a private mount namespace, the in-cluster environment.
func runPod(t *testing.T, a *apiserver, c *kubernetes.Clientset, ns, name string) *pod {
	t.Helper()
	bg := ctx(t)
	dep, err := c.AppsV1().Deployments(ns).Get(bg, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := c.CoreV1().Services(ns).Get(bg, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(svc.Spec.Ports) != 1 {
		t.Fatalf("service %s/%s has %d ports, want 1", ns, name, len(svc.Spec.Ports))
	}
	spec := dep.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		t.Fatalf("deployment %s/%s has %d containers, want 1", ns, name, len(spec.Containers))
	}
	ctr := spec.Containers[0]
	root := filepath.Join(E.dir, "chart-pod-"+name)
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	// Volume mounts: each volume's files in a local folder.
	mounts := map[string]string{}
	for _, m := range ctr.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("volumeMount %s names no volume", m.Name)
		}
		local := filepath.Join(root, "volumes", m.Name)
		if err := os.MkdirAll(local, 0o700); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		var items []corev1.KeyToPath
		switch {
		case v.ConfigMap != nil:
			cm, err := c.CoreV1().ConfigMaps(ns).Get(bg, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("volume %s: %v", m.Name, err)
			}
			for k, s := range cm.Data {
				files[k] = []byte(s)
			}
			items = v.ConfigMap.Items
		case v.Secret != nil:
			s, err := c.CoreV1().Secrets(ns).Get(bg, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("volume %s: %v", m.Name, err)
			}
			files = s.Data
			items = v.Secret.Items
		default:
			t.Fatalf("volume %s: only configMap and secret volumes are played", m.Name)
		}
		if len(items) > 0 {
			picked := map[string][]byte{}
			for _, it := range items {
				picked[it.Path] = files[it.Key]
			}
			files = picked
		}
		for k, b := range files {
			if err := os.WriteFile(filepath.Join(local, k), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		mounts[m.MountPath] = local
	}
	// The service account's projected token, CA and namespace.
	sa := filepath.Join(root, "serviceaccount")
	if err := os.MkdirAll(sa, 0o700); err != nil {
		t.Fatal(err)
	}
	exp := int64(3600)
	tok, err := c.CoreV1().ServiceAccounts(ns).CreateToken(bg, spec.ServiceAccountName,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: &exp}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("TokenRequest for %s/%s: %v", ns, spec.ServiceAccountName, err)
	}
	writeFile(t, filepath.Join(sa, "token"), tok.Status.Token)
	writeFile(t, filepath.Join(sa, "ca.crt"), string(E.pki.caPEM))
	writeFile(t, filepath.Join(sa, "namespace"), ns)

	// The container's arguments, volume paths mapped to the local folders (longest first) and
	// the listen address to the Service's (kube-proxy's translation, played).
	paths := make([]string, 0, len(mounts))
	for p := range mounts {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	listen := fmt.Sprintf("%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	args := append([]string{}, ctr.Command...)
	args = append(args, ctr.Args...)
	rewrote := false
	for i, arg := range args {
		if arg == "--listen=0.0.0.0:8443" {
			args[i] = "--listen=" + listen
			rewrote = true
			continue
		}
		for _, p := range paths {
			if strings.Contains(arg, p+"/") {
				args[i] = strings.ReplaceAll(arg, p+"/", mounts[p]+"/")
				break
			}
		}
	}
	if !rewrote {
		t.Fatalf("the container does not listen on 0.0.0.0:8443 (its containerPort): %q", args)
	}
	if len(args) == 0 || args[0] != "serve" {
		t.Fatalf("the container's arguments do not start with serve: %q", args)
	}
	t.Logf("pod %s/%s: warrant %s", ns, name, strings.Join(args, " "))

	// A private mount namespace puts the token where the in-cluster configuration reads it.
	script := `mount -t tmpfs tmpfs /run && mkdir -p /run/secrets/kubernetes.io && ` +
		`ln -s "$WARRANT_POD_SA" /run/secrets/kubernetes.io/serviceaccount && exec "$@"`
	cmdArgs := append([]string{"--mount", "--propagation", "private", "sh", "-c", script, "warrant", E.warrantBin}, args...)
	env := append(os.Environ(), "WARRANT_POD_SA="+sa,
		"KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT="+strings.TrimPrefix(a.url[strings.LastIndex(a.url, ":"):], ":"))
	p, err := startProcEnv(E.dir, "warrant-chart-pod", env, "unshare", cmdArgs...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.stop(10 * time.Second) })
	return &pod{proc: p, url: "https://" + listen, host: fmt.Sprintf("%s.%s.svc", name, ns)}
}

// waitFinalizer waits until the Deployment carries the finalizer.
func waitFinalizer(t *testing.T, c *kubernetes.Clientset, ns, name, finalizer string, d time.Duration) *appsv1.Deployment {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		dep, err := c.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			for _, f := range dep.Finalizers {
				if f == finalizer {
					return dep
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s has no finalizer %s after %s (err %v)", ns, name, finalizer, d, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
