#!/usr/bin/env bash
# The Kafka audit sink through a broker outage under load: warrant (release, pinned to core 0)
# with its Kafka sink and an on-disk spool answers 5,000 reviews/s from h2load (core 1, bearer
# token) for 100 s; the KRaft broker (core 1) is killed at 20 s and started again at 80 s. Every
# 2 s it prints warrant's resident memory and its sink's metrics; at the end, how many reviews
# were answered, how many records reached Kafka, how many were dropped, and the peaks of
# resident memory and of records held (in memory, in flight and spooled). It fails if a record
# was dropped, if fewer records reached the topic than reviews were answered, or if records are
# still held a minute after the load ends.
#   bench/kafka-outage.sh                     builds warrant (cargo build --release --locked)
#   WARRANT_BIN=/path/to/warrant bench/kafka-outage.sh
#   SPOOL=off bench/kafka-outage.sh           no spool: the queue in memory fills and the rest is
#                                             dropped (counted); then it fails if the records held
#                                             ever exceeded the queue plus one batch in flight,
#                                             and requires drops instead of forbidding them
# Loopback only; stops by itself (at most about 4 minutes).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rate=${RATE:-5000} before=20 outage=60 after=20
total=$((before + outage + after))
queue=${QUEUE:-65536}
command -v h2load >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq nghttp2-client; }
libs=$(bash "$root/tests/kafka/install.sh")
if [ -z "${WARRANT_BIN:-}" ]; then
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/warrant-target}"
  (cd "$root" && cargo build --release --locked --bin warrant)
  WARRANT_BIN="$CARGO_TARGET_DIR/release/warrant"
