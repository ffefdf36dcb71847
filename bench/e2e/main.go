// Command e2e is warrant's end-to-end benchmark: it starts warrant (without and with an audit
// file, and with -kafka-libs with its Kafka audit sink) and OPA pinned to one core, and drives them from another core through kube-apiserver's own
// webhook authorizer (k8s.io/apiserver/plugin/pkg/authorizer/webhook, built from an
// AuthorizationConfiguration and a kubeconfig as kube-apiserver builds it, cache off, HTTP/2 where
// the server offers it, mutual TLS). It checks that both servers decide a set of reviews alike,
// then times interleaved rounds: closed loop at fixed concurrency and open loop at fixed rates,
// with the servers' CPU per review from /proc. bench/run.sh builds everything and runs it.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

type options struct {
	warrantBin, opaBin, floorBin, h2loadBin, openLoopBin string
	policy, rego, template, dir                          string
	serverCore                                           string
	serverCoreN, clientCore                              int
	rounds                                               int
	closedDur, openDur, warmup                           time.Duration
	concurrencies                                        []int
	generated                                            int
	results                                              string
	kafkaLibs, kafkaBroker                               string
}

func main() {
	var o options
	var conc string
	flag.StringVar(&o.warrantBin, "warrant", "", "warrant binary")
	flag.StringVar(&o.opaBin, "opa", "", "opa binary")
	flag.StringVar(&o.floorBin, "floor", "", "the floor server (cargo build --example sar_floor)")
	flag.StringVar(&o.h2loadBin, "h2load", "h2load", "h2load (nghttp2), the capacity generator")
	flag.StringVar(&o.openLoopBin, "open-loop", "", "the open-loop generator (cargo build --example open_loop)")
	flag.StringVar(&o.policy, "policy", "", "warrant configuration (bench/e2e/warrant-policy.yaml)")
	flag.StringVar(&o.rego, "rego", "", "OPA policy (bench/e2e/policy.rego)")
	flag.StringVar(&o.template, "authorization-config", "", "AuthorizationConfiguration template (bench/e2e/authorization-config.yaml)")
	flag.StringVar(&o.dir, "dir", "", "work directory (certificates, logs, audit file)")
	flag.StringVar(&o.serverCore, "server-core", "0", "CPU the servers are pinned to (taskset -c)")
	flag.IntVar(&o.clientCore, "client-core", 1, "CPU this generator is pinned to (for the disturbance figures)")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds")
	flag.DurationVar(&o.closedDur, "closed", 4*time.Second, "timed length of one closed-loop run")
	flag.DurationVar(&o.openDur, "open", 5*time.Second, "timed length of one open-loop run")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "untimed warm-up before each run")
	flag.StringVar(&conc, "concurrency", "1,8,64", "closed-loop concurrencies")
	flag.IntVar(&o.generated, "generated", 600, "generated reviews in the equivalence check (besides the hand-made ones)")
	flag.StringVar(&o.results, "results", "", "also write the pooled results as JSON here")
	flag.StringVar(&o.kafkaLibs, "kafka-libs", "", "Apache Kafka's jars (tests/kafka/install.sh): add the warrant-kafka column, warrant with its Kafka audit sink")
	flag.StringVar(&o.kafkaBroker, "kafka-broker", "", "the script that formats and runs the broker (tests/kafka/broker.sh)")
	probe := flag.Duration("stall-probe", 0, "only spin this long on the core taskset gave, and print the machine's stalls seen meanwhile as JSON (the bench runs it itself)")
	probeCore := flag.Int("stall-probe-core", 0, "the core -stall-probe reports it ran on")
	flag.Parse()
	if *probe > 0 {
		if err := runStallProbe(*probeCore, *probe); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			os.Exit(1)
		}
		return
	}
	for _, c := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 {
			fmt.Fprintln(os.Stderr, "bad -concurrency:", conc)
			os.Exit(2)
		}
		o.concurrencies = append(o.concurrencies, n)
	}
	if n, err := strconv.Atoi(o.serverCore); err == nil {
		o.serverCoreN = n
	} else {
		fmt.Fprintln(os.Stderr, "-server-core must be one CPU number")
		os.Exit(2)
	}
	if o.warrantBin == "" || o.opaBin == "" || o.floorBin == "" || o.openLoopBin == "" || o.policy == "" || o.rego == "" || o.template == "" || o.dir == "" {
		fmt.Fprintln(os.Stderr, "usage: e2e -warrant BIN -opa BIN -floor BIN -open-loop BIN -policy YAML -rego REGO -authorization-config YAML -dir DIR [flags]")
		os.Exit(2)
	}
	if o.kafkaLibs != "" && o.kafkaBroker == "" {
		fmt.Fprintln(os.Stderr, "-kafka-libs needs -kafka-broker (tests/kafka/broker.sh)")
		os.Exit(2)
	}
	stopOnSignal()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
}
