package apiserver

// Executable documentation: the shell blocks of docs/install.md and of the README's tour that a
// reader runs are marked with an HTML comment before their fence, and these tests run them as
// written, in order, with bash, against a real kube-apiserver of this tier:
//
//	<!-- exec -->                  must exit 0
//	<!-- exec: output "TEXT" -->   must exit 0 and print TEXT (`output "TEXT" status N`: exit N)
//	<!-- exec: fails "TEXT" -->    must exit non-zero and print TEXT (a refusal the page shows)
//	<!-- exec: background -->      a server: started, then left running until the test ends
//	<!-- exec: server-dry-run -->  a ```yaml block: `kubectl apply --dry-run=server`, so the API
//	                               server validates it (cert-manager's published CRDs installed first)
//	<!-- exec-runner: ACTION -->   what the test itself does at that point (below)
//
// Each block runs in its own `bash -c` with `set -euo pipefail`, but as in one shell: the
// variables a block sets and its working directory carry over to the next block, as they do
// for a reader typing the blocks into one terminal. They run in a scratch directory holding
// a copy of the repository's authz-config/, deploy/, kubeconfigs/ and tests/fixtures/, with the
// tier's warrant and kubectl first on PATH. For the install guide, KUBE_ETC points into the
// scratch directory instead of /etc/kubernetes, and KUBECONFIG at an administrator
// (system:masters) of the guide's own kube-apiserver. What a node does and a test cannot is
// played by the test, openly:
//
//   - start-static-pod: the kubelet. The manifest the guide wrote to $KUBE_ETC/manifests/ is
//     read; its container's args are run with each mount path replaced by its hostPath
//     (/etc/kubernetes mapped to $KUBE_ETC), as the pod's runAsUser (65532) when the test runs
//     as root, so the guide's file ownership is what lets it start; the test waits for /readyz.
//   - start-kube-apiserver, restart-kube-apiserver: the edit of kube-apiserver's manifest. A
//     kube-apiserver of this tier's etcd (its own prefix) is started with the flags the guide
//     tells the reader to set: --authorization-config from $KUBE_ETC/warrant-apiserver/ and,
//     once the guide has written it, --admission-control-config-file. Its other flags are the
//     tier's (certificates, static tokens).
//
// The static pod listens on 127.0.0.1:8443 as the guide says, so these tests need that port
// free; they say so and fail otherwise.

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// docBlock is one marked block of a page.
type docBlock struct {
	line   int    // 1-based line of the marker
	kind   string // exec, output, fails, background, runner
	expect string // output/fails: the text; runner: the action
	status int    // output: the exit status it must have
	script string
}

var markerRe = regexp.MustCompile(`^<!-- (exec|exec-runner)(?::\s*(.*?))?\s*-->$`)
var expectRe = regexp.MustCompile(`^(output|fails)\s+"(.*)"(?:\s+status\s+(\d+))?$`)

// docBlocks reads the marked blocks of the page at rel (relative to the repository).
func docBlocks(t *testing.T, rel string) []docBlock {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, rel))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	var out []docBlock
	for i := 0; i < len(lines); i++ {
		m := markerRe.FindStringSubmatch(strings.TrimSpace(lines[i]))
		if m == nil {
			continue
		}
		b := docBlock{line: i + 1}
		if m[1] == "exec-runner" {
			b.kind, b.expect = "runner", m[2]
			out = append(out, b)
			continue
		}
		fence := "```sh"
		switch {
		case m[2] == "":
			b.kind = "exec"
		case m[2] == "background":
			b.kind = "background"
		case m[2] == "server-dry-run":
			b.kind, fence = "server-dry-run", "```yaml"
		default:
			e := expectRe.FindStringSubmatch(m[2])
			if e == nil {
				t.Fatalf("%s:%d: unknown marker %q", rel, i+1, lines[i])
			}
			b.kind, b.expect = e[1], e[2]
			if e[3] != "" {
				fmt.Sscan(e[3], &b.status)
			}
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], fence) {
			t.Fatalf("%s:%d: this marker must be followed by a %s fence", rel, i+1, fence)
		}
		var body []string
		j := i + 2
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			body = append(body, lines[j])
		}
		if j == len(lines) {
			t.Fatalf("%s:%d: unclosed fence", rel, i+1)
		}
		b.script = strings.Join(body, "\n") + "\n"
		out = append(out, b)
		i = j
	}
	if len(out) == 0 {
		t.Fatalf("%s: no marked block", rel)
	}
	return out
}

