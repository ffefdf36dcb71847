package apiserver

// The buffer ring through a real kube-apiserver: warrant-admission, the warrant with
// a cluster connection, runs the cool-down controller as the shipped ClusterRole's service
// account. It puts its finalizer on protected StatefulSets; an admitted deletion then leaves
// the object Terminating until the controller removes the finalizer: at once below CRITICAL,
// after the cool-down (and a confirmation when required) at CRITICAL, at maxHold whatever else.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// deleteAsSRE deletes the StatefulSet as ring-sre and returns its deletionTimestamp, checking
// that it is still readable (Terminating, finalizer on).
func deleteAsSRE(t *testing.T, ns, name string) time.Time {
	t.Helper()
	if err := sre(t, E.scenarios, nil).AppsV1().StatefulSets(ns).Delete(ctx(t), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s/%s as %s: %v", ns, name, ringUser, err)
	}
	got, err := client(t, E.scenarios, "admin").AppsV1().StatefulSets(ns).Get(ctx(t), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return time.Time{} // already released (the caller says whether it may be)
	}
	if err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("%s/%s right after its deletion: %v %+v", ns, name, err, got)
	}
	return got.DeletionTimestamp.Time
}

// waitGone waits (up to d) until the StatefulSet is gone and returns when it was seen gone.
func waitGone(t *testing.T, c *kubernetes.Clientset, ns, name string, d time.Duration) time.Time {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		_, err := c.AppsV1().StatefulSets(ns).Get(ctx(t), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/%s still there after %s (err %v)", ns, name, d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// An approved deletion of a CRITICAL StatefulSet with running pods: Terminating and readable
// for the cool-down, snapshot in warrant's audit, Event on it, notification received, then gone.
func TestBufferHoldsACriticalDeletionForItsCooldown(t *testing.T) {
	recv := newReceiver(t)
	setBuffer(t, bufferKnobs{cooldown: "6s", maxHold: "1h", receiver: recv.url})
	admin := client(t, E.scenarios, "admin")
	const ns, name = "buf-cool", "orders-db"
	protectedSet(t, admin, ns, name, "critical", 2)
	m := markLog(E.ring.audit)
	deleted := deleteAsSRE(t, ns, name)
	if deleted.IsZero() {
		t.Fatal("the CRITICAL StatefulSet was gone at once")
	}

	held := waitBuffer(t, m, "DELETION_HELD", ns, name, 10*time.Second)
	if held.Risk == nil || held.Risk.Level != "CRITICAL" || held.Object.Kind != "StatefulSet" {
		t.Fatalf("hold record: %+v", held)
	}
	if want := deleted.Add(6 * time.Second); !held.CooldownEnds.Equal(want) {
		t.Fatalf("hold record's cooldownEnds %s, want deletionTimestamp + 6s = %s", held.CooldownEnds, want)
	}
	meta, _ := held.Snapshot["metadata"].(map[string]any)
	if meta == nil || meta["name"] != name || held.Snapshot["spec"] == nil || meta["managedFields"] != nil || held.Snapshot["status"] != nil {
		t.Fatalf("snapshot: %v", held.Snapshot)
	}
	if !strings.Contains(held.Message, "it goes at") {
		t.Fatalf("hold message says not when: %q", held.Message)
	}

	note := recv.waitFor(t, ns, name, 10*time.Second)
	if note["code"] != "DELETION_HELD" || note["cooldownEnds"] == nil || note["snapshot"] != nil {
		t.Fatalf("notification: %v", note)
	}
	eventually(t, 10*time.Second, "the DeletionHeld Event", func() error {
		evs, err := admin.EventsV1().Events(ns).List(ctx(t), metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Regarding.Name == name && e.Reason == "DeletionHeld" && strings.Contains(e.Note, "CRITICAL") {
				return nil
			}
		}
		return fmt.Errorf("no DeletionHeld Event among %d", len(evs.Items))
	})
	// Still readable during the cool-down.
	if time.Until(deleted.Add(6*time.Second)) > time.Second {
		got, err := admin.AppsV1().StatefulSets(ns).Get(ctx(t), name, metav1.GetOptions{})
		if err != nil || got.DeletionTimestamp == nil {
			t.Fatalf("during the cool-down: %v", err)
		}
	}
	gone := waitGone(t, admin, ns, name, 20*time.Second)
	// deletionTimestamp has second precision: the object cannot go before it + cool-down.
	if gone.Before(deleted.Add(6 * time.Second)) {
		t.Fatalf("gone at %s, before the cool-down's end %s", gone, deleted.Add(6*time.Second))
	}
	waitBuffer(t, m, "COOLDOWN_ELAPSED", ns, name, 5*time.Second)
	t.Logf("deletionTimestamp %s, gone %s (cool-down 6s)", deleted.Format(time.RFC3339), gone.Format(time.RFC3339Nano))
}

// A HIGH-risk deletion of a finalized StatefulSet: the finalizer is removed at once.
func TestBufferReleasesAHighRiskDeletionAtOnce(t *testing.T) {
	recv := newReceiver(t)
	setBuffer(t, bufferKnobs{cooldown: "1m", maxHold: "1h", receiver: recv.url})
	admin := client(t, E.scenarios, "admin")
	const ns, name = "buf-high", "cache"
	protectedSet(t, admin, ns, name, "high", 0)
	m := markLog(E.ring.audit)
	start := time.Now()
	deleteAsSRE(t, ns, name)
	gone := waitGone(t, admin, ns, name, 10*time.Second)
	if gone.Sub(start) > 5*time.Second {
		t.Fatalf("a HIGH-risk deletion took %s", gone.Sub(start))
	}
	r := waitBuffer(t, m, "BELOW_CRITICAL", ns, name, 5*time.Second)
	if r.Risk == nil || r.Risk.Level != "HIGH" {
		t.Fatalf("release record: %+v", r)
	}
	t.Logf("HIGH-risk deletion finished %s after the request", gone.Sub(start))
}

// requireConfirmation and no confirmation: held past the cool-down until maxHold, then removed
// with COOLDOWN_EXPIRED and counted.
func TestBufferReleasesAtMaxHoldWithCooldownExpired(t *testing.T) {
	recv := newReceiver(t)
	setBuffer(t, bufferKnobs{cooldown: "2s", maxHold: "6s", confirm: true, receiver: recv.url})
	admin := client(t, E.scenarios, "admin")
	const ns, name = "buf-expire", "ledger"
	protectedSet(t, admin, ns, name, "critical", 1)
	m := markLog(E.ring.audit)
	deleted := deleteAsSRE(t, ns, name)
	if deleted.IsZero() {
		t.Fatal("the CRITICAL StatefulSet was gone at once")
	}
	waitBuffer(t, m, "DELETION_HELD", ns, name, 10*time.Second)
	gone := waitGone(t, admin, ns, name, 20*time.Second)
	if gone.Before(deleted.Add(6 * time.Second)) {
		t.Fatalf("gone at %s, before maxHold's end %s", gone, deleted.Add(6*time.Second))
	}
	waitBuffer(t, m, "COOLDOWN_EXPIRED", ns, name, 5*time.Second)
	if v := bufferMetric(`warrant_buffer_finalizer_removals_total{outcome="COOLDOWN_EXPIRED"}`); v == "" || v == "0" {
		t.Fatalf("warrant_buffer_finalizer_removals_total{outcome=\"COOLDOWN_EXPIRED\"} = %q:\n%s", v, grepLines(metricsOf(E.ring.url), "warrant_buffer"))
	}
}

// requireConfirmation: Terminating past the cool-down until a second person (admin here; the
// ring's refusal of the deleter's own confirmation is the validation ring's) sets the
// confirmation annotation, then gone.
func TestBufferWaitsForTheConfirmation(t *testing.T) {
	recv := newReceiver(t)
	recv.failFirst = 2 // the notification gets through on the third attempt (waits 1s, 2s)
	setBuffer(t, bufferKnobs{cooldown: "2s", maxHold: "1h", confirm: true, receiver: recv.url})
	admin := client(t, E.scenarios, "admin")
	const ns, name = "buf-confirm", "payments"
	protectedSet(t, admin, ns, name, "critical", 1)
	m := markLog(E.ring.audit)
	deleted := deleteAsSRE(t, ns, name)
	if deleted.IsZero() {
		t.Fatal("the CRITICAL StatefulSet was gone at once")
	}
	held := waitBuffer(t, m, "DELETION_HELD", ns, name, 10*time.Second)
	if !strings.Contains(held.Message, "warrant.dev/deletion-confirmed") {
		t.Fatalf("hold message does not say what it waits for: %q", held.Message)
	}
	if note := recv.waitFor(t, ns, name, 10*time.Second); note["requireConfirmation"] != true {
		t.Fatalf("notification after two refusals: %v", note)
	}
	// Well past the cool-down: still there.
	time.Sleep(time.Until(deleted.Add(5 * time.Second)))
	got, err := admin.AppsV1().StatefulSets(ns).Get(ctx(t), name, metav1.GetOptions{})
	if err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("unconfirmed, past the cool-down: %v", err)
	}
	patch := []byte(`{"metadata":{"annotations":{"warrant.dev/deletion-confirmed":"CHG-BUF-1"}}}`)
	if _, err := admin.AppsV1().StatefulSets(ns).Patch(ctx(t), name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("confirm: %v", err)
	}
	waitGone(t, admin, ns, name, 10*time.Second)
	r := waitBuffer(t, m, "CONFIRMED", ns, name, 5*time.Second)
	if r.Confirmed != "CHG-BUF-1" {
		t.Fatalf("release record: %+v", r)
	}
}

// A reload that drops the buffer block takes the finalizer off the objects carrying it: a later
// deletion is not left hanging with no controller to finish it.
func TestBufferRetiresItsFinalizerWhenTheBlockIsDropped(t *testing.T) {
	recv := newReceiver(t)
	setBuffer(t, bufferKnobs{cooldown: "1m", maxHold: "1h", receiver: recv.url})
	admin := client(t, E.scenarios, "admin")
	const ns, name = "buf-retire", "archive"
	protectedSet(t, admin, ns, name, "critical", 0)
	setRing(t, "Enforce")
	eventually(t, 15*time.Second, "the finalizer retired from "+ns+"/"+name, func() error {
		got, err := admin.AppsV1().StatefulSets(ns).Get(ctx(t), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if hasString(got.Finalizers, bufferFinalizer) {
			return fmt.Errorf("finalizers %v", got.Finalizers)
		}
		return nil
	})
	if v := bufferMetric(`warrant_buffer_finalizer_removals_total{outcome="RETIRED"}`); v == "" || v == "0" {
		t.Fatalf("RETIRED removals = %q", v)
	}
}

// Stateless: warrant-admission stopped in the middle of a hold and started again finishes the
// pending cool-down from the object alone (its deletionTimestamp), as a new leader would.
func TestBufferARestartedControllerFinishesAPendingCooldown(t *testing.T) {
	recv := newReceiver(t)
	setBuffer(t, bufferKnobs{cooldown: "10s", maxHold: "1h", receiver: recv.url})
	admin := client(t, E.scenarios, "admin")
	const ns, name = "buf-restart", "queue"
	protectedSet(t, admin, ns, name, "critical", 1)
	m := markLog(E.ring.audit)
	deleted := deleteAsSRE(t, ns, name)
	if deleted.IsZero() {
		t.Fatal("the CRITICAL StatefulSet was gone at once")
	}
	waitBuffer(t, m, "DELETION_HELD", ns, name, 10*time.Second)
	E.ring.admission.stop(5 * time.Second)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = E.startAdmission()
		}
	})
	time.Sleep(time.Second)
	if got, err := admin.AppsV1().StatefulSets(ns).Get(ctx(t), name, metav1.GetOptions{}); err != nil || got.DeletionTimestamp == nil {
		t.Fatalf("with no controller running: %v", err)
	}
	if err := E.startAdmission(); err != nil {
		t.Fatal(err)
	}
	restarted = true
	gone := waitGone(t, admin, ns, name, 30*time.Second)
	if gone.Before(deleted.Add(10 * time.Second)) {
		t.Fatalf("gone at %s, before the cool-down's end %s", gone, deleted.Add(10*time.Second))
	}
	waitBuffer(t, m, "COOLDOWN_ELAPSED", ns, name, 5*time.Second)
	t.Logf("held by one process, released by its successor %s after the deletionTimestamp", gone.Sub(deleted).Round(time.Millisecond))
	// Leave the ring's chain served, as the retire scenario does, for the tests after these.
	setRing(t, "Enforce")
}
