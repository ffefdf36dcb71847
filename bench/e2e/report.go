package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// saturated is the share of the generator's core above which the client, not the server, may
// bound a run.
const saturated = 0.90

type report struct {
	servers       []*server
	results       pool
	concurrencies []int
	rates         []float64
	notes         []string
}

func newReport(servers []*server, results pool, conc []int, rates []float64) *report {
	return &report{servers: servers, results: results, concurrencies: conc, rates: rates}
}

func (r *report) get(server, kind string, level float64) *window {
	if w, ok := r.results[key{server, kind, level}]; ok {
		return w
	}
	return &window{}
}

func throughput(w *window) float64 {
	if w.Wall == 0 {
		return 0
	}
	return float64(w.Reviews) / w.Wall.Seconds()
}

func busy(d time.Duration, w *window) float64 {
	if w.Wall == 0 {
		return 0
	}
	return d.Seconds() / w.Wall.Seconds()
}

// closedCPU is the server's CPU per review over all closed-loop runs, in µs.
func (r *report) closedCPU(server string) float64 {
	var cpu time.Duration
	var n int64
	for _, c := range r.concurrencies {
		w := r.get(server, "closed", float64(c))
		cpu += w.ServerCPU
		n += w.Reviews
	}
	return perReview(cpu, n)
}

func (r *report) saturation(server string) float64 {
	best := 0.0
	for _, c := range r.concurrencies {
		best = max(best, throughput(r.get(server, "closed", float64(c))))
	}
	return best
}

func (r *report) latency(server string, rate float64, p float64) time.Duration {
	w := r.get(server, "open", rate)
	sortDurations(w.Latencies)
	return percentile(w.Latencies, p)
}

func (r *report) row(label string, cell func(s *server) string) string {
	cells := []string{label}
	for _, s := range r.servers {
		cells = append(cells, cell(s))
	}
	return "| " + strings.Join(cells, " | ") + " |"
}