// docRun is the scratch world one page's blocks run in.
type docRun struct {
	t     *testing.T
	page  string
	dir   string   // the scratch "checkout", the blocks' working directory
	env   []string // the blocks' environment
	logs  string
	procs []*proc
	state string // the shell state carried from block to block (declare -p, cd)
	// kubeconfig is the administrator's, for server-dry-run blocks; crds says whether the
	// published CRDs are installed.
	kubeconfig string
	crds       bool
	prelude    string
}

func newDocRun(t *testing.T, page string, extraEnv ...string) *docRun {
	t.Helper()
	dir, err := os.MkdirTemp("", "warrant-docs-")
	if err != nil {
		t.Fatal(err)
	}
	// Readable by the static pod's user (65532) on the way to the files it mounts.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := &docRun{t: t, page: page, dir: dir, logs: filepath.Join(dir, "logs")}
	t.Cleanup(func() {
		for i := len(r.procs) - 1; i >= 0; i-- {
			r.procs[i].stopGroup(10 * time.Second)
		}
		if t.Failed() || os.Getenv("WARRANT_APISERVER_KEEP") != "" {
			t.Logf("kept %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	if err := os.MkdirAll(r.logs, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"authz-config", "deploy", "kubeconfigs", "tests/fixtures"} {
		cmd := exec.Command("cp", "-a", filepath.Join(repoRoot, sub), filepath.Join(dir, filepath.Dir(sub))+"/")
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(sub)), 0o755); err != nil {
			t.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("copy %s: %v %s", sub, err, out)
		}
	}
	// warrant and kubectl first on PATH; warrant readable and executable by anyone.
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := copyExecutable(E.warrantBin, filepath.Join(bin, "warrant")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(bin, "warrant"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(E.kubeBin, "kubectl"), filepath.Join(bin, "kubectl")); err != nil {
		t.Fatal(err)
	}
	r.env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "HOME="+dir)
	r.env = append(r.env, extraEnv...)
	r.state = filepath.Join(r.logs, "shell-state")
	return r
}

// shellPrelude makes a block's shell continue the previous one's: it sources the saved state
// and, when the block succeeds, saves the variables it set (those bash does not start with)
// and its working directory.
func (r *docRun) shellPrelude() string {
	if r.prelude != "" {
		return r.prelude
	}
	cmd := exec.Command("bash", "-c", "compgen -v")
	cmd.Env = r.env
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("bash: %v", err)
	}
	baseline := " " + strings.Join(strings.Fields(string(out)), " ") + " __rc __v "
	r.prelude = fmt.Sprintf(`set -euo pipefail
if [ -f %[1]q ]; then source %[1]q; fi
trap '__rc=$?; if [ $__rc -eq 0 ]; then { for __v in $(compgen -v); do case %[2]q in *" $__v "*) ;; *) declare -p "$__v" 2>/dev/null || true;; esac; done; printf "cd %%q\n" "$PWD"; } > %[1]q.new && mv %[1]q.new %[1]q; fi' EXIT
`, r.state, baseline)
	return r.prelude
}

// needPort8443 fails the test unless 127.0.0.1:8443 is free.
func needPort8443(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:8443")
	if err != nil {
		t.Fatalf("the documented commands listen on 127.0.0.1:8443, which is taken: %v", err)
	}
	l.Close()
}

// run runs one block and checks what it must do.
func (r *docRun) run(b docBlock) {
	t := r.t
	t.Helper()
	where := fmt.Sprintf("%s:%d", r.page, b.line)
	script := r.shellPrelude() + b.script
	if b.kind == "server-dry-run" {
		a := &apiserver{name: "docs", kcfg: r.kubeconfig}
		if !r.crds {
			installPublishedCRDs(t, a)
			r.crds = true
		}
		out, err := r.kubectlStdin(b.script, "apply", "--dry-run=server", "-f", "-")
		t.Logf("%s applied (server dry run):\n%s", where, out)
		if err != nil {
			t.Fatalf("%s: the API server refuses the page's manifests: %v", where, err)
		}
		return
	}
	if b.kind == "background" {
		name := fmt.Sprintf("block-%d", b.line)
		p, err := startDocProc(r.dir, r.logs, name, r.env, nil, "bash", "-c", script)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		r.procs = append(r.procs, p)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir, cmd.Env = r.dir, r.env
	// On timeout, the whole block goes (kubectl included), and its pipes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	t.Logf("%s ran:\n%s--- output:\n%s", where, b.script, out)
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after 2 minutes", where)
	}
	switch b.kind {
	case "exec":
		if err != nil {
			t.Fatalf("%s failed (%v)", where, err)
		}
	case "output":
		if cmd.ProcessState.ExitCode() != b.status || !strings.Contains(string(out), b.expect) {
			t.Fatalf("%s: want exit %d and %q in the output, got %v", where, b.status, b.expect, err)
		}
	case "fails":
		if err == nil || !strings.Contains(string(out), b.expect) {
			t.Fatalf("%s: want a failure printing %q, got %v", where, b.expect, err)
		}
	}
}

