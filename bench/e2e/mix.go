package main

import (
	"context"
	"fmt"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// kindMix names the closed-loop runs of the mixed workload in the results.
const kindMix = "mix"

// mixConcurrency is the mixed workload's closed-loop concurrency.
const mixConcurrency = 8

// mixWorkload is the mixed workload in its sending order, each review with the decision the
// reference server gave it (the equivalence check has shown every server gives the same).
func mixWorkload(reference *server) (workload, error) {
	wl := workload{reviews: mixOrder()}
	seen := map[authorizer.Decision]int{}
	for _, r := range wl.reviews {
		d, _, err := reference.authz.Authorize(context.Background(), r)
		if err != nil {
			return wl, fmt.Errorf("%s failed mixed review %s: %w", reference.Name, describe(r), err)
		}
		wl.want = append(wl.want, d)
		seen[d]++
	}
	fmt.Printf("mixed workload: %d shapes, %d calls per cycle: %d allowed, %d denied, %d no opinion\n", len(mixShapes()),
		len(wl.reviews), seen[authorizer.DecisionAllow], seen[authorizer.DecisionDeny], seen[authorizer.DecisionNoOpinion])
	if seen[authorizer.DecisionAllow] == 0 || seen[authorizer.DecisionDeny] == 0 || seen[authorizer.DecisionNoOpinion] == 0 {
		return wl, fmt.Errorf("the mixed workload must hold allowed, denied and no-opinion reviews")
	}
	return wl, nil
}

// mixRuns times the mixed workload through kube-apiserver's webhook client, closed loop at
// mixConcurrency, interleaved rounds; a review decided otherwise than in the check is a failure.
// The floor runs it too, its answers unchecked (it allows everything): its CPU per review is
// what the stack alone costs on this workload, so OPA's over it is the most any server on this
// stack could show against OPA.
func mixRuns(o options, servers []*server, mix workload, results pool) error {
	fmt.Printf("mixed workload: %d rounds x concurrency %d x %s each\n", o.rounds, mixConcurrency, o.closedDur)
	for r := 0; r < o.rounds; r++ {
		for _, s := range servers {
			wl := mix
			wl.anyDecision = s.Name == nameFloor
			w, err := closedLoop(s.authz, s.pid(), wl, mixConcurrency, o.warmup, o.closedDur)
			if err != nil {
				return err
			}
			results.add(key{s.Name, kindMix, mixConcurrency}, w)
			fmt.Printf("  round %d  %-15s c=%-3d %7.0f reviews/s  server %5.1f µs/review%s\n", r+1, s.Name, mixConcurrency,
				throughput(&w), perReview(w.ServerCPU, w.Reviews), disturbance(&w))
			truncateAudit(o)
		}
	}
	return nil
}
