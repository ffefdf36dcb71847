package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// The open-loop generator of the capacity runs: examples/open_loop.rs (one thread on the
// generator's core, persistent HTTP/2 connections, or HTTP/1.1 for OPA), which sends at a fixed
// rate whatever the server answers and times each request from its due instant, so a server that
// falls behind shows it in the latencies. h2load's --rps mode does neither: it starts each
// request when a stream is free and times it from then, and logging every request costs its one
// core as much as the server under test spends at half its saturation, so the open loop it drove
// measured the generator.

// openLoopSummary is the JSON object open_loop prints.
type openLoopSummary struct {
	Offered      int64   `json:"offered"`
	Sent         int64   `json:"sent"`
	Succeeded    int64   `json:"succeeded"`
	Failed       int64   `json:"failed"`
	Unanswered   int64   `json:"unanswered"`
	FirstError   string  `json:"first_error"`
	WallSeconds  float64 `json:"wall_seconds"`
	LateSends    int64   `json:"late_sends"`
	MaxSendLagUs int64   `json:"max_send_lag_us"`
}

// openLoopRun is one run of open_loop at a fixed rate against one target.
type openLoopRun struct {
	bin, body, ca, latencies string
	target                   capacityTarget
	conns                    int
	rate                     float64
	d                        time.Duration
}

func (r openLoopRun) args() []string {
	args := []string{"-c", fmt.Sprint(cores.client), r.bin, "--url", r.target.url, "--body", r.body, "--ca", r.ca,
		"--rate", strconv.FormatFloat(r.rate, 'f', 0, 64), "--duration", fmt.Sprintf("%dms", r.d.Milliseconds()),
		"--connections", strconv.Itoa(r.conns), "--latencies", r.latencies}
	if r.target.auth {
		args = append(args, "--token", benchToken)
	}
	if r.target.h1 {
		args = append(args, "--http1")
	}
	return args
}

// run executes open_loop and fills the window: reviews answered with 200, failures (errors,
// other statuses and calls unanswered at the cut-off), latencies from their due instants, and
// the run's length (from the first due instant to the last answer).
func (r openLoopRun) run(w *window) (openLoopSummary, error) {
	var s openLoopSummary
	out, err := exec.Command("taskset", r.args()...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return s, fmt.Errorf("open_loop %s: %w\n%s", strings.Join(r.args()[2:], " "), err, ee.Stderr)
		}
		return s, err
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return s, fmt.Errorf("open_loop printed %q: %w", out, err)
	}
	w.Reviews, w.Failures, w.Censored = s.Succeeded, s.Failed+s.Unanswered, s.Unanswered
	if s.FirstError != "" {
		w.FirstErr = "open_loop: " + s.FirstError
	}
	w.H2Wall = time.Duration(s.WallSeconds * float64(time.Second))
	w.LateSends = s.LateSends
	lat, err := readLatencies(r.latencies)
	if err != nil {
		return s, err
	}
	w.Latencies = lat
	return s, nil
}

// readLatencies reads open_loop's --latencies file: one latency in µs per line.
func readLatencies(path string) ([]time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []time.Duration
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, err := strconv.ParseInt(sc.Text(), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", path, sc.Text(), err)
		}
		out = append(out, time.Duration(v)*time.Microsecond)
	}
	return out, sc.Err()
}

// openLoopWindow warms the target up with h2load (closed loop), then runs open_loop between
// readings of the server's and the generator's CPU.
func openLoopWindow(r openLoopRun, warm h2loadRun) (window, openLoopSummary, error) {
	if err := warm.warmUp(); err != nil {
		return window{}, openLoopSummary{}, err
	}
	var s openLoopSummary
	var runErr error
	w, err := measure(r.target.pid, func(w *window) { s, runErr = r.run(w) })
	if runErr != nil {
		return w, s, runErr
	}
	if w.H2Wall > 0 {
		w.Wall = w.H2Wall
	}
	return w, s, err
}
