#!/usr/bin/env bash
# One Apache Kafka node in KRaft mode (broker and controller in one process) on loopback, as
# everything here that needs a broker runs it: the Kafka sink's tests (tests/it/kafka/broker.rs),
# the kube-apiserver tier (tests/apiserver/kafka_harness_test.go), the benchmark's warrant-kafka
# column (bench/e2e/kafka.go) and bench/kafka-outage.sh. The jars are those tests/kafka/install.sh
# installs: $WARRANT_KAFKA_LIBS when the caller has it (.ci/run exports it), else installed here.
#
#   broker.sh init DIR PORT CONTROLLER [LISTENERS]
#       writes DIR/server.properties (clients on 127.0.0.1:PORT, the controller on
#       127.0.0.1:CONTROLLER, 3 partitions a topic, no automatic topics, every internal topic
#       with one replica) and formats DIR/data. LISTENERS, when given, replaces the four
#       plaintext listener lines (a SASL listener, for instance).
#   broker.sh run DIR [JVM_OPTION...]
#       runs the broker on DIR in the foreground; the caller's child becomes the JVM itself
#       (exec), so its pid is the broker's to signal. It logs to stdout and stderr and prints
#       "Kafka Server started" once it serves. JVM options go after the defaults (a heap of
#       512 MiB and the serial collector); tests add -XX:TieredStopAtLevel=1 to start sooner.
#   broker.sh tool CLASS ARG...
#       runs one of Kafka's command-line classes (org.apache.kafka.tools.TopicCommand,
#       org.apache.kafka.tools.consumer.ConsoleConsumer, ...) with a 256 MiB heap.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
libs="${WARRANT_KAFKA_LIBS:-}"
if [ -z "$libs" ]; then
  libs="$(bash "$here/install.sh")"
fi
java_common=("-Dlog4j2.configurationFile=$here/log4j2.properties" -cp "$libs/*")
usage="usage: broker.sh init DIR PORT CONTROLLER [LISTENERS] | run DIR [JVM_OPTION...] | tool CLASS ARG..."

# A cluster id in Kafka's format (a base64 UUID); every broker has its own data directory.
cluster_id=d2FycmFudC1icm9rZXIwMQ

case "${1:-}" in
  init)
    [ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
    dir=$2 port=$3 controller=$4
    listeners=${5:-"listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT"}
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    cat > "$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
controller.listener.names=CONTROLLER
log.dirs=$dir/data
num.partitions=3
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
$listeners
EOF
    java -Xmx256m -XX:TieredStopAtLevel=1 "${java_common[@]}" kafka.tools.StorageTool format \
      -t "$cluster_id" -c "$dir/server.properties" >/dev/null
    ;;
  run)
    [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
    dir=$2
    shift 2
    exec java -Xmx512m -XX:+UseSerialGC "$@" "${java_common[@]}" kafka.Kafka "$dir/server.properties"
    ;;
  tool)
    [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
    class=$2
    shift 2
    exec java -Xmx256m -XX:TieredStopAtLevel=1 "${java_common[@]}" "$class" "$@"
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac
