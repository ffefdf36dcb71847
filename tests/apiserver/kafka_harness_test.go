package apiserver

// A real Apache Kafka broker for the tier, started by tests/kafka/broker.sh as the Kafka sink's
// own tests start theirs: one KRaft node (broker and controller) on loopback ports, the jars
// tests/kafka/install.sh installed (WARRANT_KAFKA_LIBS, which tests/apiserver/run.sh and .ci/run
// set), its data in the tier's directory, killed when the test ends. Topics are created and
// read with Kafka's own tools from the same jars (TopicCommand, ConsoleConsumer): a real
// consumer in a consumer group, not warrant's client.

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// kafkaBroker is one running broker.
type kafkaBroker struct {
	addr string
	proc *proc
}

// brokerScript is tests/kafka/broker.sh, which formats, runs and drives the broker.
var brokerScript = filepath.Join(repoRoot, "tests", "kafka", "broker.sh")

// kafkaLibs is the directory of the broker's jars, or a skip when the tier was not given it.
func kafkaLibs(t *testing.T) string {
	t.Helper()
	libs := os.Getenv("WARRANT_KAFKA_LIBS")
	if libs == "" {
		t.Skip("WARRANT_KAFKA_LIBS is not set (tests/apiserver/run.sh sets it from tests/kafka/install.sh)")
	}
	return libs
}

// brokerSh runs tests/kafka/broker.sh to completion (at most d): `init` or one of Kafka's
// command-line classes (`tool`).
func brokerSh(t *testing.T, d time.Duration, args ...string) string {
	t.Helper()
	cmd := exec.Command("bash", append([]string{brokerScript}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	done := make(chan struct{})
	timer := time.AfterFunc(d, func() {
		select {
		case <-done:
		default:
			if cmd.Process != nil {
				_ = cmd.Process.Kill()
			}
		}
	})
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	close(done)
	if err != nil {
		t.Fatalf("tests/kafka/broker.sh %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// startKafka formats a fresh log directory, starts the broker and waits (90 s at most) until it
// has started; the test's cleanup kills it.
func startKafka(t *testing.T) *kafkaBroker {
	t.Helper()
	kafkaLibs(t) // skips the test when the tier was not given the jars
	dir, err := os.MkdirTemp(E.dir, "kafka-")
	if err != nil {
		t.Fatal(err)
	}
	port, _ := freePort()
	controller, _ := freePort()
	brokerSh(t, 60*time.Second, "init", dir, fmt.Sprint(port), fmt.Sprint(controller))
	k := &kafkaBroker{addr: fmt.Sprintf("127.0.0.1:%d", port)}
	k.proc, err = startProc(dir, "kafka", "bash", brokerScript, "run", dir, "-XX:TieredStopAtLevel=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.proc.stop(5 * time.Second) })
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, _ := os.ReadFile(k.proc.log)
		if strings.Contains(string(b), "Kafka Server started") {
			return k
		}
		if k.proc.exited() || time.Now().After(deadline) {
			t.Fatalf("the Kafka broker did not start:\n%s", k.proc.tail(40))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// createTopic creates topic with the given partitions.
func (k *kafkaBroker) createTopic(t *testing.T, topic string, partitions int) {
	t.Helper()
	brokerSh(t, 60*time.Second, "tool", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", k.addr,
		"--create", "--topic", topic, "--partitions", fmt.Sprint(partitions), "--replication-factor", "1")
}

// kafkaMessage is one message as the console consumer printed it.
type kafkaMessage struct {
	partition  string
	key, value string
}

// kafkaConsumer is Kafka's console consumer reading a topic from its beginning, in a consumer
// group of its own, for as long as the test runs.
type kafkaConsumer struct {
	proc *proc
	mu   sync.Mutex
	got  []kafkaMessage
	bad  []string
}

// consume starts the console consumer on topic: each message is printed as
// `Partition:<n>\t<key>\t<value>` (the value is one JSON record, which has no raw tab or newline).
func (k *kafkaBroker) consume(t *testing.T, topic string) *kafkaConsumer {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", brokerScript, "tool", "org.apache.kafka.tools.consumer.ConsoleConsumer",
		"--bootstrap-server", k.addr, "--topic", topic, "--from-beginning",
		"--group", "warrant-tier-"+fmt.Sprint(time.Now().UnixNano()),
		"--formatter-property", "print.partition=true", "--formatter-property", "print.key=true",
		"--formatter-property", "key.separator=\t", "--formatter-property", "null.literal=")
	logf, err := os.Create(filepath.Join(E.dir, "kafka-consumer.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = w, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	c := &kafkaConsumer{proc: &proc{name: "kafka-consumer", cmd: cmd, log: logf.Name(), done: make(chan struct{})}}
	go func() { _ = cmd.Wait(); logf.Close(); close(c.proc.done) }()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), "\t", 3)
			c.mu.Lock()
			if len(parts) == 3 && strings.HasPrefix(parts[0], "Partition:") {
				c.got = append(c.got, kafkaMessage{partition: strings.TrimPrefix(parts[0], "Partition:"), key: parts[1], value: parts[2]})
			} else {
				c.bad = append(c.bad, sc.Text())
			}
			c.mu.Unlock()
		}
		r.Close()
	}()
	t.Cleanup(func() { c.proc.stop(5 * time.Second) })
	return c
}

// messages is every message read so far, in the order read (per partition, offset order), and
// the lines that were not messages.
func (c *kafkaConsumer) messages() ([]kafkaMessage, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]kafkaMessage(nil), c.got...), append([]string(nil), c.bad...)
}
