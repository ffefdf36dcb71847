package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// key names one pooled measurement: a server, a kind (closed/open) and a level (concurrency or
// rate).
type key struct {
	Server string
	Kind   string
	Level  float64
}

// pool adds every round's window of the same key together.
type pool map[key]*window

func (p pool) add(k key, w window) {
	acc, ok := p[k]
	if !ok {
		acc = &window{}
		p[k] = acc
	}
	acc.Reviews += w.Reviews
	acc.Failures += w.Failures
	acc.Wall += w.Wall
	acc.ServerCPU += w.ServerCPU
	acc.ClientCPU += w.ClientCPU
	acc.Censored += w.Censored
	acc.OthersServerCore += w.OthersServerCore
	acc.OthersClientCore += w.OthersClientCore
	acc.ServerWait += w.ServerWait
	acc.ClientWait += w.ClientWait
	acc.Latencies = append(acc.Latencies, w.Latencies...)
	if acc.FirstErr == "" {
		acc.FirstErr = w.FirstErr
	}
}

func run(o options) error {
	cores.server, cores.client = o.serverCoreN, o.clientCore
	if err := os.MkdirAll(o.dir, 0o700); err != nil {
		return err
	}
	clientLog, err := os.Create(filepath.Join(o.dir, "client.log"))
	if err != nil {
		return err
	}
	defer clientLog.Close()
	// The webhook client logs each failed call through klog; keep that out of the report.
	flags := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(flags)
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		if err := flags.Set(name, value); err != nil {
			return err
		}
	}
	klog.SetOutput(clientLog)
	// Before any server starts: what the machine itself takes from each core.
	if machineStalls, err = probeStalls([]int{cores.server, cores.client}, o.openDur); err != nil {
		return err
	}
	seen := make([]string, len(machineStalls))
	for i, s := range machineStalls {
		seen[i] = s.describe()
	}
	fmt.Printf("machine stalls (a thread spinning alone on each core, before any server starts): %s\n",
		strings.Join(seen, "; "))
	p, err := newPKI(o.dir)
	if err != nil {
		return err
	}
	if _, err := writeTokenFile(o.dir); err != nil {
		return err
	}
	servers, err := startServers(o, p)
	defer func() {
		for _, s := range append(servers, helpers...) {
			s.stop()
		}
	}()
	if err != nil {
		return err
	}
	for _, s := range servers {
		fmt.Printf("%s: pid %d on core %s, %s, idle RSS %.1f MB\n", s.Name, s.pid(), o.serverCore, s.Proto, mb(s.IdleRSS))
	}

	reviews := append(handReviews(), generatedReviews(o.generated)...)
	reviews = append(reviews, mixOrder()...)
	deciders := withoutFloor(servers)
	if err := checkEquivalence(deciders, reviews); err != nil {
		return fmt.Errorf("equivalence check failed, nothing timed: %w", err)
	}
	mix, err := mixWorkload(deciders[0])
	if err != nil {
		return err
	}
	bench := single(benchReview())

	results := pool{}
	failed := func() error {
		for _, s := range servers {
			if err := s.alive(); err != nil {
				return err
			}
		}
		for k, w := range results {
			// An open-loop run past a server's capacity times out by design (reported in the
			// table); a closed-loop call never should.
			if (k.Kind == "closed" || k.Kind == kindMix || k.Kind == kindCapacity) && w.Failures > 0 {
				return fmt.Errorf("%s %s %.0f: %d of %d calls failed (first: %s)", k.Server, k.Kind, k.Level, w.Failures, w.Reviews, w.FirstErr)
			}
		}
		return nil
	}
	fmt.Printf("closed loop: %d rounds x concurrency %v x %s each (after %s warm-up)\n", o.rounds, o.concurrencies, o.closedDur, o.warmup)
	for r := 0; r < o.rounds; r++ {
		for _, c := range o.concurrencies {
			for _, s := range servers {
				w, err := closedLoop(s.authz, s.pid(), bench, c, o.warmup, o.closedDur)
				if err != nil {
					return err
				}
				results.add(key{s.Name, "closed", float64(c)}, w)
				fmt.Printf("  round %d  %-15s c=%-3d %7.0f reviews/s  server %5.1f µs/review%s\n", r+1, s.Name, c,
					float64(w.Reviews)/w.Wall.Seconds(), perReview(w.ServerCPU, w.Reviews), disturbance(&w))
				truncateAudit(o)
			}
		}
		if err := failed(); err != nil {
			return err
		}
	}
	// The Kafka sink must keep up with the closed loops, the runs its CPU figure comes from. The
	// later phases (open loops up to half of warrant's saturation, the mix) hold warrant-kafka
	// at 10-25k reviews/s for minutes, past the sink's own throughput (one batch in flight:
	// about 11k records/s here, bench/kafka-outage.sh at RATE=25000); what the sink drops then is
	// counted by it and reported below, not a failure.
	if err := kafkaKeptUp(p, servers, "the closed loops"); err != nil {
		return err
	}
	sat := map[string]float64{}
	for k, w := range results {
		if rate := float64(w.Reviews) / w.Wall.Seconds(); rate > sat[k.Server] {
			sat[k.Server] = rate
		}
	}
	common := sat[nameWarrant]
	for _, s := range servers {
		common = min(common, sat[s.Name])
	}
	rates := []float64{float64(int(common / 2)), float64(int(sat[nameWarrant] / 2))}
	fmt.Printf("open loop: %d rounds x rate %v/s x %s each (common rate: half the lowest saturation; then half of warrant's)\n", o.rounds, rates, o.openDur)
	for r := 0; r < o.rounds; r++ {
		for _, rate := range rates {
			for _, s := range servers {
				w, err := openLoop(s.authz, s.pid(), bench, rate, o.warmup, o.openDur)
				if err != nil {
					return err
				}
				results.add(key{s.Name, "open", rate}, w)
				lat := append([]time.Duration(nil), w.Latencies...)
				sortDurations(lat)
				fmt.Printf("  round %d  %-15s %6.0f/s  p50 %6.0f µs  p99 %7.0f µs%s\n", r+1, s.Name, rate,
					us(percentile(lat, 0.50)), us(percentile(lat, 0.99)), disturbance(&w))
				truncateAudit(o)
			}
		}
		if err := failed(); err != nil {
			return err
		}
	}
	if err := mixRuns(o, servers, mix, results); err != nil {
		return err
	}
	if err := failed(); err != nil {
		return err
	}
	for _, s := range servers {
		if s.LoadRSS, err = rssBytes(s.pid()); err != nil {
			return err
		}
	}
	if err := capacityRuns(o, p, servers, results); err != nil {
		return err
	}
	if err := failed(); err != nil {
		return err
	}
	if sent, dropped, ok, err := kafkaCounts(p, servers); err != nil {
		return err
	} else if ok && sent == 0 {
		return fmt.Errorf("%s: no record reached Kafka", nameKafka)
	} else if ok && dropped > 0 {
		fmt.Printf("%s: %.0f records sent to Kafka topic %s; none dropped in the closed loops, %.0f dropped (and counted) in the later phases, past the sink's own throughput\n",
			nameKafka, sent, kafkaTopic, dropped)
	} else if ok {
		fmt.Printf("%s: %.0f records sent to Kafka topic %s, none dropped\n", nameKafka, sent, kafkaTopic)
	}
	rep := newReport(servers, results, o.concurrencies, rates)
	if o.results != "" {
		if err := rep.writeJSON(o.results); err != nil {
			return err
		}
	}
	rep.print(os.Stdout)
	return nil
}

