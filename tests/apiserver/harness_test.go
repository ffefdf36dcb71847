// Package apiserver runs a real etcd, two real kube-apiservers and a real `warrant serve` as
// processes on loopback, in a temp dir, and drives them with client-go and kubectl.
//
// Inputs (environment): WARRANT_BIN (the warrant binary built from this tree), KUBECTL_WARRANT_BIN
// (the kubectl plugin built from this tree; only the plugin's scenario needs it), KUBE_BIN_DIR
// (the directory holding kube-apiserver, etcd and kubectl, from build-tools.sh).
//
// kube-apiserver "shipped" gets authz-config/apiserver-authorization-config.yaml with only the
// kubeconfig path substituted; kube-apiserver "scenarios" gets
// testdata/scenarios-authorization-config.yaml (same substitution). Both reach warrant over mTLS
// with a shipped kubeconfig template, its placeholders filled in: "scenarios" through
// kubeconfigs/apiserver-to-warrant.yaml, "shipped" through
// kubeconfigs/apiserver-to-warrant-service.yaml (as it would reach the cluster service, by
// address with tls-server-name warrant.warrant-system.svc).
//
// The validation ring (ring_harness_test.go): kube-apiserver "scenarios" also writes its own
// audit log (testdata/scenarios-audit-policy.yaml) and presents the client certificate to
// admission webhooks (testdata/scenarios-admission-config.yaml); a second warrant,
// "warrant-admission", serves /admit from the same chain file with a metadata cache of that API
// server (--kubeconfig), and a ValidatingWebhookConfiguration derived from the shipped
// deploy/validating-webhook.yaml sends it the scenario API server's deletes.
package apiserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// repoRoot is the warrant checkout (two levels up from tests/apiserver).
var repoRoot = func() string {
	wd, _ := os.Getwd()
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}()

// proc is one child process with its log file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startProc(dir, name, bin string, args ...string) (*proc, error) {
	return startProcEnv(dir, name, nil, bin, args...)
}