fi
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Certificates (ECDSA P-256) and the bearer token h2load presents.
openssl ecparam -name prime256v1 -genkey -noout -out ca.key
openssl req -x509 -new -key ca.key -subj /CN=bench-ca -days 1 -out ca.crt 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out tls.key
openssl req -new -key tls.key -subj /CN=127.0.0.1 -out tls.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' > san.ext
openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 -extfile san.ext -out tls.crt 2>/dev/null
token=kafka-outage-token
echo "$token,bench,1001,\"bench\"" > tokens.csv
cat > review.json <<'EOF'
{"kind":"SubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"resourceAttributes":{"namespace":"shop","verb":"get","group":"apps","version":"v1","resource":"deployments","name":"web"},"user":"owner-ann","groups":["dev","system:authenticated"],"extra":{"scopes":["a","b"]},"uid":"42"},"status":{"allowed":false}}
EOF

# One KRaft node on loopback, formatted and run by tests/kafka/broker.sh as the tests run theirs.
export WARRANT_KAFKA_LIBS="$libs"
broker_sh=$root/tests/kafka/broker.sh
kport=$(free_port) cport=$(free_port)
bash "$broker_sh" init "$work/kafka" "$kport" "$cport"
broker=
start_broker() {
  : > kafka.log
  taskset -c 1 bash "$broker_sh" run "$work/kafka" -XX:TieredStopAtLevel=1 >> kafka.log 2>&1 &
  broker=$!
  pids+=("$broker")
  for _ in $(seq 1 450); do
    grep -q "Kafka Server started" kafka.log && return 0
    sleep 0.2
  done
  echo "the Kafka broker did not start:" >&2; tail -20 kafka.log >&2; exit 1
}
start_broker
topic=warrant-audit
bash "$broker_sh" tool org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$kport" \
  --create --topic "$topic" --partitions 3 --replication-factor 1 >/dev/null

spool=(--audit-kafka-spool-dir spool)
if [ "${SPOOL:-on}" = off ]; then spool=(); fi
wport=$(free_port)
taskset -c 0 "$WARRANT_BIN" serve --config "$root/bench/e2e/warrant-policy.yaml" --listen "127.0.0.1:$wport" \
  --tls-cert-file tls.crt --tls-private-key-file tls.key --client-ca-file ca.crt --token-auth-file tokens.csv \
  --state-dir state --audit-log none --audit-kafka-brokers "127.0.0.1:$kport" --audit-kafka-topic "$topic" \
  --audit-kafka-queue-size "$queue" "${spool[@]}" > warrant.log 2>&1 &
warrant=$!
pids+=("$warrant")
metrics() { curl -sk -H "Authorization: Bearer $token" "https://127.0.0.1:$wport/metrics"; }
for _ in $(seq 1 100); do metrics >/dev/null 2>&1 && break; sleep 0.1; done
rss() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$warrant/status"; }
metric() { metrics | awk -v m="$1" '$1 ~ "^"m"({|$)" { v += $2 } END { printf "%.0f", v }'; }
idle=$(rss)
echo "warrant pid $warrant on core 0 (idle RSS $idle MiB), broker on core 1, h2load at $rate/s for ${total}s; queue bound $queue records, spool ${SPOOL:-on}"

conns=8
taskset -c 1 h2load -t 1 -c "$conns" -m 16 --rps $((rate / conns)) -D "${total}s" -d review.json \
  -H 'content-type: application/json' -H "authorization: Bearer $token" \
  "https://127.0.0.1:$wport/authorize" > h2load.out 2>&1 &
load=$!
pids+=("$load")
peak_rss=0 peak_queued=0
printf '%5s  %-8s %9s %14s %14s %9s %10s %6s\n' t broker "RSS MiB" "queued" "sent" dropped "spool B" up
for t in $(seq 0 2 $((total + 60))); do
  if [ "$t" -eq "$before" ]; then kill -9 "$broker"; wait "$broker" 2>/dev/null || true; fi
  if [ "$t" -eq $((before + outage)) ]; then start_broker; fi
  state=up
  if [ "$t" -ge "$before" ] && [ "$t" -lt $((before + outage)) ]; then state=down; fi
  r=$(rss) q=$(metric warrant_audit_sink_queued_records)
  printf '%5s  %-8s %9s %14s %14s %9s %10s %6s\n' "$t" "$state" "$r" "$q" \
    "$(metric warrant_audit_sink_sent_records_total)" "$(metric warrant_audit_sink_dropped_records_total)" \
    "$(metric warrant_audit_sink_spool_bytes)" "$(metric warrant_audit_sink_up)"
  peak_rss=$(awk -v a="$peak_rss" -v b="$r" 'BEGIN { print (b > a) ? b : a }')
  peak_queued=$(( q > peak_queued ? q : peak_queued ))
  if ! kill -0 "$load" 2>/dev/null && [ "$q" -eq 0 ]; then break; fi
  sleep 2
done
wait "$load" || true
answered=$(sed -n 's/.* \([0-9]*\) succeeded.*/\1/p' h2load.out)
sent=$(metric warrant_audit_sink_sent_records_total)
dropped=$(metric warrant_audit_sink_dropped_records_total)
queued=$(metric warrant_audit_sink_queued_records)
echo "reviews answered: $answered; records sent to Kafka: $sent; dropped: $dropped; still queued: $queued"
echo "RSS: idle $idle MiB, peak $peak_rss MiB; peak records held (memory, in flight and spool): $peak_queued"
status=0
if [ "${SPOOL:-on}" = off ]; then
  # Without a spool the queue is the bound: at most the queue and one batch (500) in flight.
  [ "$peak_queued" -le $((queue + 500)) ] || { echo "FAIL: $peak_queued records held, above the queue bound" >&2; status=1; }
  [ "${dropped:-0}" -gt 0 ] || { echo "FAIL: nothing dropped: the outage never filled the queue" >&2; status=1; }
  [ $((sent + dropped)) -ge "${answered:-1}" ] || { echo "FAIL: records neither sent nor counted as dropped" >&2; status=1; }
else
  [ "${dropped:-1}" -eq 0 ] || { echo "FAIL: records were dropped" >&2; status=1; }
  [ "${sent:-0}" -ge "${answered:-1}" ] || { echo "FAIL: fewer records sent than reviews answered" >&2; status=1; }
fi
[ "${queued:-1}" -eq 0 ] || { echo "FAIL: records still queued at the end" >&2; status=1; }
exit "$status"
