#!/usr/bin/env bash
# warrant's end-to-end benchmark: warrant and OPA side by side behind kube-apiserver's
# own webhook client, on loopback. The servers run pinned to core 0, the load generator
# (bench/e2e, which IS k8s.io/apiserver's webhook authorizer) to core 1. It checks that both
# servers decide a set of reviews alike, then times interleaved rounds and prints a table, then
# last the ratio lines.
#   bench/run.sh           full run (about 10 minutes once built; at most 15)
#   bench/run.sh --smoke   about two minutes: short rounds that prove it works (CI); a debug warrant
#                          unless WARRANT_PROFILE=release; fails if the servers decide any review
#                          differently, a server dies or a closed-loop call fails
# Builds (once, cached under ~/.cache/warrant-go): OPA from the version pinned in bench/opa/go.mod
# and the generator; warrant with `cargo build --release --locked` (WARRANT_BIN=path: that binary
# instead, nothing built).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=full
case "${1:-}" in
  "") ;;
  --smoke) mode=smoke ;;
  *) echo "usage: bench/run.sh [--smoke]" >&2; exit 2 ;;
esac
start=$(date +%s)

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
command -v timeout >/dev/null 2>&1 || missing+=(coreutils)
command -v h2load >/dev/null 2>&1 || missing+=(nghttp2-client)
[ -e /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${missing[@]}"
fi
if [ "$(nproc)" -lt 2 ]; then
  echo "bench/run.sh needs 2 cores (server on core 0, generator on core 1); this machine has $(nproc)" >&2
  exit 1
fi
if ! command -v cargo >/dev/null 2>&1 && [ -x "$HOME/.cargo/bin/cargo" ]; then
  export PATH="$HOME/.cargo/bin:$PATH"
fi
export GOFLAGS="${GOFLAGS:--mod=mod}"
cache=${XDG_CACHE_HOME:-$HOME/.cache}/warrant-go
mkdir -p "$cache"

echo "== OPA (bench/opa/go.mod, built once into $cache)"
opa_version=$(cd "$root/bench/opa" && go list -m -f '{{.Version}}' github.com/open-policy-agent/opa)
opa="$cache/opa-${opa_version}-$(go env GOVERSION)"
if [ ! -x "$opa" ]; then
  (cd "$root/bench/opa" && CGO_ENABLED=0 go build -trimpath -o "$opa.tmp" github.com/open-policy-agent/opa)
  mv "$opa.tmp" "$opa"
fi
"$opa" version | sed -n '1p;5p'

echo "== load generator (bench/e2e: k8s.io/apiserver's webhook authorizer)"
(cd "$root/bench/e2e" && go build -o "$cache/e2e" .)
apiserver_version=$(cd "$root/bench/e2e" && go list -m -f '{{.Version}}' k8s.io/apiserver)
echo "k8s.io/apiserver $apiserver_version, $(go version)"

# The figures come from a release build. The smoke only proves the script works, so by default it
# reuses the debug build CI has just made for the tests (WARRANT_PROFILE=release|debug overrides).
if [ "$mode" = smoke ]; then profile=${WARRANT_PROFILE:-debug}; else profile=${WARRANT_PROFILE:-release}; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "${WARRANT_BIN:-}" ]; then
  # A binary built elsewhere (say, to compare two builds); nothing is built.
  echo "== warrant ($WARRANT_BIN, not built here)"
  cp "$WARRANT_BIN" "$work/warrant"
  profile="given: $(sha256sum "$WARRANT_BIN" | cut -c1-12)"
  # The floor and the open-loop generator are built from this checkout (release) beside the
  # given warrant, unless FLOOR_BIN and OPEN_LOOP_BIN name them.
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/warrant-target}"
  for example in sar_floor open_loop; do
    given=FLOOR_BIN
    [ "$example" = open_loop ] && given=OPEN_LOOP_BIN
    if [ -n "${!given:-}" ]; then
      cp "${!given}" "$work/$example"
    else
      (cd "$root" && cargo build --release --locked --example "$example")
      cp "$CARGO_TARGET_DIR/release/examples/$example" "$work/$example"
    fi
  done
else
  echo "== warrant (cargo build --locked, $profile)"
  export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/warrant-target}"
  # The floor (examples/sar_floor.rs: warrant's TLS and HTTP stack answering a fixed review) and
  # the open-loop generator (examples/open_loop.rs) are built with the same profile.
  examples=(--example sar_floor --example open_loop)
  if [ "$profile" = release ]; then
    (cd "$root" && cargo build --release --locked --bin warrant "${examples[@]}")
  else
    (cd "$root" && cargo build --locked --bin warrant "${examples[@]}")
  fi
  # A copy taken right after the build: other worktrees share CARGO_TARGET_DIR.
  cp "$CARGO_TARGET_DIR/$profile/warrant" "$work/warrant"
  cp "$CARGO_TARGET_DIR/$profile/examples/sar_floor" "$work/sar_floor"
  cp "$CARGO_TARGET_DIR/$profile/examples/open_loop" "$work/open_loop"
fi
commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$root" status --porcelain 2>/dev/null | grep -q . && echo " (uncommitted changes)" || true)
echo "checkout $commit$dirty; warrant: $profile build"

echo "== machine"
echo "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$mode" = smoke ]; then
  args=(-rounds 1 -closed 1s -open 1s -warmup 300ms -generated 200)
  limit=300
else
  args=(-rounds 3 -closed 4s -open 5s -warmup 1s -generated 600)
  limit=900
fi
# The warrant-kafka column (warrant with its Kafka audit sink, a KRaft broker on the generator's
# core): with WARRANT_KAFKA_LIBS (what tests/kafka/install.sh prints, as .ci/run exports it),
# or BENCH_KAFKA=1 to fetch the jars here (cached in ~/.cache/warrant-kafka-<version>).
if [ -z "${WARRANT_KAFKA_LIBS:-}" ] && [ "${BENCH_KAFKA:-}" = 1 ]; then
  WARRANT_KAFKA_LIBS=$(bash "$root/tests/kafka/install.sh")
fi
if [ -n "${WARRANT_KAFKA_LIBS:-}" ]; then
  args+=(-kafka-libs "$WARRANT_KAFKA_LIBS" -kafka-broker "$root/tests/kafka/broker.sh")
fi
# The machine may be shared with builds: as root, run the benchmark (servers included) at a higher
# priority so they disturb it less. The load averages printed before and after tell how busy it was.
prio=()
if [ "$(id -u)" = 0 ]; then prio=(nice -n -10); fi
echo "== benchmark ($mode)"
status=0
"${prio[@]}" timeout --signal=TERM "$limit" taskset -c 1 "$cache/e2e" \
  -warrant "$work/warrant" -opa "$opa" -floor "$work/sar_floor" -open-loop "$work/open_loop" -h2load "$(command -v h2load)" \
  -policy "$root/bench/e2e/warrant-policy.yaml" -rego "$root/bench/e2e/policy.rego" \
  -authorization-config "$root/bench/e2e/authorization-config.yaml" \
  -dir "$work/run" -server-core 0 -client-core 1 -results "$work/results.json" "${args[@]}" || status=$?
if [ "$status" -ne 0 ]; then
  echo "bench/run.sh: the benchmark failed (status $status); server and client logs were in $work/run" >&2
  for f in "$work"/run/*.log; do
    [ -s "$f" ] && { echo "--- $f (last lines)" >&2; tail -n 20 "$f" >&2; }
  done
  exit "$status"
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg); took $(( $(date +%s) - start ))s" >&2
