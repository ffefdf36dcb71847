#!/usr/bin/env bash
# warrant's criterion benchmarks against the Kubernetes code that does the same job, measured in
# the same run on the same machine, with the ratio:
#   1. one review through 3 matchConditions and a 20-rule policy (benches/policy_review.rs) vs
#      Kubernetes' authorization CEL (bench/celpeer: k8s.io/apiserver compiler and matcher);
#   2. a cached webhook verdict (benches/webhook_cache_hit.rs) vs kube-apiserver's webhook
#      authorizer cache hit (bench/webhookpeer: k8s.io/apiserver/plugin/pkg/authorizer/webhook).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/warrant-go
mkdir -p "$cache"

# criterion's middle estimate for BENCH (a filter) of bench target TARGET, in ns.
criterion_ns() {
  local target=$1 bench=$2 out line mid unit
  out=$(cd "$root" && cargo bench --locked --bench "$target" -- "$bench" \
    --warm-up-time 1 --measurement-time 3 2>&1)
  line=$(grep -A1 -F "$bench" <<<"$out" | grep "time:" | head -1)
  read -r mid unit < <(sed -E 's/.*\[[^ ]+ [^ ]+ ([0-9.]+) ([^ ]+) .*/\1 \2/' <<<"$line")
  case "$unit" in
    ns) echo "$mid" ;;
    µs|us) awk "BEGIN{print $mid*1000}" ;;
    ms) awk "BEGIN{print $mid*1000000}" ;;
    *) echo "unexpected criterion output: $line" >&2; exit 1 ;;
  esac
}

row() {
  awk -v what="$1" -v r="$2" -v g="$3" 'BEGIN{
    printf "%-34s warrant %9.0f ns   kubernetes %9.0f ns   kubernetes/warrant %6.2fx\n", what, r, g, g/r }'
}

(cd "$root/bench/celpeer" && go build -o "$cache/celpeer" .)
(cd "$root/bench/webhookpeer" && go build -o "$cache/webhookpeer" .)

cel_go=$("$cache/celpeer" | sed -n 's/.*ns_per_review=\([0-9]*\).*/\1/p')
cel_rust=$(criterion_ns policy_review policy_20_rules_3_conditions)
row "policy: 3 conditions + 20 rules" "$cel_rust" "$cel_go"

hit_go=$("$cache/webhookpeer" | sed -n 's/.*ns_per_hit=\([0-9]*\).*/\1/p')
hit_rust=$(criterion_ns webhook_cache_hit webhook_cache_hit/authorizer)
row "webhook: cached verdict" "$hit_rust" "$hit_go"
