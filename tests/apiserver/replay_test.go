package apiserver

// Traffic through a real kube-apiserver, recorded by its
// own audit log (audit.k8s.io/v1 events, Metadata level, every stage) and by warrant's, then
// replayed with `warrant replay` against a candidate configuration that tightens one rule. The
// flips are asserted exactly, and every review warrant received is found, field for field, among
// the reviews replay rebuilds from the API server's events (impersonation, selectors, the create
// caveat).
//
// This scenario runs a kube-apiserver of its own ("replay", sharing etcd under its own prefix)
// with the scenarios authorization configuration and testdata/replay-audit-policy.yaml, so no
// other scenario's API server changes. With WARRANT_REPLAY_FIXTURES=DIR it also writes the events
// and warrant records of the traffic to DIR (tests/fixtures/apiserver-audit/ came from there).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startReplayAPIServer starts the replay scenario's kube-apiserver and its audit log.
func startReplayAPIServer(t *testing.T) (*apiserver, string) {
	t.Helper()
	etcdURL := ""
	for _, a := range E.etcd.cmd.Args {
		if v, ok := strings.CutPrefix(a, "--listen-client-urls="); ok {
			etcdURL = v
		}
	}
	src, err := os.ReadFile(filepath.Join(repoRoot, "tests", "apiserver", "testdata", "scenarios-authorization-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	authz := filepath.Join(E.dir, "replay-authorization-config.yaml")
	kcFile := filepath.Join(E.dir, "apiserver-to-warrant.yaml")
	if err := os.WriteFile(authz, []byte(strings.ReplaceAll(string(src), "WARRANT_KUBECONFIG", kcFile)), 0o600); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(E.dir, "replay-apiserver-audit.jsonl")
	port, _ := freePort()
	d := func(f string) string { return filepath.Join(E.dir, f) }
	p, err := startProc(E.dir, "kube-apiserver-replay", filepath.Join(E.kubeBin, "kube-apiserver"),
		"--etcd-servers="+etcdURL, "--etcd-prefix=/replay",
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--tls-cert-file="+d("apiserver.crt"), "--tls-private-key-file="+d("apiserver.key"), "--client-ca-file="+d("ca.crt"),
		"--token-auth-file="+d("tokens.csv"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+d("sa.pub"), "--service-account-signing-key-file="+d("sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-config="+authz,
		"--audit-policy-file="+filepath.Join(repoRoot, "tests", "apiserver", "testdata", "replay-audit-policy.yaml"),
		"--audit-log-path="+auditLog, "--audit-log-format=json",
		"--disable-admission-plugins=ServiceAccount", "--endpoint-reconciler-type=none",
		"--enable-priority-and-fairness=false", "--profiling=false", "--v=1")
	if err != nil {
		t.Fatal(err)
	}
	a := &apiserver{name: "replay", url: fmt.Sprintf("https://127.0.0.1:%d", port), proc: p}
	t.Cleanup(func() { p.stop(10 * time.Second) })
	a.kcfg = filepath.Join(E.dir, "replay-kubeconfig.yaml")
	if err := os.WriteFile(a.kcfg, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q, certificate-authority: %q}}]
users: [{name: admin, user: {token: tok-admin}}]
contexts: [{name: c, context: {cluster: c, user: admin}}]
current-context: c
`, a.url, d("ca.crt"))), 0o600); err != nil {
		t.Fatal(err)
	}
	// Ready means /readyz, as for the tier's other API servers: every post-start hook has run,
	// RBAC's bootstrap roles among them. A request as admin (system:masters) succeeds earlier,
	// since masters bypass the authorizers; until rbac/bootstrap-roles has created
	// system:public-info-viewer and its binding, RBAC forbids everyone else even GET /version
	// (which warrant's matchConditions never see: it is not a resource request).
	if err := waitHTTP(apiHTTPClient(), a.url+"/readyz", "tok-admin", 180*time.Second, p); err != nil {
		t.Fatalf("kube-apiserver-replay: %v", err)
	}
	return a, auditLog
}

// fileSize is the current size of a file (0 when absent).
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// sliceFile copies the bytes of src after offset into dst.
func sliceFile(t *testing.T, src string, offset int64, dst string) []byte {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	b = b[offset:]
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonLines parses every line of b.
func jsonLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %v: %s", err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// warrantReplay runs `warrant replay ARGS...` and returns its standard output.
func warrantReplay(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(E.warrantBin, append([]string{"replay"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("warrant replay %v: %v\n%s\n%s", args, err, out, stderr.String())
	}
	return out
}

// flipGroup is the part of a report group the scenario asserts.
type flipGroup struct {
	Flip, Rule, User, Resource string
	Count                      int
	Lockout                    string
}

type replayReport struct {
	Totals struct {
		Read, Replayed, Unchanged, Flipped, Lockouts, Deferred int
	}
	Flips  map[string]int
	Groups []flipGroup
	Errors []string
}

func replayJSON(t *testing.T, args ...string) replayReport {
	t.Helper()
	out := warrantReplay(t, append([]string{"-o", "json"}, args...)...)
	var r replayReport
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	return r
}

func sortGroups(gs []flipGroup) []flipGroup {
	sort.Slice(gs, func(i, j int) bool {
		return fmt.Sprint(gs[i]) < fmt.Sprint(gs[j])
	})
	return gs
}

// specOf is the SubjectAccessReview spec a warrant audit record holds.
func specOf(rec map[string]any) map[string]any {
	spec := map[string]any{}
	for _, k := range []string{"user", "uid", "groups", "extra", "resourceAttributes", "nonResourceAttributes"} {
		v, ok := rec[k]
		if !ok || v == "" {
			continue
		}
		if l, isList := v.([]any); isList && len(l) == 0 {
			continue
		}
		spec[k] = v
	}
	return spec
}

func TestReplayRecordedTraffic(t *testing.T) {
	a, apiserverLog := startReplayAPIServer(t)
	for _, ns := range []string{"replay-a", "replay-b"} {
		ensureNamespace(t, a, ns)
		makeConfigMap(t, a, ns, "web", map[string]string{"app": "web"})
	}
	current, err := os.ReadFile(filepath.Join(repoRoot, "tests", "apiserver", "testdata", "replay-current.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	setWarrantConfig(t, string(current))
	time.Sleep(time.Second) // let the setup's events reach the audit log before the mark
	apiMark, warrantMark := fileSize(apiserverLog), markAudit()

	// The traffic.
	alice, bob := client(t, a, "pol-alice").CoreV1(), client(t, a, "pol-bob").CoreV1()
	c := ctx(t)
	// pol-alice creates in replay-a (allowed; the event's objectRef names the object, the
	// review did not), lists without a selector there (denied), reads a secret (denied).
	if _, err := alice.ConfigMaps("replay-a").Create(c, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "made-by-alice"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("pol-alice creates: %v", err)
	}
	_, err = alice.ConfigMaps("replay-a").List(c, metav1.ListOptions{})
	wantForbidden(t, err, "listing configmaps needs a label selector [SELECTOR_REQUIRED]")
	_, err = alice.Secrets("replay-a").Get(c, "nope", metav1.GetOptions{})
	wantForbidden(t, err, "nobody reads secrets [NO_SECRETS]")
	if _, err := client(t, a, "pol-alice").Discovery().ServerVersion(); err != nil {
		// client-go's Raw() keeps no message from a JSON error body ("unknown"): say the status.
		var code int32
		if st, ok := err.(apierrors.APIStatus); ok {
			code = st.Status().Code
		}
		t.Fatalf("GET /version: %v (HTTP %d, reason %s)", err, code, apierrors.ReasonForError(err))
	}
	// pol-bob reads replay-b: a get, lists with and without selectors, a watch.
	if _, err := bob.ConfigMaps("replay-b").Get(c, "web", metav1.GetOptions{}); err != nil {
		t.Fatalf("pol-bob gets: %v", err)
	}
	if _, err := bob.ConfigMaps("replay-b").List(c, metav1.ListOptions{}); err != nil {
		t.Fatalf("pol-bob lists: %v", err)
	}
	if _, err := bob.ConfigMaps("replay-b").List(c, metav1.ListOptions{LabelSelector: "app in (web,api),!legacy"}); err != nil {
		t.Fatalf("pol-bob lists with a label selector: %v", err)
	}
	if _, err := bob.Pods("replay-b").List(c, metav1.ListOptions{FieldSelector: "spec.nodeName=node-1,status.phase!=Failed"}); err != nil {
		t.Fatalf("pol-bob lists pods with a field selector: %v", err)
	}
	one := int64(1)
	w, err := bob.ConfigMaps("replay-b").Watch(c, metav1.ListOptions{LabelSelector: "app=web", TimeoutSeconds: &one})
	if err != nil {
		t.Fatalf("pol-bob watches: %v", err)
	}
	for range w.ResultChan() {
	}
	// admin impersonates pol-bob (team-b): authorized as pol-bob.
	if _, err := impersonating(t, a, "pol-bob", "team-b").CoreV1().ConfigMaps("replay-b").List(c, metav1.ListOptions{}); err != nil {
		t.Fatalf("admin as pol-bob lists: %v", err)
	}
	// admin (system:masters, allowed by the API server before any webhook) lists replay-b.
	if _, err := client(t, a, "admin").CoreV1().ConfigMaps("replay-b").List(c, metav1.ListOptions{}); err != nil {
		t.Fatalf("admin lists: %v", err)
	}

	// Both logs, from their marks. The API server writes each event as the request ends; the
	// watch's ResponseComplete is the last to come.
	var apiEvents []byte
	eventually(t, 10*time.Second, "the watch's ResponseComplete event", func() error {
		apiEvents = sliceFile(t, apiserverLog, apiMark, filepath.Join(E.dir, "replay-apiserver-slice.jsonl"))
		for _, e := range jsonLines(t, apiEvents) {
			if e["verb"] == "watch" && e["stage"] == "ResponseComplete" && strings.Contains(fmt.Sprint(e["user"]), "pol-bob") {
				return nil
			}
		}
		return fmt.Errorf("not yet")
	})
	time.Sleep(200 * time.Millisecond) // the last warrant records
	warrantRecords := sliceFile(t, E.auditLog, int64(warrantMark), filepath.Join(E.dir, "replay-warrant-slice.jsonl"))
	apiSlice := filepath.Join(E.dir, "replay-apiserver-slice.jsonl")
	warrantSlice := filepath.Join(E.dir, "replay-warrant-slice.jsonl")
	candidate := filepath.Join(repoRoot, "tests", "apiserver", "testdata", "replay-candidate.yaml")
	if dir := os.Getenv("WARRANT_REPLAY_FIXTURES"); dir != "" {
		writeReplayFixtures(t, dir, apiEvents, warrantRecords)
	}

	t.Run("every review warrant received is rebuilt from the API server's events", func(t *testing.T) {
		var rebuilt []map[string]any
		for _, sar := range jsonLines(t, warrantReplay(t, "-o", "reviews", apiSlice)) {
			rebuilt = append(rebuilt, sar["spec"].(map[string]any))
		}
		received := 0
		for _, rec := range jsonLines(t, warrantRecords) {
			if !strings.HasPrefix(fmt.Sprint(rec["user"]), "pol-") {
				continue
			}
			received++
			want, found := specOf(rec), false
			for _, got := range rebuilt {
				if reflect.DeepEqual(got, want) {
					found = true
					break
				}
			}
			if !found {
				b, _ := json.Marshal(want)
				t.Errorf("warrant received %s; no event of the API server maps onto it", b)
			}
		}
		// alice: create, list, get secret; bob: get, 3 lists, watch; bob impersonated: list.
		if received != 9 {
			t.Fatalf("warrant received %d reviews from pol-*, want 9:\n%s", received, warrantRecords)
		}
	})

	t.Run("the kube-apiserver audit log against a candidate tightening one rule", func(t *testing.T) {
		r := replayJSON(t, "--config", candidate, apiSlice)
		want := []flipGroup{
			{Flip: "allow->deny", Rule: "tenants/list-needs-selector", User: "pol-bob", Resource: "configmaps", Count: 2},
			{Flip: "allow->deny", Rule: "tenants/list-needs-selector", User: "admin", Resource: "configmaps", Count: 1, Lockout: "system:masters"},
		}
		if got := sortGroups(r.Groups); !reflect.DeepEqual(got, sortGroups(want)) {
			t.Fatalf("flips:\n got %+v\nwant %+v\n%s", got, want, warrantReplay(t, "--config", candidate, apiSlice))
		}
		if r.Totals.Flipped != 3 || r.Totals.Lockouts != 1 || r.Flips["allow->deny"] != 3 || len(r.Errors) != 0 {
			t.Fatalf("totals: %+v flips %v errors %v", r.Totals, r.Flips, r.Errors)
		}
		if r.Totals.Replayed == 0 || r.Totals.Deferred == 0 || r.Totals.Unchanged != r.Totals.Replayed-3 {
			t.Fatalf("totals: %+v", r.Totals)
		}
		// The current configuration replays onto exactly what the API server answered.
		same := replayJSON(t, "--config", filepath.Join(repoRoot, "tests", "apiserver", "testdata", "replay-current.yaml"), apiSlice)
		if same.Totals.Flipped != 0 {
			t.Fatalf("the current configuration flips: %+v", same.Groups)
		}
		// --fail-on-flip makes the flips an exit status.
		cmd := exec.Command(E.warrantBin, "replay", "--fail-on-flip", "--config", candidate, apiSlice)
		if out, err := cmd.CombinedOutput(); err == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "LOCKOUT (system:masters) allow->deny tenants/list-needs-selector user=admin") {
			t.Fatalf("--fail-on-flip: %v\n%s", err, out)
		}
	})

	t.Run("warrant's own audit log against a candidate that also narrows team-b to gets", func(t *testing.T) {
		cand, err := os.ReadFile(candidate)
		if err != nil {
			t.Fatal(err)
		}
		narrowed := strings.Replace(string(cand), "request.resourceAttributes.verb in ['get', 'list', 'watch']", "request.resourceAttributes.verb == 'get'", 1)
		narrowedFile := filepath.Join(E.dir, "replay-candidate-narrowed.yaml")
		if err := os.WriteFile(narrowedFile, []byte(narrowed), 0o600); err != nil {
			t.Fatal(err)
		}
		r := replayJSON(t, "--config", narrowedFile, warrantSlice)
		want := []flipGroup{
			{Flip: "allow->deny", Rule: "tenants/list-needs-selector", User: "pol-bob", Resource: "configmaps", Count: 2},
			{Flip: "allow->no-opinion", Rule: "tenants/team-b-reads", User: "pol-bob", Resource: "configmaps", Count: 2},
			{Flip: "allow->no-opinion", Rule: "tenants/team-b-reads", User: "pol-bob", Resource: "pods", Count: 1},
		}
		if got := sortGroups(r.Groups); !reflect.DeepEqual(got, sortGroups(want)) {
			t.Fatalf("flips:\n got %+v\nwant %+v\n%s", got, want, warrantReplay(t, "--config", narrowedFile, warrantSlice))
		}
		if r.Totals.Replayed != 9 || r.Totals.Unchanged != 4 || r.Totals.Deferred != 0 {
			t.Fatalf("totals: %+v", r.Totals)
		}
		// Compared with a baseline configuration instead of the recorded answers: the same.
		b := replayJSON(t, "--config", narrowedFile, "--baseline", filepath.Join(repoRoot, "tests", "apiserver", "testdata", "replay-current.yaml"), warrantSlice)
		if got := sortGroups(b.Groups); !reflect.DeepEqual(got, sortGroups(want)) {
			t.Fatalf("with --baseline:\n got %+v\nwant %+v", got, want)
		}
	})
}

// writeReplayFixtures writes the scenario's events (those of pol-*, of admin impersonating, of the
// admin list and of GET /version, every stage) and warrant's records to dir.
func writeReplayFixtures(t *testing.T, dir string, events, records []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var keep bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(events))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var e struct {
			User struct {
				Username string `json:"username"`
			} `json:"user"`
			RequestURI string `json:"requestURI"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		mine := strings.HasPrefix(e.User.Username, "pol-") ||
			(e.User.Username == "admin" && strings.Contains(e.RequestURI, "/namespaces/replay-b/configmaps"))
		if mine {
			keep.Write(sc.Bytes())
			keep.WriteByte('\n')
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), keep.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "warrant.jsonl"), records, 0o644); err != nil {
		t.Fatal(err)
	}
}
