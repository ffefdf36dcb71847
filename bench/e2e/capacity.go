package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The capacity generator: h2load (nghttp2), a C client that costs a few µs per request, so one
// core of it can keep a server's core busy, which kube-apiserver's webhook client (about 50 µs
// per review) cannot. It posts the bench review as kube-apiserver encodes it, authenticated by
// a bearer token (h2load cannot present a client certificate), over HTTP/2 to warrant and the
// floor and HTTP/1.1 to OPA (its TLS listener offers no h2).

// benchToken is the bearer token warrant's --token-auth-file and the floor accept.
const benchToken = "warrant-bench-token"

// h2Level is one closed-loop load of h2load: connections x streams per connection. Over
// HTTP/1.1 h2load sends one request at a time per connection when posting a body, so the same
// number in flight takes that many connections.
type h2Level struct{ conns, streams int }

func (l h2Level) inFlight() int { return l.conns * l.streams }

func (l h2Level) forProto(h1 bool) h2Level {
	if h1 {
		return h2Level{l.inFlight(), 1}
	}
	return l
}

func (l h2Level) String() string { return fmt.Sprintf("%dx%d", l.conns, l.streams) }

// capacityLevels are the closed-loop loads: one connection with 64 streams (as kube-apiserver
// keeps one HTTP/2 connection per webhook) and 8 connections of 16.
var capacityLevels = []h2Level{{1, 64}, {8, 16}}

// capacityTarget is one server as h2load sees it.
type capacityTarget struct {
	name string
	pid  int
	url  string
	h1   bool
	auth bool // send the bearer token
}

// writeTokenFile writes warrant's --token-auth-file (kube-apiserver's static token CSV).
func writeTokenFile(dir string) (string, error) {
	p := filepath.Join(dir, "tokens.csv")
	return p, os.WriteFile(p, []byte(benchToken+`,bench,1001,"bench"`+"\n"), 0o600)
}

// writeBenchBody writes the bench review as the SubjectAccessReview v1 kube-apiserver's webhook
// client posts for it.
func writeBenchBody(dir string) (string, error) {
	a := benchReview()
	u := a.User
	extra := map[string]authorizationv1.ExtraValue{}
	for k, v := range u.GetExtra() {
		extra[k] = v
	}
	sar := authorizationv1.SubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SubjectAccessReview"},
		Spec: authorizationv1.SubjectAccessReviewSpec{
			User: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: extra,
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: a.Namespace, Verb: a.Verb,
				Group: a.APIGroup, Version: a.APIVersion, Resource: a.Resource, Name: a.Name},
		},
	}
	b, err := json.Marshal(sar)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "review.json")
	return p, os.WriteFile(p, b, 0o644)
}

// h2loadRun runs h2load once on the generator's core, closed loop, and returns what it reports.
type h2loadRun struct {
	bin, body, dir string
	target         capacityTarget
	level          h2Level
	d              time.Duration
}

var (
	h2Requests = regexp.MustCompile(`requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded`)
	h2Finished = regexp.MustCompile(`finished in ([0-9.]+)(m?s), ([0-9.]+) req/s`)
)

func (r h2loadRun) args() []string {
	l := r.level.forProto(r.target.h1)
	args := []string{"-c", fmt.Sprint(cores.client), r.bin, "-t", "1", "-c", strconv.Itoa(l.conns),
		"-m", strconv.Itoa(l.streams), "-D", fmt.Sprintf("%dms", max(100, r.d.Milliseconds())),
		"-d", r.body, "-H", "content-type: application/json"}
	if r.target.auth {
		args = append(args, "-H", "authorization: Bearer "+benchToken)
	}
	if r.target.h1 {
		args = append(args, "--h1")
	}
	return append(args, r.target.url)
}

// errH2loadHung marks an h2load run that did not end within its limit. h2load over HTTP/1.1 has
// been seen, rarely, to keep running after its -D duration; such a run measures nothing, so it is
// stopped, said, and run again (at most h2loadAttempts times in all).
var errH2loadHung = errors.New("h2load did not end within its limit")

// h2loadAttempts is how many times a run that hung is made before the bench fails.
const h2loadAttempts = 3