// startDocProc is startProc with an environment, a working directory and, optionally, a user.
func startDocProc(dir, logDir, name string, env []string, cred *syscall.Credential, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true, Credential: cred}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(p.done) }()
	return p, nil
}

// startStaticPod plays the kubelet for the manifest at path: mounts become paths, the
// container's args run as the pod's user, and it must become ready.
func (r *docRun) startStaticPod(kubeEtc, path string) {
	t := r.t
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the guide's static pod manifest: %v", err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(raw, &pod); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%s: want one container", path)
	}
	c := pod.Spec.Containers[0]
	if c.Image != docsImage {
		t.Fatalf("%s: the static pod runs image %q, not the reader's %q", path, c.Image, docsImage)
	}
	hostPaths := map[string]string{}
	for _, v := range pod.Spec.Volumes {
		if v.HostPath == nil {
			t.Fatalf("%s: volume %s is not a hostPath", path, v.Name)
		}
		hostPaths[v.Name] = strings.Replace(v.HostPath.Path, "/etc/kubernetes", kubeEtc, 1)
	}
	args := append([]string(nil), c.Args...)
	for _, m := range c.VolumeMounts {
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], m.MountPath, hostPaths[m.Name])
		}
	}
	var cred *syscall.Credential
	if sc := pod.Spec.SecurityContext; os.Geteuid() == 0 && sc != nil && sc.RunAsUser != nil {
		uid := uint32(*sc.RunAsUser)
		cred = &syscall.Credential{Uid: uid, Gid: uid}
	}
	runDir := filepath.Join(r.dir, "static-pod")
	if err := os.MkdirAll(runDir, 0o777); err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(runDir, 0o777)
	t.Logf("kubelet stand-in: warrant %s (as uid %v)", strings.Join(args, " "), cred)
	p, err := startDocProc(runDir, r.logs, "static-pod-warrant", r.env, cred, filepath.Join(r.dir, "bin", "warrant"), args...)
	if err != nil {
		t.Fatal(err)
	}
	r.procs = append(r.procs, p)
	insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	if err := waitHTTP(insecure, "https://127.0.0.1:8443/readyz", "", 30*time.Second, p); err != nil {
		t.Fatalf("the static pod's warrant: %v", err)
	}
}

