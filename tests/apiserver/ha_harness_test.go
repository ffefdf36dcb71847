package apiserver

// Replicas of `warrant serve` against the scenario API server, for the high-availability tests
// (ha_leader_test.go, ha_rate_test.go): each runs as warrant's service account (the kubeconfig
// installClusterService wrote, so deploy/warrant.yaml's Role is what it may do with Leases),
// with its own port, state directory and audit log, and short leader-election timings.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The election timings of the tests: lease duration, renew deadline, retry period.
const (
	haLease  = 4 * time.Second
	haRenew  = 3 * time.Second
	haRetry  = 1 * time.Second
	haLeaseF = "4s"
	haRenewF = "3s"
	haRetryF = "1s"
)

// replica is one `warrant serve` of a high-availability test.
type replica struct {
	name  string
	url   string
	audit string
	proc  *proc
}

// startReplica starts a replica on config file cfg, electing on Lease warrant-system/lease, and
// waits until it is ready (config loaded and, with a DeletionGuard, its cache synced).
func startReplica(t *testing.T, name, cfg, lease string, extra ...string) *replica {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, url: fmt.Sprintf("https://127.0.0.1:%d", port),
		audit: filepath.Join(E.dir, name+"-audit.jsonl")}
	args := []string{"serve", "--config", cfg,
		"--kubeconfig", filepath.Join(E.dir, "warrant-sa-kubeconfig.yaml"),
		"--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--tls-cert-file", E.files.warrantCrt, "--tls-private-key-file", E.files.warrantKey,
		"--client-ca-file", E.files.ca,
		"--state-dir", filepath.Join(E.dir, name+"-state"), "--audit-log", r.audit,
		"--file-check-interval", "1s", "--shutdown-grace-period", "2s",
		"--leader-elect=true", "--leader-elect-resource-name", lease,
		"--leader-elect-lease-duration", haLeaseF, "--leader-elect-renew-deadline", haRenewF,
		"--leader-elect-retry-period", haRetryF,
	}
	args = append(args, extra...)
	if r.proc, err = startProc(E.dir, name, E.warrantBin, args...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.proc.stop(5 * time.Second) })
	content, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rg := ring{admission: r.proc, url: r.url}
	if err := rg.waitReady(E.warrantHTTP, string(content), 60*time.Second); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, r.proc.tail(20))
	}
	return r
}

// leads reads the replica's warrant_leader_is_leader gauge: 1, 0, or -1 when it does not answer.
func (r *replica) leads() int {
	m := metricsOf(r.url)
	switch {
	case hasLine(m, "warrant_leader_is_leader 1"):
		return 1
	case hasLine(m, "warrant_leader_is_leader 0"):
		return 0
	default:
		return -1
	}
}

// kill sends SIGKILL to the replica's process group and waits for it to exit.
func (r *replica) kill() {
	_ = syscall.Kill(-r.proc.cmd.Process.Pid, syscall.SIGKILL)
	<-r.proc.done
}

// terminate sends SIGTERM (the replica drains and releases the Lease) without waiting.
func (r *replica) terminate() {
	_ = r.proc.cmd.Process.Signal(syscall.SIGTERM)
}

// waitLeader waits up to d for exactly one of rs to report leading, and returns it and how
// long it took.
func waitLeader(t *testing.T, d time.Duration, rs ...*replica) (*replica, time.Duration) {
	t.Helper()
	start := time.Now()
	for time.Since(start) < d {
		var leaders []*replica
		for _, r := range rs {
			if r.leads() == 1 {
				leaders = append(leaders, r)
			}
		}
		if len(leaders) > 1 {
			t.Fatalf("%d replicas lead at once", len(leaders))
		}
		if len(leaders) == 1 {
			return leaders[0], time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var states []string
	for _, r := range rs {
		states = append(states, fmt.Sprintf("%s=%d", r.name, r.leads()))
	}
	t.Fatalf("no leader within %s (%s)", d, strings.Join(states, " "))
	return nil, 0
}

// writeConfig writes a chain configuration for the test's replicas.
func writeConfig(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(E.dir, name+".yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
