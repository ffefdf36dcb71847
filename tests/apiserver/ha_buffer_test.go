package apiserver

// Kill the leader replica while it holds a deletion; the other replica takes the
// Lease and finishes the pending cool-down. Two `warrant serve` replicas (ha_harness_test.go)
// run the buffer ring with their own finalizer and Lease, so warrant-admission (which serves
// /admit for the scenario API server, here without a buffer block) never acts on the object.

import (
	"strings"
	"testing"
	"time"
)

func TestBufferFailoverFinishesAPendingCooldown(t *testing.T) {
	const finalizer, lease = "warrant.dev/ha-cooldown", "ha-buffer"
	const ns, name, cooldown = "buf-failover", "ledger-db", 8 * time.Second
	recv := newReceiver(t)
	knobs := bufferKnobs{cooldown: "8s", maxHold: "1h", receiver: recv.url}
	// warrant-admission judges the DELETE with the same guard but runs no buffer controller.
	writeBufferFiles(t)
	full := bufferConfig(knobs)
	i := strings.Index(full, "      buffer:\n")
	if i < 0 {
		t.Fatal("bufferConfig has no buffer block")
	}
	setWarrantConfig(t, full[:i])
	time.Sleep(1500 * time.Millisecond) // its controller retires the previous block, if any

	cfg := writeConfig(t, "warrant/ha-buffer",
		strings.Replace(full, "      buffer:\n", "      buffer:\n        finalizer: "+finalizer+"\n", 1))
	a := startReplica(t, "warrant-ha-buffer-a", cfg, lease)
	b := startReplica(t, "warrant-ha-buffer-b", cfg, lease)
	leader, _ := waitLeader(t, 3*haLease, a, b)
	other := a
	if leader == a {
		other = b
	}

	admin := client(t, E.scenarios, "admin")
	protectedSetWith(t, admin, ns, name, "critical", 2, finalizer)
	m := markLog(leader.audit)
	deleted := deleteAsSRE(t, ns, name)
	if deleted.IsZero() {
		t.Fatal("the CRITICAL StatefulSet was gone at once")
	}
	held := waitBuffer(t, m, "DELETION_HELD", ns, name, 10*time.Second)
	if held.Risk == nil || held.Risk.Level != "CRITICAL" {
		t.Fatalf("hold record: %+v", held)
	}

	killed := time.Now()
	leader.kill()
	om := markLog(other.audit)
	_, took := waitLeader(t, 3*haLease, other)
	gone := waitGone(t, admin, ns, name, cooldown+3*haLease)
	released := waitBuffer(t, om, "COOLDOWN_ELAPSED", ns, name, 5*time.Second)
	if gone.Before(deleted.Add(cooldown)) {
		t.Fatalf("released %s after the deletion, before the %s cool-down", gone.Sub(deleted), cooldown)
	}
	// deletionTimestamp has whole seconds: the figures from it are up to a second long.
	t.Logf("leader %s killed %s after the deletionTimestamp; %s led %s later (lease %s, renew %s, retry %s); "+
		"released by it %s after the deletionTimestamp (cool-down %s), audit %s",
		leader.name, killed.Sub(deleted).Round(time.Millisecond), other.name, took.Round(time.Millisecond),
		haLeaseF, haRenewF, haRetryF, gone.Sub(deleted).Round(time.Millisecond), cooldown, released.Code)
}