// startProcEnv is startProc with an environment (nil: this process's).
func startProcEnv(dir, name string, env []string, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = f, f
	// Die with the test binary, even if it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

// stop sends SIGTERM, then SIGKILL after a grace period, and waits.
func (p *proc) stop(grace time.Duration) {
	if p == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(string(b), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ---- certificates -------------------------------------------------------------------------

type pki struct {
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  []byte
}

func newPKI() (*pki, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "warrant-apiserver-tier-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &pki{caCert: cert, caKey: key, caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// leaf writes NAME.crt / NAME.key signed by the CA.
func (p *pki) leaf(dir, name, cn string, usage x509.ExtKeyUsage) (string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
		// The Service's name too: the "shipped" API server reaches warrant through
		// kubeconfigs/apiserver-to-warrant-service.yaml, whose tls-server-name it is.
		tmpl.DNSNames = []string{"localhost", "warrant.warrant-system.svc"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return "", "", err
	}
	k8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", err
	}
	crt, kf := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(kf, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: k8}), 0o600); err != nil {
		return "", "", err
	}
	return crt, kf, nil
}

// ---- the environment ----------------------------------------------------------------------

// Test users of the static token file: token = "tok-" + name.
var testUsers = []struct{ name, groups string }{
	{"admin", "system:masters"},
	{"alice", "dev"},
	{"bob", "dev"},
	{"carol", "warrant-test:fail-closed"},
	{"dave", "dev"},
	{"erin", "dev"},
	{"lat-base", "warrant-test:baseline"},
	{"lat-cached", "warrant-test:cached"},
	{"lat-uncached", "dev"},
	{"pol-alice", "team-a"},
	{"pol-bob", "team-b"},
	// warrant-admission's identity (deploy/warrant.yaml's service account, authenticated by a
	// static token here): its cluster cache runs with exactly the shipped ClusterRole.
	{warrantSA, "system:serviceaccounts,system:serviceaccounts:warrant-system"},
}

// warrantSA is the user name of deploy/warrant.yaml's service account.
const warrantSA = "system:serviceaccount:warrant-system:warrant"

type env struct {
	dir         string
	kubeBin     string
	warrantBin  string
	pki         *pki
	etcd        *proc
	warrant     *proc
	warrantArgs []string
	warrantURL  string
	warrantCfg  string
	auditLog    string
	warrantHTTP *http.Client
	shipped     *apiserver
	scenarios   *apiserver

	warrantBuild string // WARRANT_BIN as given (warrantBin is the tier's private copy)
	pluginBin    string // KUBECTL_WARRANT_BIN, copied as kubectl-warrant ("" when not given)

	ring ring // the validation ring: warrant-admission, its webhook, the audit logs

	files tierFiles // what a further API server of the tier needs (conditional_test.go)
}

// tierFiles are the shared credentials and endpoints of the tier.
type tierFiles struct {
	etcdURL, ca, apiCrt, apiKey, clientCrt, clientKey, warrantCrt, warrantKey, tokens, saPub, saKey string
}

type apiserver struct {
	name string
	url  string
	proc *proc
	kcfg string // kubeconfig for kubectl (admin token)
}

var E *env

func TestMain(m *testing.M) {
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "apiserver tier setup failed:", err)
		if E != nil {
			for _, p := range []*proc{E.etcd, E.warrant, E.ring.admission} {
				if p != nil {
					fmt.Fprintf(os.Stderr, "--- %s log tail\n%s\n", p.name, p.tail(40))
				}
			}
			for _, a := range []*apiserver{E.shipped, E.scenarios} {
				if a != nil && a.proc != nil {
					fmt.Fprintf(os.Stderr, "--- %s log tail\n%s\n", a.proc.name, a.proc.tail(40))
				}
			}
		}
		code = 1
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	E = &env{
		kubeBin:    os.Getenv("KUBE_BIN_DIR"),
		warrantBin: os.Getenv("WARRANT_BIN"),
	}
	if E.kubeBin == "" || E.warrantBin == "" {
		return 0, fmt.Errorf("set KUBE_BIN_DIR and WARRANT_BIN (tests/apiserver/run.sh does)")
	}
	dir, err := os.MkdirTemp("", "warrant-apiserver-")
	if err != nil {
		return 0, err
	}
	E.dir = dir
	// A private copy of the binary: builds in other worktrees share CARGO_TARGET_DIR and may
	// replace the file while the tier runs (a restarted warrant must be the same warrant).
	E.warrantBuild = E.warrantBin
	if E.warrantBin, err = copyExecutable(E.warrantBin, filepath.Join(dir, "warrant-bin")); err != nil {
		return 0, err
	}
	if p := os.Getenv("KUBECTL_WARRANT_BIN"); p != "" {
		if err := os.MkdirAll(filepath.Join(dir, "plugin-bin"), 0o755); err != nil {
			return 0, err
		}
		if E.pluginBin, err = copyExecutable(p, filepath.Join(dir, "plugin-bin", "kubectl-warrant")); err != nil {
			return 0, err
		}
	}
	defer func() {
		// warrant-admission first: its watches would hold kube-apiserver's graceful shutdown
		// open until the grace period ends.
		E.ring.admission.stop(10 * time.Second)
		for _, a := range []*apiserver{E.shipped, E.scenarios} {
			if a != nil {
				a.proc.stop(10 * time.Second)
			}
		}
		E.warrant.stop(10 * time.Second)
		E.etcd.stop(10 * time.Second)
		if os.Getenv("WARRANT_APISERVER_KEEP") == "" {
			os.RemoveAll(dir)
		} else {
			fmt.Println("kept", dir)
		}
	}()
	if err := E.setup(); err != nil {
		return 0, err
	}
	code := m.Run()
	if code != 0 {
		for _, p := range []*proc{E.warrant, E.ring.admission, E.shipped.proc, E.scenarios.proc} {
			if p != nil {
				fmt.Fprintf(os.Stderr, "--- %s log tail\n%s\n", p.name, p.tail(30))
			}
		}
	}
	return code, nil
}

// copyExecutable copies the file at src to dst (mode 0700) and returns dst.
func copyExecutable(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o700)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", err
	}
	return dst, out.Close()
}

func (e *env) setup() error {
	var err error
	if e.pki, err = newPKI(); err != nil {
		return err
	}
	caFile := filepath.Join(e.dir, "ca.crt")
	if err := os.WriteFile(caFile, e.pki.caPEM, 0o600); err != nil {
		return err
	}
	asCrt, asKey, err := e.pki.leaf(e.dir, "apiserver", "kube-apiserver", x509.ExtKeyUsageServerAuth)
	if err != nil {
		return err
	}
	wCrt, wKey, err := e.pki.leaf(e.dir, "warrant", "warrant", x509.ExtKeyUsageServerAuth)
	if err != nil {
		return err
	}
	cCrt, cKey, err := e.pki.leaf(e.dir, "apiserver-client", "kube-apiserver", x509.ExtKeyUsageClientAuth)
	if err != nil {
		return err
	}
	// Service-account signing key.
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	sa8, _ := x509.MarshalPKCS8PrivateKey(saKey)
	saFile := filepath.Join(e.dir, "sa.key")
	if err := os.WriteFile(saFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: sa8}), 0o600); err != nil {
		return err
	}
	saPubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	saPub := filepath.Join(e.dir, "sa.pub")
	if err := os.WriteFile(saPub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPubDER}), 0o600); err != nil {
		return err
	}
	var tokens bytes.Buffer
	for i, u := range testUsers {
		fmt.Fprintf(&tokens, "tok-%s,%s,uid-%d,\"%s\"\n", u.name, u.name, i, u.groups)
	}
	tokFile := filepath.Join(e.dir, "tokens.csv")
	if err := os.WriteFile(tokFile, tokens.Bytes(), 0o600); err != nil {
		return err
	}

	// etcd
	etcdPort, _ := freePort()
	peerPort, _ := freePort()
	etcdDir := filepath.Join(e.dir, "etcd")
	if err := os.MkdirAll(etcdDir, 0o700); err != nil {
		return err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	e.etcd, err = startProc(e.dir, "etcd", filepath.Join(e.kubeBin, "etcd"),
		"--name=default", "--data-dir="+etcdDir,
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL, "--unsafe-no-fsync", "--log-level=error")
	if err != nil {
		return err
	}
	if err := waitHTTP(http.DefaultClient, etcdURL+"/health", "", 60*time.Second, e.etcd); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}

	e.files = tierFiles{etcdURL: etcdURL, ca: caFile, apiCrt: asCrt, apiKey: asKey, clientCrt: cCrt,
		clientKey: cKey, warrantCrt: wCrt, warrantKey: wKey, tokens: tokFile, saPub: saPub, saKey: saFile}

	// warrant
	wPort, _ := freePort()
	e.warrantURL = fmt.Sprintf("https://127.0.0.1:%d", wPort)
	e.warrantCfg = filepath.Join(e.dir, "warrant", "warrant.yaml")
	e.auditLog = filepath.Join(e.dir, "warrant-audit.jsonl")
	if err := os.MkdirAll(filepath.Dir(e.warrantCfg), 0o700); err != nil {
		return err
	}
	servedConfig = cfgAlwaysDeny
	if err := os.WriteFile(e.warrantCfg, []byte(cfgAlwaysDeny), 0o600); err != nil {
		return err
	}
	e.warrantArgs = []string{"serve", "--config", e.warrantCfg, "--listen", fmt.Sprintf("127.0.0.1:%d", wPort),
		"--tls-cert-file", wCrt, "--tls-private-key-file", wKey, "--client-ca-file", caFile,
		"--state-dir", filepath.Join(e.dir, "warrant-state"), "--audit-log", e.auditLog,
		"--file-check-interval", "1s", "--shutdown-grace-period", "2s"}
	cliCert, err := tls.LoadX509KeyPair(cCrt, cKey)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(e.pki.caPEM)
	e.warrantHTTP = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cliCert}}}}
	if err := e.startWarrant(); err != nil {
		return err
	}

	// The webhook kubeconfig from the shipped template: only placeholders replaced.
	tmpl, err := os.ReadFile(filepath.Join(repoRoot, "kubeconfigs", "apiserver-to-warrant.yaml"))
	if err != nil {
		return err
	}
	kc := strings.NewReplacer(
		"WARRANT_HOST:8443", fmt.Sprintf("127.0.0.1:%d", wPort),
		"WARRANT_CA_FILE", caFile, "CLIENT_CERT_FILE", cCrt, "CLIENT_KEY_FILE", cKey,
	).Replace(string(tmpl))
	kcFile := filepath.Join(e.dir, "apiserver-to-warrant.yaml")
	if err := os.WriteFile(kcFile, []byte(kc), 0o600); err != nil {
		return err
	}
	// The "shipped" API server reaches warrant as it would reach the cluster service: the
	// shipped template for it, the Service's ClusterIP:443 replaced by warrant's loopback
	// address, its certificate verified for the Service's name (tls-server-name).
	svcTmpl, err := os.ReadFile(filepath.Join(repoRoot, "kubeconfigs", "apiserver-to-warrant-service.yaml"))
	if err != nil {
		return err
	}
	svcKc := strings.NewReplacer(
		"WARRANT_SERVICE_IP:443", fmt.Sprintf("127.0.0.1:%d", wPort),
		"WARRANT_CA_FILE", caFile, "CLIENT_CERT_FILE", cCrt, "CLIENT_KEY_FILE", cKey,
	).Replace(string(svcTmpl))
	svcKcFile := filepath.Join(e.dir, "apiserver-to-warrant-service.yaml")
	if err := os.WriteFile(svcKcFile, []byte(svcKc), 0o600); err != nil {
		return err
	}

	// The scenario API server's audit log and admission webhook client (ring_harness_test.go).
	ringArgs, err := e.prepareRing(caFile, cCrt, cKey, wCrt, wKey)
	if err != nil {
		return err
	}
	common := func(name string, port int, authz string) []string {
		return []string{
			"--etcd-servers=" + etcdURL, "--etcd-prefix=/" + name,
			"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
			"--tls-cert-file=" + asCrt, "--tls-private-key-file=" + asKey, "--client-ca-file=" + caFile,
			"--token-auth-file=" + tokFile,
			"--service-account-issuer=https://kubernetes.default.svc",
			"--service-account-key-file=" + saPub, "--service-account-signing-key-file=" + saFile,
			"--service-cluster-ip-range=10.0.0.0/24",
			"--authorization-config=" + authz,
			"--disable-admission-plugins=ServiceAccount", "--endpoint-reconciler-type=none",
			"--enable-priority-and-fairness=false", "--profiling=false", "--v=1",
		}
	}
	for _, spec := range []struct {
		name, src, kubeconfig string
		dst                   **apiserver
	}{
		{"shipped", filepath.Join(repoRoot, "authz-config", "apiserver-authorization-config.yaml"), svcKcFile, &e.shipped},
		{"scenarios", filepath.Join(repoRoot, "tests", "apiserver", "testdata", "scenarios-authorization-config.yaml"), kcFile, &e.scenarios},
	} {
		src, err := os.ReadFile(spec.src)
		if err != nil {
			return err
		}
		authz := filepath.Join(e.dir, spec.name+"-authorization-config.yaml")
		if err := os.WriteFile(authz, []byte(strings.ReplaceAll(string(src), "WARRANT_KUBECONFIG", spec.kubeconfig)), 0o600); err != nil {
			return err
		}
		port, _ := freePort()
		args := common(spec.name, port, authz)
		if spec.name == "scenarios" {
			args = append(args, ringArgs...)
			// Constrained impersonation (alpha in 1.35, on by default from 1.36): the API
			// server then asks warrant the new verbs (impersonation_test.go).
			args = append(args, "--feature-gates=ConstrainedImpersonation=true")
		}
		p, err := startProc(e.dir, "kube-apiserver-"+spec.name, filepath.Join(e.kubeBin, "kube-apiserver"), args...)
		if err != nil {
			return err
		}
		a := &apiserver{name: spec.name, url: fmt.Sprintf("https://127.0.0.1:%d", port), proc: p}
		*spec.dst = a
		a.kcfg = filepath.Join(e.dir, spec.name+"-kubeconfig.yaml")
		if err := os.WriteFile(a.kcfg, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: admin, user: {token: tok-admin}}]
