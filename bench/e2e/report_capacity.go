package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// kindCPU is a server's CPU per review over all runs of one kind, in µs (0 without runs).
func (r *report) kindCPU(server, kind string) float64 {
	var cpu time.Duration
	var n int64
	for k, w := range r.results {
		if k.Server == server && k.Kind == kind {
			cpu += w.ServerCPU
			n += w.Reviews
		}
	}
	return perReview(cpu, n)
}

// mixCell is a server's figure on the mixed workload, "-" when it did not run it.
func (r *report) mixCell(s *server, f func(w *window) string) string {
	w, ok := r.results[key{s.Name, kindMix, mixConcurrency}]
	if !ok {
		return "-"
	}
	cell := f(w)
	if busy(w.ClientCPU, w) >= saturated {
		cell += "*"
		r.note(fmt.Sprintf("client saturated: generator core %.0f%% busy for %s on the mixed workload", 100*busy(w.ClientCPU, w), s.Name))
	}
	return cell
}

// mixRows are the main table's rows for the mixed workload.
func (r *report) mixRows() []string {
	return []string{
		r.row(fmt.Sprintf("mixed workload: reviews/s at concurrency %d", mixConcurrency), func(s *server) string {
			return r.mixCell(s, func(w *window) string { return fmt.Sprintf("%.0f", throughput(w)) })
		}),
		r.row("mixed workload: server CPU per review", func(s *server) string {
			return r.mixCell(s, func(w *window) string { return fmt.Sprintf("%.0f µs", perReview(w.ServerCPU, w.Reviews)) })
		}),
	}
}

// capacityTargets are the servers h2load timed, in the table's order.
func (r *report) capacityTargets() []string {
	var out []string
	for _, name := range []string{nameWarrant, nameAudit, nameFloor, nameOPA} {
		for k := range r.results {
			if k.Server == name && k.Kind == kindCapacity {
				out = append(out, name)
				break
			}
		}
	}
	return out
}

// capacityOpen is a target's open-loop run at half of its own saturation.
func (r *report) capacityOpen(name string) (float64, *window) {
	for k, w := range r.results {
		if k.Server == name && k.Kind == kindCapacityOpen {
			return k.Level, w
		}
	}
	return 0, &window{}
}