// perLevel joins one figure per concurrency, starring those where the generator's core was at
// least 90% busy.
func (r *report) perLevel(s *server, f func(w *window) string) string {
	var parts []string
	for _, c := range r.concurrencies {
		w := r.get(s.Name, "closed", float64(c))
		part := f(w)
		if busy(w.ClientCPU, w) >= saturated {
			part += "*"
			r.note(fmt.Sprintf("client saturated: generator core %.0f%% busy for %s at concurrency %d", 100*busy(w.ClientCPU, w), s.Name, c))
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " / ")
}

// share sums two durations over every run of a server and gives each as a share of their wall time.
func (r *report) share(server string, f func(w *window) (time.Duration, time.Duration)) string {
	var a, b, wall time.Duration
	for k, w := range r.results {
		if k.Server == server {
			x, y := f(w)
			a, b, wall = a+x, b+y, wall+w.Wall
		}
	}
	if wall == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%% / %.0f%%", 100*a.Seconds()/wall.Seconds(), 100*b.Seconds()/wall.Seconds())
}

func (r *report) note(n string) {
	for _, have := range r.notes {
		if have == n {
			return
		}
	}
	r.notes = append(r.notes, n)
}

func (r *report) openCell(s *server, rate float64, withP50 bool) string {
	w := r.get(s.Name, "open", rate)
	cell := fmt.Sprintf("%.0f µs", us(r.latency(s.Name, rate, 0.99)))
	if withP50 {
		cell = fmt.Sprintf("%.0f / %s", us(r.latency(s.Name, rate, 0.50)), cell)
	}
	if w.Failures > 0 {
		cell += fmt.Sprintf(" (%d failed)", w.Failures)
		r.note(fmt.Sprintf("failed calls: %d of %s's calls at %.0f/s failed (first: %s)", w.Failures, s.Name, rate, w.FirstErr))
	}
	achieved := throughput(w)
	if w.Censored > 0 || achieved < 0.95*rate {
		cell += " (overloaded)"
		n := fmt.Sprintf("overloaded: %s answered %.0f/s of the %.0f/s offered", s.Name, achieved, rate)
		if w.Censored > 0 {
			n += fmt.Sprintf(" (%d calls still unsent when cut off at 4x the run length; their latency counts as the wait so far)", w.Censored)
		}
		r.note(n)
	}
	if busy(w.ClientCPU, w) >= saturated {
		cell += "*"
		r.note(fmt.Sprintf("client saturated: generator core %.0f%% busy for %s at %.0f/s", 100*busy(w.ClientCPU, w), s.Name, rate))
	}
	return cell
}

func (r *report) print(out io.Writer) {
	conc := strings.Trim(strings.ReplaceAll(fmt.Sprint(r.concurrencies), " ", " / "), "[]")
	header := r.row("", func(s *server) string { return s.Name })
	sep := "|---" + strings.Repeat("|---", len(r.servers)) + "|"
	lines := []string{header, sep,
		r.row("reviews/s at concurrency "+conc, func(s *server) string {
			return r.perLevel(s, func(w *window) string { return fmt.Sprintf("%.0f", throughput(w)) })
		}),
		r.row("server CPU per review (closed loop, all)", func(s *server) string { return fmt.Sprintf("%.0f µs", r.closedCPU(s.Name)) }),
		r.row("server CPU per review at "+conc, func(s *server) string {
			return r.perLevel(s, func(w *window) string { return fmt.Sprintf("%.0f", perReview(w.ServerCPU, w.Reviews)) }) + " µs"
		}),
		r.row("server core busy at "+conc, func(s *server) string {
			return r.perLevel(s, func(w *window) string { return fmt.Sprintf("%.0f%%", 100*busy(w.ServerCPU, w)) })
		}),
		r.row("generator CPU per review at "+conc, func(s *server) string {
			return r.perLevel(s, func(w *window) string { return fmt.Sprintf("%.0f", perReview(w.ClientCPU, w.Reviews)) }) + " µs"
		}),
		r.row(fmt.Sprintf("p50 / p99 at a fixed %.0f/s", r.rates[0]), func(s *server) string { return r.openCell(s, r.rates[0], true) }),
		r.row(fmt.Sprintf("p99 at %.0f/s (half of warrant's saturation)", r.rates[1]), func(s *server) string { return r.openCell(s, r.rates[1], false) }),
		r.row("server CPU per review at the fixed rate", func(s *server) string {
			w := r.get(s.Name, "open", r.rates[0])
			return fmt.Sprintf("%.0f µs", perReview(w.ServerCPU, w.Reviews))
		}),
		r.row("waited for its core: server / generator (share of run)", func(s *server) string {
			return r.share(s.Name, func(w *window) (time.Duration, time.Duration) { return w.ServerWait, w.ClientWait })
		}),
		r.row("other processes' use of server / generator core", func(s *server) string {
			return r.share(s.Name, func(w *window) (time.Duration, time.Duration) { return w.OthersServerCore, w.OthersClientCore })
		}),
	}
	lines = append(lines, r.mixRows()...)
	lines = append(lines,
		r.row("RSS idle -> after load", func(s *server) string { return fmt.Sprintf("%.1f -> %.1f MB", mb(s.IdleRSS), mb(s.LoadRSS)) }),
		r.row("HTTP protocol", func(s *server) string { return s.Proto }),
	)
	fmt.Fprintln(out)
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
	r.printCapacity(out)
	fmt.Fprintln(out)
	if len(r.notes) == 0 {
		fmt.Fprintln(out, "client never saturated (generator core below 90% in every run)")
	}
	for _, n := range r.notes {
		fmt.Fprintln(out, "* "+n)
	}
	tw, to := r.saturation(nameWarrant), r.saturation(nameOPA)
	pw, po := r.latency(nameWarrant, r.rates[0], 0.99), r.latency(nameOPA, r.rates[0], 0.99)
	cw, co := r.closedCPU(nameWarrant), r.closedCPU(nameOPA)
	fmt.Fprintf(out, "throughput ratio: best closed-loop reviews/s, warrant %.0f vs opa %.0f; p99 ratio: opa p99 / warrant p99 at %.0f/s (> 1: warrant's is lower)\n", tw, to, r.rates[0])
	fmt.Fprintf(out, "warrant/opa throughput ratio: %.2f (p99 ratio: %.2f)\n", tw/to, float64(po)/float64(pw))
	fmt.Fprintf(out, "opa/warrant server CPU per review: %.2f\n", co/cw)
	r.printRatios(out)
	for _, s := range r.servers {
		if s.Name == nameKafka {
			ck := r.closedCPU(nameKafka)
			fmt.Fprintf(out, "warrant-kafka/warrant server CPU per review: %.2f (the Kafka audit sink's cost: %+.0f%%)\n", ck/cw, 100*(ck/cw-1))
		}
	}
}

// writeJSON keeps the pooled figures (no raw latencies) for later comparison.
func (r *report) writeJSON(path string) error {
	type entry struct {
		Server      string  `json:"server"`
		Kind        string  `json:"kind"`
		Level       float64 `json:"level"`
		Reviews     int64   `json:"reviews"`
		PerSecond   float64 `json:"reviewsPerSecond"`
		ServerCPUus float64 `json:"serverCPUPerReviewMicros"`
		ClientCPUus float64 `json:"clientCPUPerReviewMicros"`
		P50us       float64 `json:"p50Micros"`
		P99us       float64 `json:"p99Micros"`
		Censored    int64   `json:"censored"`
	}
	var out []entry
	for k, w := range r.results {
		sortDurations(w.Latencies)
		out = append(out, entry{k.Server, k.Kind, k.Level, w.Reviews, throughput(w), perReview(w.ServerCPU, w.Reviews),
			perReview(w.ClientCPU, w.Reviews), us(percentile(w.Latencies, 0.5)), us(percentile(w.Latencies, 0.99)), w.Censored})
	}
	return writeJSONFile(path, out)
}
