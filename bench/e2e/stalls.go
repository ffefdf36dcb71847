package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"time"
)

// The machine's own stalls. On a virtual machine the host can take a core away for
// milliseconds at a time without the guest's scheduler seeing it (no other task runs, no
// steal time is counted), and any latency measured on that core inherits those gaps. A
// thread that spins alone on a core, reading the monotonic clock, sees each of them as a
// jump between two readings; the bench runs one on each core, together and before it starts
// any server (which, idle, would still take the core now and then), so the p99 of the
// open-loop runs can be read against what the machine itself takes away.

// stallGap is the shortest jump between two clock readings that counts as a stall: far
// above the spin loop's own period (tens of nanoseconds) and a timer interrupt's cost.
const stallGap = 200 * time.Microsecond

// stalls is what one spinning thread saw.
type stalls struct {
	Core    int           `json:"core"`
	Span    time.Duration `json:"span"`
	Longest time.Duration `json:"longest"`
	Over1ms int           `json:"over_1ms"`
	// PastMs is the stalls' time past the first millisecond of each: at half of a server's
	// saturation a request arriving t into a stall of S waits S - t/2 (the backlog drains at
	// twice the arrival rate), so each stall puts 2 x (S - 1 ms) x rate requests above 1 ms,
	// and the p99 cannot be within 1 ms once PastMs exceeds 0.5 % of the time.
	PastMs time.Duration `json:"past_1ms"`
	Count  int           `json:"count"`
	Lost   time.Duration `json:"lost"`
}

// spin reads the clock for d and adds up every gap of at least stallGap.
func spin(core int, d time.Duration) stalls {
	s := stalls{Core: core}
	start := time.Now()
	last := start
	for {
		now := time.Now()
		if gap := now.Sub(last); gap >= stallGap {
			s.Count++
			s.Lost += gap
			s.Longest = max(s.Longest, gap)
			if gap > time.Millisecond {
				s.Over1ms++
				s.PastMs += gap - time.Millisecond
			}
		}
		last = now
		if now.Sub(start) >= d {
			s.Span = now.Sub(start)
			return s
		}
	}
}

// runStallProbe is the -stall-probe mode: spin on the core taskset gave this process and
// print what was seen as JSON.
func runStallProbe(core int, d time.Duration) error {
	return json.NewEncoder(os.Stdout).Encode(spin(core, d))
}

// probeStalls runs this program's -stall-probe on each core at once (taskset -c) for d; a core
// named twice is probed once (two spinning threads on one core would count each other's time
// slices as stalls).
func probeStalls(cores []int, d time.Duration) ([]stalls, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var coreList []int
	for _, c := range cores {
		if !slices.Contains(coreList, c) {
			coreList = append(coreList, c)
		}
	}
	out := make([]stalls, len(coreList))
	errs := make([]error, len(coreList))
	var wg sync.WaitGroup
	for i, c := range coreList {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("taskset", "-c", strconv.Itoa(c), self,
				"-stall-probe", d.String(), "-stall-probe-core", strconv.Itoa(c))
			text, err := cmd.Output()
			if err != nil {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				errs[i] = fmt.Errorf("stall probe on core %d: %w\n%s", c, err, stderr)
				return
			}
			if err := json.Unmarshal(text, &out[i]); err != nil {
				errs[i] = fmt.Errorf("stall probe on core %d printed %q: %w", c, text, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// describe is one core's stalls in a sentence.
func (s stalls) describe() string {
	perSecond := s.Lost.Seconds() / s.Span.Seconds() * 1e6
	past := s.PastMs.Seconds() / s.Span.Seconds() * 100
	return fmt.Sprintf("core %d: longest %.0f µs, %d over 1 ms, %d over %.0f µs in %.1f s "+
		"(%.0f µs lost a second; past the first 1 ms of each stall, %.2f %% of the time)",
		s.Core, us(s.Longest), s.Over1ms, s.Count, us(stallGap), s.Span.Seconds(), perSecond, past)
}

// machineStalls is what the probe saw before the servers started (for the report).
var machineStalls []stalls