// kafkaKeptUp fails when warrant-kafka (if it runs) has dropped records by the end of phase.
func kafkaKeptUp(p pki, servers []*server, phase string) error {
	sent, dropped, _, err := kafkaCounts(p, servers)
	if err != nil {
		return err
	}
	if dropped > 0 {
		return fmt.Errorf("%s: %.0f records sent to Kafka, %.0f dropped in %s: the sink did not keep up", nameKafka, sent, dropped, phase)
	}
	return nil
}

// kafkaCounts reads warrant-kafka's sent and dropped records; ok is false when that column
// does not run.
func kafkaCounts(p pki, servers []*server) (sent, dropped float64, ok bool, err error) {
	for _, s := range servers {
		if s.Name == nameKafka {
			sent, dropped, err = kafkaSent(p, s.port)
			if err != nil {
				return 0, 0, true, fmt.Errorf("%s metrics: %w", nameKafka, err)
			}
			return sent, dropped, true, nil
		}
	}
	return 0, 0, false, nil
}

// helpers are the processes the servers need (the Kafka broker), stopped with them.
var helpers []*server

const (
	nameWarrant = "warrant"
	nameAudit   = "warrant-audit"
	nameOPA     = "opa"
	nameFloor   = "floor"
)

// withoutFloor is every server but the floor, which answers every review alike.
func withoutFloor(servers []*server) []*server {
	var out []*server
	for _, s := range servers {
		if s.Name != nameFloor {
			out = append(out, s)
		}
	}
	return out
}

func auditPath(o options) string { return filepath.Join(o.dir, "warrant-audit.jsonl") }

// truncateAudit empties the audit file between runs (warrant appends; the file would otherwise
// grow by hundreds of MB over a full run). Its size before is the proof records were written.
func truncateAudit(o options) { _ = os.Truncate(auditPath(o), 0) }

