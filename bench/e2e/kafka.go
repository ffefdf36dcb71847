package main

// The Kafka broker behind the warrant-kafka column: Apache Kafka in KRaft mode from the jars
// tests/kafka/install.sh fetches, formatted and run by tests/kafka/broker.sh (as the tests run
// theirs) on the generator's core (so that it takes nothing from the server core whose CPU is
// measured), on loopback, stopped with the servers. warrant-kafka is warrant with its Kafka
// audit sink on and no audit file, so its column against warrant's is the sink's cost per
// review.

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
	nameKafka  = "warrant-kafka"
	kafkaTopic = "warrant-audit"
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
	// The script reads the jars' directory from the environment, as in the tests.
	if err := os.Setenv("WARRANT_KAFKA_LIBS", o.kafkaLibs); err != nil {
		return nil, "", err
	}
	script := func(args ...string) error {
		if out, err := exec.Command("bash", append([]string{o.kafkaBroker}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s %v: %w\n%s", o.kafkaBroker, args[:2], err, out)
		}
		return nil
	}
	if err := script("init", dir, strconv.Itoa(port), strconv.Itoa(controller)); err != nil {
		return nil, "", err
	}
	// Full JIT (no TieredStopAtLevel), as a broker that runs for minutes under load is run.
	broker, err := start(o.dir, "kafka", strconv.Itoa(o.clientCore), "bash", o.kafkaBroker, "run", dir)
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
	if err := script("tool", "org.apache.kafka.tools.TopicCommand", "--bootstrap-server", addr, "--create",
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
