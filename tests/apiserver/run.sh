#!/usr/bin/env bash
# The real kube-apiserver tier: builds (or reuses) kube-apiserver, etcd and kubectl from the
# pinned Go modules in tools/, builds warrant with cargo, and runs the Go scenarios against them.
# Usage: tests/apiserver/run.sh            (WARRANT_PROFILE=release for a release warrant)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
start=$(date +%s)

missing=()
command -v go >/dev/null 2>&1 || missing+=(golang-go)
command -v git >/dev/null 2>&1 || missing+=(git)
[ -e /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
# The chart test's Prometheus (chart_prometheus_test.go) and its private mount namespace (unshare).
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
# The documentation's commands (docs_test.go runs them as written).
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
command -v curl >/dev/null 2>&1 || missing+=(curl)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
go version

echo "== kube-apiserver, etcd, kubectl (cached under ${XDG_CACHE_HOME:-$HOME/.cache}/warrant-go/)"
KUBE_BIN_DIR=$("$here/build-tools.sh")
export KUBE_BIN_DIR
"$KUBE_BIN_DIR/kube-apiserver" --version
"$KUBE_BIN_DIR/etcd" --version | sed -n 1p
"$KUBE_BIN_DIR/kubectl" version --client 2>/dev/null | sed -n 1p

# The conditional-authorization test (conditional_test.go) needs kube-apiserver v1.38, built
# from tools-v1.38 with Go 1.27 (fetched by the go command from the module proxy); etcd and
# kubectl are the main tier's.
echo "== kube-apiserver v1.38.0-beta.0 (ConditionalAuthorization), cached the same way"
KUBE138_BIN_DIR=$(GOTOOLCHAIN=go1.27.3 "$here/build-tools.sh" "$here/tools-v1.38" kube-apiserver)
export KUBE138_BIN_DIR
"$KUBE138_BIN_DIR/kube-apiserver" --version

# The chart test (chart_test.go) renders charts/warrant with helm, built from its Go module and
# cached by version like the binaries above.
echo "== helm (cached under ${XDG_CACHE_HOME:-$HOME/.cache}/warrant-go/)"
HELM_BIN=$("$root/tests/chart/build-helm.sh")
export HELM_BIN
"$HELM_BIN" version --short

# The Kafka sink's tier test (audit_kafka_test.go) starts a real broker from Apache Kafka's jars,
# installed once by tests/kafka/install.sh (cached under ~/.cache/warrant-kafka-<version>);
# .ci/run has already set WARRANT_KAFKA_LIBS.
echo "== Apache Kafka's jars (tests/kafka/install.sh)"
if [ -z "${WARRANT_KAFKA_LIBS:-}" ]; then
  WARRANT_KAFKA_LIBS="$(bash "$root/tests/kafka/install.sh")"
fi
export WARRANT_KAFKA_LIBS
echo "kafka: $WARRANT_KAFKA_LIBS"

echo "== warrant"
profile="${WARRANT_PROFILE:-debug}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/warrant-target}"
if [ "$profile" = release ]; then
  (cd "$root" && cargo build --locked --release --bin warrant --bin kubectl-warrant)
else
  (cd "$root" && cargo build --locked --bin warrant --bin kubectl-warrant)
fi
# A copy taken right after the build: other worktrees share CARGO_TARGET_DIR and may replace the
# binary before (or while) the tier runs.
bin_dir="$(mktemp -d)"
trap 'rm -rf "$bin_dir"' EXIT
cp "$CARGO_TARGET_DIR/$profile/warrant" "$bin_dir/warrant"
cp "$CARGO_TARGET_DIR/$profile/kubectl-warrant" "$bin_dir/kubectl-warrant"
export WARRANT_BIN="$bin_dir/warrant"
export KUBECTL_WARRANT_BIN="$bin_dir/kubectl-warrant"
echo "warrant: $CARGO_TARGET_DIR/$profile/warrant ($profile), copied to $WARRANT_BIN (and kubectl-warrant beside it)"

echo "== go test (tests/apiserver)"
cd "$here"
export GOFLAGS="${GOFLAGS:--mod=mod}"
status=0
go test -count=1 -timeout 15m -v . || status=$?
echo "apiserver tier took $(( $(date +%s) - start ))s"
exit "$status"