contexts: [{name: c, context: {cluster: c, user: admin}}]
current-context: c
`, a.url, caFile)), 0o600); err != nil {
			return err
		}
	}
	apiHTTP := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	for _, a := range []*apiserver{e.shipped, e.scenarios} {
		if err := waitHTTP(apiHTTP, a.url+"/readyz", "tok-admin", 180*time.Second, a.proc); err != nil {
			return fmt.Errorf("kube-apiserver %s: %w", a.name, err)
		}
	}
	v, _ := exec.Command(filepath.Join(e.kubeBin, "kubectl"), "--kubeconfig", e.shipped.kcfg, "version", "-o", "json").Output()
	var ver struct {
		ServerVersion struct{ GitVersion string } `json:"serverVersion"`
	}
	_ = json.Unmarshal(v, &ver)
	fmt.Printf("kube-apiserver %s ready at %s and %s; warrant at %s\n", ver.ServerVersion.GitVersion, e.shipped.url, e.scenarios.url, e.warrantURL)
	// The validation ring, once the API server it watches is up and the shipped cluster
	// service (namespace, service account, ClusterRole and binding) is installed in it.
	if err := e.installClusterService(); err != nil {
		return err
	}
	return e.startRing()
}

func (e *env) startWarrant() error {
	var err error
	e.warrant, err = startProc(e.dir, "warrant", e.warrantBin, e.warrantArgs...)
	if err != nil {
		return err
	}
	if err := waitHTTP(e.warrantHTTP, e.warrantURL+"/readyz", "", 30*time.Second, e.warrant); err != nil {
		return fmt.Errorf("warrant: %w", err)
	}
	return nil
}

func waitHTTP(c *http.Client, url, token string, d time.Duration, p *proc) error {
	deadline := time.Now().Add(d)
	var last string
	for time.Now().Before(deadline) {
		if p != nil && p.exited() {
			return fmt.Errorf("%s exited: %s", p.name, p.tail(20))
		}
		req, _ := http.NewRequest("GET", url, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s: %s", url, d, last)
}

// ---- warrant configuration and audit --------------------------------------------------------

const cfgAlwaysDeny = `apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: AlwaysDeny
    name: protected-deletions
