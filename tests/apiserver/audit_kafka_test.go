package apiserver

// The same held deletion as TestOneHeldDeletionIsJoinedUnderOneDecisionId, its records read
// from a real Kafka topic instead of the local files: both warrants (the authorization ring
// beside kube-apiserver, and warrant-admission with the validation and buffer rings) send to
// one broker, and Kafka's console consumer finds the authorization, admission, held and
// released records under one decision id, keyed by it, in one partition, each byte for byte a
// line of the sending warrant's local audit file (docs/audit.md, "Sinks").

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// withKafkaSink restarts both warrants with their audit records also sent to topic on k, and
// restores them as they were when the test ends.
func withKafkaSink(t *testing.T, k *kafkaBroker, topic string) {
	t.Helper()
	flags := []string{"--audit-kafka-brokers", k.addr, "--audit-kafka-topic", topic}
	authz, ring := E.warrantArgs, E.ring.args
	E.warrant.stop(10 * time.Second)
	E.warrantArgs = append(append([]string{}, authz...), flags...)
	if err := E.startWarrant(); err != nil {
		t.Fatal(err)
	}
	E.ring.admission.stop(10 * time.Second)
	E.ring.args = append(append([]string{}, ring...), flags...)
	if err := E.startAdmission(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		E.warrant.stop(10 * time.Second)
		E.warrantArgs = authz
		if err := E.startWarrant(); err != nil {
			t.Errorf("restarting warrant: %v", err)
		}
		E.ring.admission.stop(10 * time.Second)
		E.ring.args = ring
		if err := E.startAdmission(); err != nil {
			t.Errorf("restarting warrant-admission: %v", err)
		}
	})
}

// kind is the record's stage, with the buffer ring's code.
func (r joinRecord) kind() string {
	if r.Stage == "buffer" {
		return "buffer/" + r.Code
	}
	return r.Stage
}

// localLines is every line of the local audit files, as a set.
func localLines(t *testing.T, paths ...string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			out[l] = true
		}
	}
	return out
}

func TestOneHeldDeletionReachesKafkaJoinedUnderOneDecisionId(t *testing.T) {
	kafkaLibs(t)
	start := time.Now()
	k := startKafka(t)
	const topic = "warrant-audit-tier"
	k.createTopic(t, topic, 3)
	consumer := k.consume(t, topic)
	withKafkaSink(t, k, topic)
	t.Logf("broker, topic, consumer and both warrants with the Kafka sink in %s", time.Since(start).Round(time.Millisecond))

	recv := newReceiver(t)
	setBuffer(t, bufferKnobs{cooldown: "3s", maxHold: "1h", receiver: recv.url})
	admin := client(t, E.scenarios, "admin")
	const ns, name = "buf-join", "ledger-kafka"
	protectedSet(t, admin, ns, name, "critical", 1)
	ring := markLog(E.ring.audit)
	// Away from the edges of the 10 s windows ids are derived in (docs/audit.md).
	for s := time.Now().Unix() % 10; s < 1 || s > 6; s = time.Now().Unix() % 10 {
		time.Sleep(100 * time.Millisecond)
	}
	if deleteAsSRE(t, ns, name).IsZero() {
		t.Fatal("the CRITICAL StatefulSet was gone at once")
	}
	waitBuffer(t, ring, "DELETION_HELD", ns, name, 10*time.Second)
	waitBuffer(t, ring, "COOLDOWN_ELAPSED", ns, name, 20*time.Second)

	// The deletion's records as the topic has them (the finalizer put on at creation, and the
	// admission of the creation, are no part of it).
	type fromKafka struct {
		joinRecord
		msg kafkaMessage
	}
	var records []fromKafka
	eventually(t, 30*time.Second, "the deletion's four kinds of record in Kafka", func() error {
		msgs, bad := consumer.messages()
		if len(bad) > 0 {
			return fmt.Errorf("the consumer printed lines that are not messages: %q", bad)
		}
		records = nil
		stages := map[string]int{}
		for _, m := range msgs {
			var r joinRecord
			if err := json.Unmarshal([]byte(m.value), &r); err != nil {
				return fmt.Errorf("a message that is not a record: %v: %s", err, m.value)
			}
			if !r.about(ns, name) {
				continue
			}
			if r.Stage == "admission" && !strings.Contains(m.value, `"operation":"DELETE"`) {
				continue
			}
			if r.Stage == "buffer" && r.Code != "DELETION_HELD" && r.Code != "COOLDOWN_ELAPSED" {
				continue
			}
			records = append(records, fromKafka{r, m})
			stages[r.kind()]++
		}
		if stages["authorization"] < 1 || stages["admission"] < 1 || stages["buffer/DELETION_HELD"] != 1 || stages["buffer/COOLDOWN_ELAPSED"] != 1 {
			return fmt.Errorf("by stage and code %v among %d messages", stages, len(msgs))
		}
		return nil
	})

	local := localLines(t, E.auditLog, E.ring.audit)
	ids := map[string]bool{}
	decisions := map[string][]string{}
	partitions := map[string]bool{}
	var order []string
	for _, r := range records {
		if r.DecisionID == "" || r.ID == "" || r.ConfigHash == "" {
			t.Fatalf("a record without its ids or configuration revision: %s", r.msg.value)
		}
		if r.msg.key != r.DecisionID {
			t.Fatalf("message key %q, want the record's decisionId %q", r.msg.key, r.DecisionID)
		}
		if ids[r.ID] {
			t.Fatalf("two messages with record id %s (a retry's copy, with no failure to explain it)", r.ID)
		}
		ids[r.ID] = true
		if !local[r.msg.value] {
			t.Fatalf("a message that is no line of either warrant's local audit file: %s", r.msg.value)
		}
		decisions[r.DecisionID] = append(decisions[r.DecisionID], r.Stage+"/"+r.Code)
		partitions[r.msg.partition] = true
		if r.Stage != "authorization" {
			order = append(order, r.kind())
		}
	}
	if len(decisions) != 1 {
		t.Fatalf("the rings' records of one DELETE carry %d decision ids in Kafka: %v", len(decisions), decisions)
	}
	if len(partitions) != 1 {
		t.Fatalf("one decision's messages in partitions %v, want one", partitions)
	}
	// warrant-admission queued its records in this order; one key, one partition: the topic
	// keeps it (the authorization ring is another producer, so its place is not asserted).
	last := order[len(order)-1]
	if order[0] != "admission" || last != "buffer/COOLDOWN_ELAPSED" || order[len(order)-2] != "buffer/DELETION_HELD" {
		t.Fatalf("warrant-admission's records in the partition in the order %v", order)
	}
	t.Logf("one decision id in Kafka for %v (partition %v), %s in all", decisions, partitions, time.Since(start).Round(time.Millisecond))
}