// startServers starts warrant, warrant with an audit file and OPA on the server core, builds one
// webhook authorizer per server, waits until each answers, and records its idle RSS and the HTTP
// protocol its TLS listener negotiates with the client's transport.
func startServers(o options, p pki) ([]*server, error) {
	var servers []*server
	specs := []struct {
		name, bin, path string
		args            func(port int) []string
	}{
		{nameWarrant, o.warrantBin, "/authorize", func(port int) []string {
			return warrantArgs(o, p, port, "none", "state-warrant")
		}},
		{nameOPA, o.opaBin, "/v0/data/k8s/authz/decision", func(port int) []string {
			return []string{"run", "--server", "--addr", fmt.Sprintf("127.0.0.1:%d", port),
				"--tls-cert-file", p.ServerCert, "--tls-private-key-file", p.ServerKey,
				"--tls-ca-cert-file", p.CA, "--authentication=tls",
				"--log-level", "error", "--log-level-request", "error", "--skip-version-check", o.rego}
		}},
		{nameAudit, o.warrantBin, "/authorize", func(port int) []string {
			return warrantArgs(o, p, port, auditPath(o), "state-warrant-audit")
		}},
		{nameFloor, o.floorBin, "/authorize", func(port int) []string {
			return []string{"--listen", fmt.Sprintf("127.0.0.1:%d", port), "--tls-cert-file", p.ServerCert,
				"--tls-private-key-file", p.ServerKey, "--client-ca-file", p.CA, "--token", benchToken}
		}},
	}
	if o.kafkaLibs != "" {
		kafka, broker, err := startKafka(o)
		if kafka != nil {
			helpers = append(helpers, kafka)
		}
		if err != nil {
			return servers, fmt.Errorf("kafka: %w", err)
		}
		specs = append(specs, struct {
			name, bin, path string
			args            func(port int) []string
		}{nameKafka, o.warrantBin, "/authorize", func(port int) []string {
			return append(warrantArgs(o, p, port, "none", "state-warrant-kafka"),
				"--audit-kafka-brokers", broker, "--audit-kafka-topic", kafkaTopic)
		}})
	}
	for _, spec := range specs {
		port, err := freePort()
		if err != nil {
			return servers, err
		}
		s, err := start(o.dir, spec.name, o.serverCore, spec.bin, spec.args(port)...)
		if err != nil {
			return servers, err
		}
		servers = append(servers, s)
		s.port = port
		url := fmt.Sprintf("https://127.0.0.1:%d%s", port, spec.path)
		kc, err := p.kubeconfig(o.dir, spec.name, url)
		if err != nil {
			return servers, err
		}
		if s.authz, err = newAuthorizer(o.template, spec.name, kc, o.dir); err != nil {
			return servers, err
		}
		if err := ready(s.authz, fmt.Sprintf("127.0.0.1:%d", port), 30*time.Second); err != nil {
			return servers, fmt.Errorf("%s not answering (log: %s): %w", spec.name, s.log, err)
		}
		if s.Proto, err = protocol(kc); err != nil {
			return servers, fmt.Errorf("%s: %w", spec.name, err)
		}
		if s.IdleRSS, err = rssBytes(s.pid()); err != nil {
			return servers, err
		}
	}
	return servers, nil
}

func warrantArgs(o options, p pki, port int, audit, state string) []string {
	return []string{"serve", "--config", o.policy, "--listen", fmt.Sprintf("127.0.0.1:%d", port),
		"--tls-cert-file", p.ServerCert, "--tls-private-key-file", p.ServerKey, "--client-ca-file", p.CA,
		"--state-dir", filepath.Join(o.dir, state), "--audit-log", audit,
		"--token-auth-file", filepath.Join(o.dir, "tokens.csv")}
}

// protocol posts one review with a transport built from the webhook kubeconfig by client-go
// (the same TLS and HTTP/2 settings the webhook client gets) and reports the negotiated protocol.
func protocol(kubeconfig string) (string, error) {
	cfg, err := webhook.LoadKubeconfig(kubeconfig, nil)
	if err != nil {
		return "", err
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", err
	}
	body := `{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"bob","resourceAttributes":{"verb":"get"}}}`
	resp, err := client.Post(cfg.Host, "application/json", bytes.NewBufferString(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("probe answered %s", resp.Status)
	}
	return resp.Proto, nil
}

// disturbed is the share of a run the server's or the generator's threads may spend waiting,
// runnable, for their core before the run is called disturbed.
const disturbed = 0.05

// disturbance describes how long the server and the generator waited for their cores during a
// run, and how much of each core other processes used (they take whatever the benchmark leaves
// idle; only the waiting says they got in its way).
func disturbance(w *window) string {
	sw, cw := busy(w.ServerWait, w), busy(w.ClientWait, w)
	out := fmt.Sprintf("  waited for core: server %2.0f%% generator %2.0f%%; others used %2.0f%% / %2.0f%%",
		100*sw, 100*cw, 100*busy(w.OthersServerCore, w), 100*busy(w.OthersClientCore, w))
	if sw > disturbed || cw > disturbed {
		out += "  DISTURBED"
	}
	return out
}

func mb(b int64) float64 { return float64(b) / 1e6 }

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func perReview(d time.Duration, n int64) float64 {
	if n == 0 {
		return 0
	}
	return us(d) / float64(n)
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
