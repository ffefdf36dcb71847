package apiserver

// Leader election between two `warrant serve` replicas on one Lease in the scenario API
// server: exactly one leads; SIGKILL of the leader hands the Lease over once it
// expires (about the lease duration after its last renewal); SIGTERM releases it, and the
// other takes over at its next attempt (within about the retry period, jittered by 1.2).

import (
	"fmt"
	"strings"
	"testing"
	"time"

	coordv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func getLease(t *testing.T, name string) *coordv1.Lease {
	t.Helper()
	l, err := client(t, E.scenarios, "admin").CoordinationV1().Leases("warrant-system").Get(ctx(t), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("lease %s: %v", name, err)
	}
	return l
}

func TestLeaderElectionFailover(t *testing.T) {
	// The authorization ring answers NoOpinion to warrant's service account here, so RBAC
	// (deploy/warrant.yaml's Role) alone decides what the replicas may do with Leases.
	setRing(t, "Enforce")
	lease := fmt.Sprintf("ha-leader-%d", time.Now().UnixNano()%1_000_000)
	cfg := writeConfig(t, "ha-leader", cfgAlwaysDeny)
	a := startReplica(t, "ha-a", cfg, lease)
	b := startReplica(t, "ha-b", cfg, lease)

	leader, took := waitLeader(t, 3*haLease, a, b)
	t.Logf("first leader %s after %s", leader.name, took.Round(time.Millisecond))
	// Both keep electing: after a few renewals still exactly one leads, the same one.
	time.Sleep(3 * haRetry)
	if again, _ := waitLeader(t, haRetry, a, b); again != leader {
		t.Fatalf("leadership moved from %s to %s without a failure", leader.name, again.name)
	}
	l := getLease(t, lease)
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" || *l.Spec.LeaseDurationSeconds != int32(haLease/time.Second) {
		t.Fatalf("lease spec %+v: want a holder and leaseDurationSeconds %d", l.Spec, haLease/time.Second)
	}
	holder, transitions := *l.Spec.HolderIdentity, *l.Spec.LeaseTransitions

	// SIGKILL: no release; the other waits for the Lease to expire on its own clock.
	follower := a
	if leader == a {
		follower = b
	}
	leader.kill()
	killed := time.Now()
	next, _ := waitLeader(t, haLease+3*haRenew, follower)
	failover := time.Since(killed)
	t.Logf("FAILOVER after SIGKILL: %s (lease %s, renew deadline %s, retry %s)", failover.Round(time.Millisecond), haLease, haRenew, haRetry)
	if failover < haLease-haRetry-200*time.Millisecond {
		t.Fatalf("%s took over %s after the kill, before the lease (%s) could expire", next.name, failover, haLease)
	}
	l = getLease(t, lease)
	if *l.Spec.HolderIdentity == holder || *l.Spec.LeaseTransitions != transitions+1 {
		t.Fatalf("after failover: holder %q (was %q), leaseTransitions %d (was %d)", *l.Spec.HolderIdentity, holder, *l.Spec.LeaseTransitions, transitions)
	}
	if m := metricsOf(next.url); !hasLine(m, "warrant_leader_transitions_total 1") {
		t.Errorf("%s: want warrant_leader_transitions_total 1:\n%s", next.name, grepLines(m, "warrant_leader"))
	}

	// SIGTERM: the leader releases the Lease; a third replica takes over within about the
	// retry period, long before the lease duration.
	c := startReplica(t, "ha-c", cfg, lease)
	if c.leads() != 0 {
		t.Fatalf("%s leads while %s holds the lease", c.name, next.name)
	}
	next.terminate()
	termed := time.Now()
	waitLeader(t, haLease+3*haRenew, c)
	handover := time.Since(termed)
	t.Logf("HANDOVER after SIGTERM: %s (retry period %s)", handover.Round(time.Millisecond), haRetry)
	if handover > time.Duration(float64(haRetry)*2.2)+time.Second {
		t.Fatalf("handover took %s after SIGTERM: the lease was not released (retry period %s)", handover, haRetry)
	}
	<-next.proc.done
	if log := next.proc.tail(40); !strings.Contains(log, "lease released") {
		t.Errorf("%s's log has no release:\n%s", next.name, log)
	}
}
