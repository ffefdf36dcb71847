package main

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

type answer struct {
	decision authorizer.Decision
	reason   string
	err      error
}

func (a answer) String() string {
	names := map[authorizer.Decision]string{authorizer.DecisionAllow: "Allow", authorizer.DecisionDeny: "Deny", authorizer.DecisionNoOpinion: "NoOpinion"}
	s := fmt.Sprintf("%s %q", names[a.decision], a.reason)
	if a.err != nil {
		s += " error: " + a.err.Error()
	}
	return s
}

// checkEquivalence sends every review through each server's webhook client and fails on the
// first review whose decision or reason differs between servers, or that any server fails. It
// also fails unless the answers cover every rule's reason, Allow, Deny and NoOpinion, so the set
// really exercises the whole policy.
func checkEquivalence(servers []*server, reviews []authorizer.AttributesRecord) error {
	seen := map[string]int{}
	for _, r := range reviews {
		var first answer
		for i, s := range servers {
			d, reason, err := s.authz.Authorize(context.Background(), r)
			got := answer{d, reason, err}
			if err != nil {
				return fmt.Errorf("%s failed review %s: %w", s.Name, describe(r), err)
			}
			if i == 0 {
				first = got
				continue
			}
			if got.decision != first.decision || got.reason != first.reason {
				return fmt.Errorf("decisions differ on review %s:\n  %s: %s\n  %s: %s",
					describe(r), servers[0].Name, first, s.Name, got)
			}
		}
		seen[first.String()]++
	}
	var missing []string
	for _, want := range expectedAnswers() {
		if seen[want.String()] == 0 {
			missing = append(missing, want.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the review set never produced: %s", strings.Join(missing, "; "))
	}
	fmt.Printf("equivalence: %d reviews, %d distinct answers, identical decision and reason from %d servers\n",
		len(reviews), len(seen), len(servers))
	return nil
}

// expectedAnswers are the answers the review set must produce: each rule's, and no opinion.
func expectedAnswers() []answer {
	out := []answer{{decision: authorizer.DecisionNoOpinion}}
	for i := 0; i < 19; i++ {
		d := authorizer.DecisionAllow
		if i%2 == 0 {
			d = authorizer.DecisionDeny
		}
		out = append(out, answer{decision: d, reason: fmt.Sprintf("bench/rule-%d: rule %d", i, i)})
	}
	return append(out, answer{decision: authorizer.DecisionAllow, reason: "bench/owners: owners may act"})
}
