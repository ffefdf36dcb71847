package main

// The Kafka broker behind the warrant-kafka column: Apache Kafka in KRaft mode from the jars
// tests/kafka/install.sh fetches, run with the machine's Java on the generator's core (so that
// it takes nothing from the server core whose CPU is measured), on loopback, stopped with the
// servers. warrant-kafka is warrant with its Kafka audit sink on and no audit file, so its column
// against warrant's is the sink's cost per review.

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const (
	nameKafka      = "warrant-kafka"
	kafkaTopic     = "warrant-audit"
	kafkaClusterID = "d2FycmFudC1iZW5jaDAx"
)

// startKafka formats a log directory, starts the broker, waits (90 s at most) until it has
// started and creates the topic; it returns the broker (to stop) and its address.
func startKafka(o options) (*server, string, error) {
	dir := filepath.Join(o.dir, "kafka")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", err
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	controller, err := freePort()
	if err != nil {
		return nil, "", err
	}
	props := filepath.Join(dir, "server.properties")
	text := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[2]d
controller.listener.names=CONTROLLER
log.dirs=%[3]s
num.partitions=3
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
auto.create.topics.enable=false
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
`, port, controller, filepath.Join(dir, "data"))
	if err := os.WriteFile(props, []byte(text), 0o600); err != nil {
		return nil, "", err
	}
	log4j := "-Dlog4j2.configurationFile=" + o.kafkaLog4j
	java := func(args ...string) error {
		cmd := exec.Command("java", append([]string{"-Xmx256m", "-XX:TieredStopAtLevel=1", log4j, "-cp", o.kafkaLibs + "/*"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%v: %w\n%s", args[:2], err, out)
		}
		return nil
	}
	if err := java("kafka.tools.StorageTool", "format", "-t", kafkaClusterID, "-c", props); err != nil {
		return nil, "", err
	}
	broker, err := start(o.dir, "kafka", strconv.Itoa(o.clientCore), "java", "-Xmx512m", "-XX:+UseSerialGC",
		log4j, "-cp", o.kafkaLibs+"/*", "kafka.Kafka", props)
	if err != nil {
		return nil, "", err
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		b, _ := os.ReadFile(broker.log)
		if strings.Contains(string(b), "Kafka Server started") {
			break
		}
		if broker.alive() != nil || time.Now().After(deadline) {
			return broker, "", fmt.Errorf("the Kafka broker did not start (log: %s)", broker.log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if err := java("org.apache.kafka.tools.TopicCommand", "--bootstrap-server", addr, "--create",
		"--topic", kafkaTopic, "--partitions", "3", "--replication-factor", "1"); err != nil {
		return broker, "", err
	}
	return broker, addr, nil
}

// kafkaSent reads warrant-kafka's warrant_audit_sink_sent_records and _dropped_records from its
// /metrics (the proof the sink delivered while it was timed, and that it dropped nothing).
func kafkaSent(p pki, port int) (sent, dropped float64, err error) {
	cert, err := tls.LoadX509KeyPair(p.ClientCert, p.ClientKey)
	if err != nil {
		return 0, 0, err
	}
	ca, err := os.ReadFile(p.CA)
	if err != nil {
		return 0, 0, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "127.0.0.1"}}}
	resp, err := c.Get(fmt.Sprintf("https://127.0.0.1:%d/metrics", port))
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(body), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(fields[1], 64)
		switch {
		case strings.HasPrefix(fields[0], "warrant_audit_sink_sent_records"):
			sent += v
		case strings.HasPrefix(fields[0], "warrant_audit_sink_dropped_records"):
			dropped += v
		}
	}
	return sent, dropped, nil
}