// startKubeAPIServer plays the edit of kube-apiserver's manifest: the tier's flags plus the
// ones the install guide sets (withWarrant), or kubeadm's --authorization-mode that the
// uninstall guide puts back. It writes the administrator's kubeconfig.
func (r *docRun) startKubeAPIServer(kubeEtc, kubeconfig string, withWarrant bool) {
	t := r.t
	t.Helper()
	r.stopProc("docs-kube-apiserver")
	a := filepath.Join(kubeEtc, "warrant-apiserver")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	f := E.files
	args := []string{
		"--etcd-servers=" + f.etcdURL, "--etcd-prefix=/docs-" + filepath.Base(r.dir),
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file=" + f.apiCrt, "--tls-private-key-file=" + f.apiKey, "--client-ca-file=" + f.ca,
		"--token-auth-file=" + f.tokens,
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + f.saPub, "--service-account-signing-key-file=" + f.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount", "--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false", "--profiling=false", "--v=1",
	}
	if !withWarrant {
		// kubeadm's own setting, which the uninstall guide puts back.
		args = append(args, "--authorization-mode=Node,RBAC")
	} else {
		// What the install guide sets.
		args = append(args, "--authorization-config="+filepath.Join(a, "authorization-config.yaml"))
		if _, err := os.Stat(filepath.Join(a, "admission-config.yaml")); err == nil {
			args = append(args, "--admission-control-config-file="+filepath.Join(a, "admission-config.yaml"))
		}
	}
	t.Logf("kube-apiserver stand-in: %s", strings.Join(args, " "))
	p, err := startDocProc(r.dir, r.logs, "docs-kube-apiserver", os.Environ(), nil, filepath.Join(E.kubeBin, "kube-apiserver"), args...)
	if err != nil {
		t.Fatal(err)
	}
	r.procs = append(r.procs, p)
	url := fmt.Sprintf("https://127.0.0.1:%d", port)
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: admin, user: {token: tok-admin}}]
contexts: [{name: c, context: {cluster: c, user: admin}}]
current-context: c
`, url, f.ca)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := waitHTTP(E.warrantHTTP, url+"/readyz", "tok-admin", 120*time.Second, p); err != nil {
		t.Fatalf("the guide's kube-apiserver: %v", err)
	}
}

// installRun runs docs/install.md, then each further page, in one scratch world; the runner
// actions of every page are the kubelet's and kube-apiserver's manifest edits (see the top).
func installRun(t *testing.T, pages ...string) *docRun {
	t.Helper()
	needPort8443(t)
	r := newDocRun(t, "docs/install.md")
	kubeEtc := filepath.Join(r.dir, "etc-kubernetes")
	kubeconfig := filepath.Join(r.dir, "admin.kubeconfig")
	if err := os.MkdirAll(filepath.Join(kubeEtc, "manifests"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An image name of the reader's: the guide must put it in both manifests.
	r.env = append(r.env, "KUBE_ETC="+kubeEtc, "KUBECONFIG="+kubeconfig, "WARRANT_IMAGE="+docsImage)
	r.kubeconfig = kubeconfig
	for _, page := range append([]string{"docs/install.md"}, pages...) {
		r.page = page
		for _, b := range docBlocks(t, page) {
			if b.kind != "runner" {
				r.run(b)
				continue
			}
			switch b.expect {
			case "start-static-pod":
				r.startStaticPod(kubeEtc, filepath.Join(kubeEtc, "manifests", "warrant.yaml"))
			case "stop-static-pod":
				if _, err := os.Stat(filepath.Join(kubeEtc, "manifests", "warrant.yaml")); err == nil {
					t.Fatalf("%s:%d: the static pod manifest is still in place", page, b.line)
				}
				r.stopProc("static-pod-warrant")
			case "start-kube-apiserver", "restart-kube-apiserver":
				r.startKubeAPIServer(kubeEtc, kubeconfig, true)
			case "restore-kube-apiserver":
				r.startKubeAPIServer(kubeEtc, kubeconfig, false)
			case "seed-held-object":
				r.seedHeldObject()
			case "check-held-object-gone":
				r.waitHeldObjectGone()
			default:
				t.Fatalf("%s:%d: unknown runner action %q", page, b.line, b.expect)
			}
		}
	}
	return r
}

func (r *docRun) stopProc(name string) {
	for _, p := range r.procs {
		if p.name == name {
			p.stopGroup(10 * time.Second)
		}
	}
}

// stopGroup stops p and everything it started (a block's `bash -c` and the server in it):
// SIGTERM to the process group, SIGKILL after the grace period.
func (p *proc) stopGroup(grace time.Duration) {
	if p == nil || p.exited() {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
}

// kubectl runs kubectl in the scratch world (the guide's administrator).
func (r *docRun) kubectl(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(E.kubeBin, "kubectl"), args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// seedHeldObject leaves what a warrant gone mid-hold leaves: a Terminating Deployment held by
// warrant's finalizer (next to a finalizer of someone else's, which must survive the clean-up
// until the test removes it).
func (r *docRun) seedHeldObject() {
	t := r.t
	t.Helper()
	manifest := `{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "held"}}`
	if out, err := r.kubectlStdin(manifest, "apply", "-f", "-"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	deployment := `{"apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "orders", "namespace": "held", "finalizers": ["warrant.dev/deletion-cooldown", "example.com/keep"]},
 "spec": {"selector": {"matchLabels": {"app": "orders"}},
          "template": {"metadata": {"labels": {"app": "orders"}}, "spec": {"containers": [{"name": "app", "image": "example.invalid/app:1"}]}}}}`
	if out, err := r.kubectlStdin(deployment, "apply", "-f", "-"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := r.kubectl("-n", "held", "delete", "deployment", "orders", "--wait=false"); err != nil {
		t.Fatalf("%v %s", err, out)
	}
}

func (r *docRun) kubectlStdin(stdin string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(E.kubeBin, "kubectl"), args...)
	cmd.Dir, cmd.Env, cmd.Stdin = r.dir, r.env, strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// waitHeldObjectGone checks the clean-up: warrant's finalizer is gone and the other one kept;
// once that one is removed too, the object goes.
func (r *docRun) waitHeldObjectGone() {
	t := r.t
	t.Helper()
	out, err := r.kubectl("-n", "held", "get", "deployment", "orders", "-o", "jsonpath={.metadata.finalizers}")
	if err != nil || strings.Contains(out, "warrant.dev/deletion-cooldown") || !strings.Contains(out, "example.com/keep") {
		t.Fatalf("after the clean-up, want only example.com/keep left, got %q (%v)", out, err)
	}
	if out, err := r.kubectl("-n", "held", "patch", "deployment", "orders", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := r.kubectl("-n", "held", "get", "deployment", "orders")
		if err != nil && strings.Contains(out, "NotFound") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the held Deployment is still there: %s", out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// docsImage is the image the guides' readers pushed, as the test gives it.
const docsImage = "registry.example/warrant:docs"

func TestInstallGuideRunsAsWritten(t *testing.T) {
	r := installRun(t)
	if out, err := r.kubectl("-n", "warrant-system", "get", "deployment", "warrant", "-o", "jsonpath={.spec.template.spec.containers[*].image}"); err != nil || out != docsImage {
		t.Fatalf("the Deployment runs image %q (%v), not the reader's %q", out, err, docsImage)
	}
	// The guide's warrant answered the guide's kube-apiserver: its audit (the static pod's
	// standard output) has jane's refused delete.
	log, _ := os.ReadFile(filepath.Join(r.logs, "static-pod-warrant.log"))
	if !strings.Contains(string(log), `"user":"jane"`) {
		t.Fatalf("the static pod's warrant recorded no review of jane's delete:\n%s", log)
	}
}

func TestUninstallGuideRunsAsWritten(t *testing.T) {
	installRun(t, "docs/uninstall.md")
}

func TestReadmeTourRunsAsWritten(t *testing.T) {
	const page = "README.md"
	blocks := docBlocks(t, page)
	needPort8443(t)
	r := newDocRun(t, page)
	for _, b := range blocks {
		if b.kind == "runner" {
			switch b.expect {
			case "wait-for-serve":
				insecure := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
				var p *proc
				if len(r.procs) > 0 {
					p = r.procs[len(r.procs)-1]
				}
				if err := waitHTTP(insecure, "https://127.0.0.1:8443/readyz", "", 30*time.Second, p); err != nil {
					t.Fatalf("warrant serve from the tour: %v", err)
				}
			default:
				t.Fatalf("%s:%d: unknown runner action %q", page, b.line, b.expect)
			}
			continue
		}
		r.run(b)
	}
}

// TestMetricsPageMatchesLiveMetrics reads the /metrics of the tier's two warrants (after the
// scenarios that ran before it, so most families have series) and checks docs/metrics.md
// against them: every family served is on the page with its type, and every label a series
// carries is named in the family's labels column.
func TestMetricsPageMatchesLiveMetrics(t *testing.T) {
	page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ kind, labels string }
	rows := map[string]row{}
	for _, line := range strings.Split(string(page), "\n") {
		if !strings.HasPrefix(line, "| `warrant_") {
			continue
		}
		cells := strings.Split(line, " | ")
		if len(cells) < 3 {
			continue
		}
		rows[strings.Trim(cells[0], "| `")] = row{strings.TrimSpace(cells[1]), cells[2]}
	}
	seen := 0
	reported := map[string]bool{}
	for _, w := range E.warrants() {
		text := metricsOf(w.url)
		if text == "" {
			t.Fatalf("%s: no /metrics", w.name)
		}
		kinds := map[string]string{}
		for _, line := range strings.Split(text, "\n") {
			if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
				f := strings.Fields(rest)
				if len(f) == 2 {
					kinds[f[0]] = f[1]
				}
			}
		}
		for family, kind := range kinds {
			name := family
			if kind == "counter" {
				name += "_total"
			}
			r, ok := rows[name]
			if !ok {
				t.Errorf("%s serves %s (%s), which docs/metrics.md does not list", w.name, name, kind)
				continue
			}
			seen++
			if r.kind != kind {
				t.Errorf("%s: docs/metrics.md says %s, %s serves a %s", name, r.kind, w.name, kind)
			}
			// Label names of the family's series.
			re := regexp.MustCompile(`^` + regexp.QuoteMeta(family) + `(?:_total|_bucket|_sum|_count|_created)?\{([^}]*)\}`)
			for _, line := range strings.Split(text, "\n") {
				m := re.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				for _, pair := range strings.Split(m[1], ",") {
					label, _, _ := strings.Cut(pair, "=")
					if label == "le" || label == "" {
						continue
					}
					key := name + " " + label
					if !strings.Contains(r.labels, "`"+label+"`") && !reported[key] {
						reported[key] = true
						t.Errorf("%s: %s's series carry label %q, not in docs/metrics.md's labels column", name, w.name, label)
					}
				}
			}
		}
	}
	if seen < 20 {
		t.Fatalf("only %d families seen on the tier's warrants", seen)
	}
}
