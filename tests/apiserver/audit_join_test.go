package apiserver

// One held deletion, one decision id: the records of the three rings about a DELETE of a
// CRITICAL StatefulSet through a real kube-apiserver (the authorization ring's SubjectAccessReview,
// the validation ring's AdmissionReviews, the buffer ring's hold and release) share the
// decisionId each ring derived on its own, with no state between them (docs/audit.md,
// "Joining the rings").

import (
	"fmt"
	"testing"
	"time"
)

// joinRecord is the part of any ring's audit record the join reads.
type joinRecord struct {
	ID                 string `json:"id"`
	DecisionID         string `json:"decisionId"`
	Stage              string `json:"stage"`
	Code               string `json:"code"`
	User               string `json:"user"`
	RequestedBy        string `json:"requestedBy"`
	ConfigHash         string `json:"configHash"`
	ResourceAttributes *struct {
		Verb, Namespace, Name, Resource string
	} `json:"resourceAttributes"`
	Object *struct {
		Namespace, Name string
	} `json:"object"`
}

func (r joinRecord) about(ns, name string) bool {
	if a := r.ResourceAttributes; a != nil {
		return a.Verb == "delete" && a.Resource == "statefulsets" && a.Namespace == ns && a.Name == name
	}
	return r.Object != nil && r.Object.Namespace == ns && r.Object.Name == name
}

func TestOneHeldDeletionIsJoinedUnderOneDecisionId(t *testing.T) {
	recv := newReceiver(t)
	setBuffer(t, bufferKnobs{cooldown: "3s", maxHold: "1h", receiver: recv.url})
	admin := client(t, E.scenarios, "admin")
	const ns, name = "buf-join", "ledger-db"
	protectedSet(t, admin, ns, name, "critical", 1)
	authz := logMark{path: E.auditLog, off: int64(markAudit())}
	ring := markLog(E.ring.audit)
	// Away from the edges of the 10 s windows ids are derived in, so that the rings, a few
	// milliseconds apart, see the same window (across an edge they would not: docs/audit.md).
	for s := time.Now().Unix() % 10; s < 1 || s > 6; s = time.Now().Unix() % 10 {
		time.Sleep(100 * time.Millisecond)
	}
	if deleteAsSRE(t, ns, name).IsZero() {
		t.Fatal("the CRITICAL StatefulSet was gone at once")
	}
	waitBuffer(t, ring, "DELETION_HELD", ns, name, 10*time.Second)
	waitBuffer(t, ring, "COOLDOWN_ELAPSED", ns, name, 20*time.Second)
	// The authorization ring's writer batches: give its record a moment.
	var records []joinRecord
	eventually(t, 5*time.Second, "the authorization ring's record of the DELETE", func() error {
		records = nil
		for _, r := range append(readRecords[joinRecord](authz), readRecords[joinRecord](ring)...) {
			if r.about(ns, name) {
				records = append(records, r)
			}
		}
		for _, r := range records {
			if r.Stage == "authorization" {
				return nil
			}
		}
		return fmt.Errorf("none among %d records", len(records))
	})
	// The deletion's records (the finalizer put on at creation is no part of it).
	var deletion []joinRecord
	for _, r := range records {
		if r.Stage != "buffer" || r.Code == "DELETION_HELD" || r.Code == "COOLDOWN_ELAPSED" {
			deletion = append(deletion, r)
		}
	}
	records = deletion
	stages := map[string]int{}
	ids := map[string]bool{}
	for _, r := range records {
		stages[r.Stage]++
		if r.DecisionID == "" || r.ID == "" || r.ConfigHash == "" {
			t.Fatalf("a record without its ids or configuration revision: %+v", r)
		}
		if ids[r.ID] {
			t.Fatalf("two records with id %s", r.ID)
		}
		ids[r.ID] = true
	}
	if stages["authorization"] < 1 || stages["admission"] < 1 || stages["buffer"] != 2 {
		t.Fatalf("records by stage %v, want the authorization ring's, the validation ring's and two of the buffer ring's: %+v", stages, records)
	}
	decisions := map[string][]string{}
	for _, r := range records {
		decisions[r.DecisionID] = append(decisions[r.DecisionID], r.Stage+"/"+r.Code)
	}
	if len(decisions) != 1 {
		t.Fatalf("the rings' records of one DELETE carry %d decision ids: %v", len(decisions), decisions)
	}
	t.Logf("one decision id for %v", decisions)
}
