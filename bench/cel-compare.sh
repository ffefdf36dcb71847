#!/usr/bin/env bash
# One review through 3 matchConditions and a 20-rule policy: warrant (criterion,
# benches/policy_review.rs) against Kubernetes' own authorization CEL (bench/celpeer, the
# k8s.io/apiserver compiler and matcher), measured in the same run. Prints both and the ratio.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/warrant-go
mkdir -p "$cache"
(cd "$root/bench/celpeer" && go build -o "$cache/celpeer" .)
go_ns=$("$cache/celpeer" | sed -n 's/.*ns_per_review=\([0-9]*\).*/\1/p')
out=$(cd "$root" && cargo bench --locked --bench policy_review -- policy_20_rules_3_conditions \
  --warm-up-time 1 --measurement-time 3 2>&1)
line=$(grep -A1 "policy_20_rules_3_conditions" <<<"$out" | grep "time:" | head -1)
# criterion prints `time: [low mid high]` with a unit after each number; take the middle.
read -r mid unit < <(sed -E 's/.*\[[^ ]+ [^ ]+ ([0-9.]+) ([^ ]+) .*/\1 \2/' <<<"$line")
case "$unit" in
  ns) rust_ns=$mid ;;
  µs|us) rust_ns=$(awk "BEGIN{print $mid*1000}") ;;
  ms) rust_ns=$(awk "BEGIN{print $mid*1000000}") ;;
  *) echo "unexpected criterion unit: $line" >&2; exit 1 ;;
esac
awk -v r="$rust_ns" -v g="$go_ns" 'BEGIN{
  printf "warrant (cel crate)        %10.0f ns/review\n", r;
  printf "kubernetes (cel-go)        %10.0f ns/review\n", g;
  printf "ratio kubernetes/warrant   %10.2fx\n", g/r }'
