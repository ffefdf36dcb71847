package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// window is what one timed run measured: reviews answered, failures, latencies, and the CPU the
// server and this generator spent over the same wall time.
type window struct {
	Reviews   int64           `json:"reviews"`
	Failures  int64           `json:"failures"` // an error or not the expected Allow
	Wall      time.Duration   `json:"wall"`
	ServerCPU time.Duration   `json:"serverCPU"`
	ClientCPU time.Duration   `json:"clientCPU"`
	Latencies []time.Duration `json:"-"`
	Censored  int64           `json:"censored"` // open loop: still unanswered when the run was cut off
	// Time other processes took on the server's and the generator's cores meanwhile (core busy
	// time less the server's or the generator's own CPU): the run was disturbed when it is large.
	OthersServerCore time.Duration `json:"othersServerCore"`
	OthersClientCore time.Duration `json:"othersClientCore"`
	// Time the server's and the generator's threads waited, runnable, for their core: the run was
	// disturbed when that is a large share of it.
	ServerWait time.Duration `json:"serverWait"`
	ClientWait time.Duration `json:"clientWait"`
	FirstErr   string        `json:"firstErr,omitempty"`
	// h2load's or open_loop's own measure of the run's length (capacity runs only).
	H2Wall time.Duration `json:"-"`
	// open_loop: requests it sent more than 1 ms after their due instant (its own lag, which
	// their latencies include).
	LateSends int64 `json:"lateSends,omitempty"`
}

// workload is what a timed run sends: reviews taken in turn (the one bench review, or a
// weighted mix expanded and shuffled), each with the decision it must get.
type workload struct {
	reviews []authorizer.AttributesRecord
	want    []authorizer.Decision
	// anyDecision accepts whatever a server decides (the floor, which decides nothing).
	anyDecision bool
}

// single is the workload of one review that must be allowed.
func single(attrs authorizer.AttributesRecord) workload {
	return workload{reviews: []authorizer.AttributesRecord{attrs}, want: []authorizer.Decision{authorizer.DecisionAllow}}
}

// call sends the workload's i-th review once; false when it failed or was not decided as it
// must be.
func (wl workload) call(a authorizer.Authorizer, i int) (bool, error) {
	j := i % len(wl.reviews)
	d, _, err := a.Authorize(context.Background(), wl.reviews[j])
	return err == nil && (wl.anyDecision || d == wl.want[j]), err
}

// cores are the server's and the generator's cores, for the disturbance figures.
var cores = struct{ server, client int }{0, 1}

// measure runs body between two readings of the server's and the generator's CPU time and of
// the two cores' busy time. The generator is this process, and any child it has waited for
// meanwhile (h2load).
func measure(pid int, body func(w *window)) (window, error) {
	var w window
	s0, err := cpuTime(pid)
	if err != nil {
		return w, err
	}
	b0s, err1 := coreBusy(cores.server)
	b0c, err2 := coreBusy(cores.client)
	if err1 != nil || err2 != nil {
		return w, fmt.Errorf("/proc/stat: %v %v", err1, err2)
	}
	d0s, _ := runDelay(pid)
	d0c, _ := runDelay(os.Getpid())
	c0, t0 := selfCPU(), time.Now()
	body(&w)
	w.Wall = time.Since(t0)
	w.ClientCPU = selfCPU() - c0
	s1, err := cpuTime(pid)
	w.ServerCPU = s1 - s0
	b1s, _ := coreBusy(cores.server)
	b1c, _ := coreBusy(cores.client)
	w.OthersServerCore = max(0, b1s-b0s-w.ServerCPU)
	w.OthersClientCore = max(0, b1c-b0c-w.ClientCPU)
	d1s, _ := runDelay(pid)
	d1c, _ := runDelay(os.Getpid())
	w.ServerWait, w.ClientWait = d1s-d0s, d1c-d0c
	return w, err
}

// closedLoop keeps `concurrency` callers busy for d (after a warm-up of the same shape): each sends
// the next review as soon as the previous one is answered.
func closedLoop(a authorizer.Authorizer, pid int, wl workload, concurrency int, warmup, d time.Duration) (window, error) {
	run := func(d time.Duration, record bool, w *window) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		stop := time.Now().Add(d)
		for i := 0; i < concurrency; i++ {
			wg.Add(1)
			go func(next int) {
				defer wg.Done()
				lat := make([]time.Duration, 0, 4096)
				var fails int64
				var firstErr error
				for time.Now().Before(stop) {
					t := time.Now()
					ok, err := wl.call(a, next)
					next++
					lat = append(lat, time.Since(t))
					if !ok {
						fails++
						if firstErr == nil && err != nil {
							firstErr = err
						}
					}
				}
				if record {
					mu.Lock()
					w.Latencies = append(w.Latencies, lat...)
					w.Reviews += int64(len(lat))
					w.Failures += fails
					if firstErr != nil && w.FirstErr == "" {
						w.FirstErr = firstErr.Error()
					}
					mu.Unlock()
				}
			}(i * 13)
		}
		wg.Wait()
	}
	run(warmup, false, nil)
	return measure(pid, func(w *window) { run(d, true, w) })
}

// maxInFlight bounds the open loop's outstanding calls (and so its goroutines and, over
// HTTP/1.1, its connections); a call that waits for a slot is still timed from its schedule.
const maxInFlight = 1024

// openLoop sends reviews at a fixed rate for d: call i is scheduled at start + i/rate and its
// latency runs from that scheduled instant to the answer, so a server (or client) that falls
// behind is charged for the wait (no coordinated omission). A run that has not sent everything by
// 4*d stops sending; the unsent calls count as censored, with latency "at least now - schedule".
func openLoop(a authorizer.Authorizer, pid int, wl workload, rate float64, warmup, d time.Duration) (window, error) {
	run := func(d time.Duration, record bool, w *window) {
		n := int(rate * d.Seconds())
		interval := time.Duration(float64(time.Second) / rate)
		lat := make([]time.Duration, n)
		var fails, censored atomic.Int64
		var firstErr atomic.Value
		slots := make(chan struct{}, maxInFlight)
		var wg sync.WaitGroup
		start := time.Now()
		cutoff := start.Add(4 * d)
		for i := 0; i < n; i++ {
			at := start.Add(time.Duration(i) * interval)
			if wait := time.Until(at); wait > 0 {
				time.Sleep(wait)
			}
			slots <- struct{}{}
			if time.Now().After(cutoff) {
				<-slots
				now := time.Now()
				for j := i; j < n; j++ {
					lat[j] = now.Sub(start.Add(time.Duration(j) * interval))
				}
				censored.Add(int64(n - i))
				break
			}
			wg.Add(1)
			go func(i int, at time.Time) {
				defer wg.Done()
				ok, err := wl.call(a, i)
				lat[i] = time.Since(at)
				<-slots
				if !ok {
					fails.Add(1)
					if err != nil {
						firstErr.CompareAndSwap(nil, err.Error())
					}
				}
			}(i, at)
		}
		wg.Wait()
		if record {
			w.Latencies = lat
			w.Censored = censored.Load()
			w.Reviews = int64(n) - w.Censored
			w.Failures = fails.Load()
			if s, ok := firstErr.Load().(string); ok {
				w.FirstErr = s
			}
		}
	}
	run(warmup, false, nil)
	return measure(pid, func(w *window) { run(d, true, w) })
}

// percentile of sorted latencies (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func sortDurations(d []time.Duration) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
}