// limit is how long one run may take: its duration plus time to connect and drain.
func (r h2loadRun) limit() time.Duration { return r.d + 30*time.Second }

// run executes h2load and fills the window's reviews and failures.
func (r h2loadRun) run(w *window) error {
	ctx, cancel := context.WithTimeout(context.Background(), r.limit())
	defer cancel()
	out, err := exec.CommandContext(ctx, "taskset", r.args()...).CombinedOutput()
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v) %s", errH2loadHung, r.limit(), strings.Join(r.args()[2:], " "))
	}
	if err != nil {
		return fmt.Errorf("h2load %s: %w\n%s", strings.Join(r.args()[2:], " "), err, out)
	}
	m := h2Requests.FindSubmatch(out)
	if m == nil {
		return fmt.Errorf("h2load printed no request counts:\n%s", out)
	}
	total, _ := strconv.ParseInt(string(m[1]), 10, 64)
	succeeded, _ := strconv.ParseInt(string(m[3]), 10, 64)
	if w == nil {
		return nil
	}
	w.Reviews, w.Failures = succeeded, total-succeeded
	if w.Failures > 0 {
		w.FirstErr = "h2load: " + strings.TrimSpace(string(m[0]))
	}
	if f := h2Finished.FindSubmatch(out); f != nil {
		v, _ := strconv.ParseFloat(string(f[1]), 64)
		if string(f[2]) == "ms" {
			v /= 1000
		}
		w.H2Wall = time.Duration(v * float64(time.Second))
	}
	return nil
}