`

const cfgAlwaysAllow = `apiVersion: warrant.dev/v1alpha1
kind: AuthorizationConfiguration
authorizers:
  - type: AlwaysAllow
    name: allow-everything
`

// servedConfig is the chain file's content as the tier last wrote it (cfgAlwaysDeny at setup).
var servedConfig string

// configRestorers are the tests that have registered the restore of the chain file.
var configRestorers = map[*testing.T]bool{}

// setWarrantConfig replaces warrant's config file atomically and waits until warrant serves it
// (its warrant_config_info hash is the sha256 of the file's bytes). Every test of the tier
// shares one warrant and one warrant-admission, so the first change a test makes is undone when
// it ends: the file goes back to what it was before, and the next test starts from the
// configuration the tier set up, whatever ran before it.
func setWarrantConfig(t *testing.T, content string) {
	t.Helper()
	if !configRestorers[t] {
		configRestorers[t] = true
		before := servedConfig
		t.Cleanup(func() {
			delete(configRestorers, t)
			applyWarrantConfig(t, before)
		})
	}
	applyWarrantConfig(t, content)
}

// applyWarrantConfig writes content as the chain file and waits until every warrant serves it.
func applyWarrantConfig(t *testing.T, content string) {
	t.Helper()
	servedConfig = content
	sum := sha256.Sum256([]byte(content))
	want := `hash="sha256:` + hex.EncodeToString(sum[:]) + `"`
	tmp := E.warrantCfg + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, E.warrantCfg); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, w := range E.warrants() {
		for !strings.Contains(metricsOf(w.url), want) {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not load the new config within 10s; metrics:\n%s", w.name, grepLines(metricsOf(w.url), "warrant_config"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if E.ring.running() {
		if err := E.ring.waitReady(E.warrantHTTP, content, time.Until(deadline)+5*time.Second); err != nil {
			t.Fatalf("warrant-admission after the config change: %v", err)
		}
	}
}

// servedWarrant is one running warrant process the config file feeds.
type servedWarrant struct{ name, url string }

// warrants are the warrant processes serving the config file: warrant (the authorization
// webhook) and, when running, warrant-admission (the validation ring).
func (e *env) warrants() []servedWarrant {
	out := []servedWarrant{{"warrant", e.warrantURL}}
	if e.ring.running() {
		out = append(out, servedWarrant{"warrant-admission", e.ring.url})
	}
	return out
}

func warrantMetrics(t *testing.T) string {
	t.Helper()
	return metricsOf(E.warrantURL)
}

// metricsOf reads one warrant's /metrics ("" when it does not answer).
func metricsOf(base string) string {
	resp, err := E.warrantHTTP.Get(base + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// hasLine says whether s has a line equal to line.
func hasLine(s, line string) bool {
	for _, l := range strings.Split(s, "\n") {
		if l == line {
			return true
		}
	}
	return false
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// auditRecord is the part of warrant's audit line the tests read.
type auditRecord struct {
	Time               time.Time `json:"time"`
	User               string    `json:"user"`
	Groups             []string  `json:"groups"`
	ResourceAttributes *struct {
		Namespace     string          `json:"namespace"`
		Verb          string          `json:"verb"`
		Group         string          `json:"group"`
		Resource      string          `json:"resource"`
		Subresource   string          `json:"subresource"`
		Name          string          `json:"name"`
		LabelSelector json.RawMessage `json:"labelSelector"`
		FieldSelector json.RawMessage `json:"fieldSelector"`
	} `json:"resourceAttributes"`
	Decision  string `json:"decision"`
	DecidedBy string `json:"decidedBy"`
	Code      string `json:"code"`
	Reason    string `json:"reason"`
	Allowed   bool   `json:"allowed"`
	Denied    bool   `json:"denied"`
}

// auditMark is a position in warrant's audit log.
type auditMark int64

func markAudit() auditMark {
	fi, err := os.Stat(E.auditLog)
	if err != nil {
		return 0
	}
	return auditMark(fi.Size())
}

// auditSince returns every record written after the mark.
func auditSince(t *testing.T, m auditMark) []auditRecord {
	t.Helper()
	f, err := os.Open(E.auditLog)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	if _, err := f.Seek(int64(m), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	var out []auditRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r auditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("audit line is not JSON: %v: %s", err, sc.Text())
		}
		out = append(out, r)
	}
	return out
}

// waitAudit waits (up to 5s) for a record after the mark that satisfies pred.
func waitAudit(t *testing.T, m auditMark, what string, pred func(auditRecord) bool) auditRecord {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, r := range auditSince(t, m) {
			if pred(r) {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("warrant's audit has no record of %s; records since mark: %+v", what, auditSince(t, m))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func isReview(user, verb, resource, ns string) func(auditRecord) bool {
	return func(r auditRecord) bool {
		return r.User == user && r.ResourceAttributes != nil && r.ResourceAttributes.Verb == verb &&
			r.ResourceAttributes.Resource == resource && (ns == "*" || r.ResourceAttributes.Namespace == ns)
	}
}

// ---- clients --------------------------------------------------------------------------------

func restConfig(a *apiserver, token string) *rest.Config {
	return &rest.Config{
		Host:            a.url,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: E.pki.caPEM},
		QPS:             -1, // no client-side rate limit (latency figures)
		Timeout:         30 * time.Second,
	}
}

func client(t *testing.T, a *apiserver, user string) *kubernetes.Clientset {
	t.Helper()
	c, err := kubernetes.NewForConfig(restConfig(a, "tok-"+user))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// impersonating returns an admin client acting as user/groups.
func impersonating(t *testing.T, a *apiserver, user string, groups ...string) *kubernetes.Clientset {
	t.Helper()
	cfg := restConfig(a, "tok-admin")
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: groups}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// kubectl runs the kubectl built with kube-apiserver against an API server as admin.
func kubectl(t *testing.T, a *apiserver, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(E.kubeBin, "kubectl"), append([]string{"--kubeconfig", a.kcfg}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}