// printCapacity prints the h2load table and its ratio lines.
func (r *report) printCapacity(out io.Writer) {
	names := r.capacityTargets()
	if len(names) == 0 {
		return
	}
	var levels []string
	for _, l := range capacityLevels {
		levels = append(levels, fmt.Sprint(l.inFlight()))
	}
	row := func(label string, cell func(name string) string) string {
		cells := []string{label}
		for _, n := range names {
			cells = append(cells, cell(n))
		}
		return "| " + strings.Join(cells, " | ") + " |"
	}
	perLevel := func(name string, f func(w *window) string) string {
		var parts []string
		for _, l := range capacityLevels {
			w := r.get(name, kindCapacity, float64(l.inFlight()))
			part := f(w)
			if busy(w.ClientCPU, w) >= saturated {
				part += "*"
				r.note(fmt.Sprintf("client saturated: h2load's core %.0f%% busy for %s at %d in flight", 100*busy(w.ClientCPU, w), name, l.inFlight()))
			}
			parts = append(parts, part)
		}
		return strings.Join(parts, " / ")
	}
	at := strings.Join(levels, " / ") + " in flight"
	lines := []string{
		row("", func(n string) string { return n }),
		"|---" + strings.Repeat("|---", len(names)) + "|",
		row("reviews/s at "+at, func(n string) string {
			return perLevel(n, func(w *window) string { return fmt.Sprintf("%.0f", throughput(w)) })
		}),
		row("server CPU per review at "+at, func(n string) string {
			return perLevel(n, func(w *window) string { return fmt.Sprintf("%.1f", perReview(w.ServerCPU, w.Reviews)) }) + " µs"
		}),
		row("server core busy at "+at, func(n string) string {
			return perLevel(n, func(w *window) string { return fmt.Sprintf("%.0f%%", 100*busy(w.ServerCPU, w)) })
		}),
		row("generator CPU per review at "+at, func(n string) string {
			return perLevel(n, func(w *window) string { return fmt.Sprintf("%.1f", perReview(w.ClientCPU, w.Reviews)) }) + " µs"
		}),
		row("open loop at half of its own saturation: rate, p50 / p99", func(n string) string {
			rate, w := r.capacityOpen(n)
			sortDurations(w.Latencies)
			cell := fmt.Sprintf("%.0f/s: %.0f / %.0f µs", rate, us(percentile(w.Latencies, 0.5)), us(percentile(w.Latencies, 0.99)))
			if w.Failures > 0 {
				cell += fmt.Sprintf(" (%d failed)", w.Failures)
				r.note(fmt.Sprintf("failed calls: %d of %s's open-loop calls at %.0f/s failed (%s)", w.Failures, n, rate, w.FirstErr))
			}
			if b := busy(w.ClientCPU, w); b >= 0.8 {
				cell += "*"
				r.note(fmt.Sprintf("generator busy: open_loop's core was %.0f%% busy at %.0f/s against %s; its own queueing is part of that p99", 100*b, rate, n))
			}
			if sent := w.Reviews + w.Failures; sent > 0 && float64(w.LateSends) > 0.01*float64(sent) {
				cell += " (generator late)"
				r.note(fmt.Sprintf("generator late: open_loop sent %d of %s's %d requests more than 1 ms after their due instant (its core was busy); their latencies include that lag", w.LateSends, n, sent))
			}
			if achieved := throughput(w); achieved < 0.95*rate {
				cell += " (overloaded)"
				r.note(fmt.Sprintf("overloaded: %s answered %.0f/s of the %.0f/s open_loop offered", n, achieved, rate))
			}
			return cell
		}),
		row("server CPU per review at half saturation", func(n string) string {
			_, w := r.capacityOpen(n)
			return fmt.Sprintf("%.1f µs", perReview(w.ServerCPU, w.Reviews))
		}),
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "capacity on one server core (h2load on the other, closed loop; open_loop at half saturation, latency from each request's due instant; bearer token; opa: HTTP/1.1, no client authentication):")
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
}

// printRatios prints the ratio lines of the mixed workload, the floor and the capacity runs.
func (r *report) printRatios(out io.Writer) {
	if mw, mo := r.kindCPU(nameWarrant, kindMix), r.kindCPU(nameOPA, kindMix); mw > 0 && mo > 0 {
		fmt.Fprintf(out, "opa/warrant server CPU per review on the mixed workload: %.2f (warrant %.1f µs, opa %.1f µs)\n", mo/mw, mw, mo)
		if mf := r.kindCPU(nameFloor, kindMix); mf > 0 {
			fmt.Fprintf(out, "opa/floor server CPU per review on the mixed workload: %.2f (floor %.1f µs: the most any server on this stack could show against opa here)\n", mo/mf, mf)
		}
	}
	if cw, cf := r.kindCPU(nameWarrant, kindCapacity), r.kindCPU(nameFloor, kindCapacity); cw > 0 && cf > 0 {
		fmt.Fprintf(out, "warrant/floor CPU per review: %.2f (h2load at saturation: warrant %.1f µs, floor %.1f µs; through kube-apiserver's client, closed loop: %.2f)\n",
			cw/cf, cw, cf, r.closedCPU(nameWarrant)/r.closedCPU(nameFloor))
	}
	if sw, so := capacityOf(r.results, nameWarrant), capacityOf(r.results, nameOPA); sw > 0 && so > 0 {
		rate, w := r.capacityOpen(nameWarrant)
		sortDurations(w.Latencies)
		fmt.Fprintf(out, "saturation on one core (h2load): warrant %.0f/s, opa %.0f/s (warrant/opa %.2f), floor %.0f/s\n",
			sw, so, sw/so, capacityOf(r.results, nameFloor))
		fmt.Fprintf(out, "warrant p99 at half of its own saturation (%.0f/s, open_loop): %.0f µs\n", rate, us(percentile(w.Latencies, 0.99)))
		for _, s := range machineStalls {
			fmt.Fprintf(out, "  the machine's own stalls beside it, %s\n", s.describe())
		}
	}
}