// againIfHung calls attempt until it returns something other than a hung h2load, at most
// h2loadAttempts times, printing each hang.
func againIfHung[T any](attempt func() (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for i := 1; i <= h2loadAttempts; i++ {
		if v, err = attempt(); !errors.Is(err, errH2loadHung) {
			return v, err
		}
		fmt.Printf("  %v; attempt %d of %d\n", err, i, h2loadAttempts)
	}
	return v, err
}

// warmUp runs h2load untimed, again if it hung.
func (r h2loadRun) warmUp() error {
	_, err := againIfHung(func() (struct{}, error) { return struct{}{}, r.run(nil) })
	return err
}

// h2loadWindow runs an untimed warm-up then the timed h2load run between readings of the server's
// and the generator's CPU; a timed run that hung is measured again from its start.
func h2loadWindow(r h2loadRun, warmup time.Duration) (window, error) {
	warm := r
	warm.d = warmup
	if err := warm.warmUp(); err != nil {
		return window{}, err
	}
	return againIfHung(func() (window, error) { return h2loadTimed(r) })
}

// h2loadTimed is one timed h2load run between readings of the server's and the generator's CPU.
func h2loadTimed(r h2loadRun) (window, error) {
	var runErr error
	w, err := measure(r.target.pid, func(w *window) { runErr = r.run(w) })
	if runErr != nil {
		return w, runErr
	}
	if w.H2Wall > 0 {
		// h2load's own clock: from its first connection to its last response, without the
		// process's start and exit.
		w.Wall = w.H2Wall
	}
	return w, err
}

// capacity times every target with h2load, closed loop at each level (interleaved rounds), then
// with open_loop at half of each target's own saturation.
func capacity(o options, bin, body, ca string, targets []capacityTarget, results pool) error {
	fmt.Printf("capacity (h2load, bearer token): %d rounds x %v in flight x %s each\n", o.rounds, capacityLevels, o.closedDur)
	for r := 0; r < o.rounds; r++ {
		for _, l := range capacityLevels {
			for _, t := range targets {
				run := h2loadRun{bin: bin, body: body, dir: o.dir, target: t, level: l, d: o.closedDur}
				w, err := h2loadWindow(run, o.warmup)
				if err != nil {
					return fmt.Errorf("%s: %w", t.name, err)
				}
				results.add(key{t.name, kindCapacity, float64(l.inFlight())}, w)
				fmt.Printf("  round %d  %-15s %-6s %7.0f reviews/s  server %5.1f µs/review  generator %4.1f µs/review%s\n", r+1, t.name,
					l.forProto(t.h1), throughput(&w), perReview(w.ServerCPU, w.Reviews), perReview(w.ClientCPU, w.Reviews), disturbance(&w))
				truncateAudit(o)
			}
		}
	}
	for r := 0; r < o.rounds; r++ {
		for _, t := range targets {
			// open_loop sends at half of the target's own saturation on one HTTP/2 connection,
			// as kube-apiserver keeps one per webhook (32 HTTP/1.1 connections for OPA, one
			// request at a time each).
			l := h2Level{8, 16}
			conns := 1
			if t.h1 {
				l, conns = h2Level{32, 1}, 32
			}
			rate := math.Round(halfCapacity(results, t.name))
			run := openLoopRun{bin: o.openLoopBin, body: body, ca: ca, target: t, conns: conns, rate: rate, d: o.openDur,
				latencies: filepath.Join(o.dir, "open-loop-"+t.name+".txt")}
			warm := h2loadRun{bin: bin, body: body, dir: o.dir, target: t, level: l, d: o.warmup}
			w, s, err := openLoopWindow(run, warm)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			results.add(key{t.name, kindCapacityOpen, rate}, w)
			lat := append([]time.Duration(nil), w.Latencies...)
			sortDurations(lat)
			fmt.Printf("  round %d  %-15s %6.0f/s  p50 %6.0f µs  p99 %7.0f µs  server %5.1f µs/review  generator core %3.0f%% busy, late by > 1 ms: %d of %d sends (at most %d µs)%s\n",
				r+1, t.name, rate, us(percentile(lat, 0.50)), us(percentile(lat, 0.99)), perReview(w.ServerCPU, w.Reviews),
				100*busy(w.ClientCPU, &w), s.LateSends, s.Sent, s.MaxSendLagUs, disturbance(&w))
			truncateAudit(o)
		}
	}
	return nil
}

// halfCapacity is half of a target's best closed-loop throughput under h2load.
func halfCapacity(results pool, name string) float64 {
	return capacityOf(results, name) / 2
}

// capacityOf is a target's best closed-loop throughput under h2load: its saturation.
func capacityOf(results pool, name string) float64 {
	best := 0.0
	for k, w := range results {
		if k.Server == name && k.Kind == kindCapacity {
			best = max(best, throughput(w))
		}
	}
	return best
}

const (
	kindCapacity     = "h2load"
	kindCapacityOpen = "open-loop"
)

// capacityRuns times warrant, warrant with its audit file, the floor and OPA with h2load. OPA
// runs as a second process for this: the first requires a client certificate, which h2load
// cannot present, so this one serves the same policy over TLS without client authentication
// (a cost warrant and the floor pay and it does not).
func capacityRuns(o options, p pki, servers []*server, results pool) error {
	body, err := writeBenchBody(o.dir)
	if err != nil {
		return err
	}
	var targets []capacityTarget
	for _, s := range servers {
		if s.Name == nameWarrant || s.Name == nameAudit || s.Name == nameFloor {
			targets = append(targets, capacityTarget{name: s.Name, pid: s.pid(), auth: true,
				url: fmt.Sprintf("https://127.0.0.1:%d/authorize", s.port)})
		}
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	opa, err := start(o.dir, "opa-h2load", o.serverCore, o.opaBin, "run", "--server", "--addr", fmt.Sprintf("127.0.0.1:%d", port),
		"--tls-cert-file", p.ServerCert, "--tls-private-key-file", p.ServerKey,
		"--log-level", "error", "--log-level-request", "error", "--skip-version-check", o.rego)
	if err != nil {
		return err
	}
	defer opa.stop()
	if err := waitListening(fmt.Sprintf("127.0.0.1:%d", port), 30*time.Second); err != nil {
		return fmt.Errorf("opa-h2load (log: %s): %w", opa.log, err)
	}
	targets = append(targets, capacityTarget{name: nameOPA, pid: opa.pid(), h1: true,
		url: fmt.Sprintf("https://127.0.0.1:%d/v0/data/k8s/authz/decision", port)})
	return capacity(o, o.h2loadBin, body, p.CA, targets, results)
}

// waitListening waits until addr accepts a TCP connection.
func waitListening(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}
