#!/usr/bin/env bash
# The long fuzz campaign: every target for SECONDS (default 1800), JOBS (default 1) at a time, at
# low priority (nice 10) so that builds on the same machine keep going. Logs land in
# fuzz/logs/TARGET.log (not committed); the last lines print each target's executions, peak RSS
# and whether it found anything. Exits non-zero when any target found a crash, timeout or OOM.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-1800}"
jobs="${2:-1}"
export PATH="$HOME/.cargo/bin:$PATH"
targets=$(sed -n 's/^name = "\([a-z_]*\)"$/\1/p' "$here/Cargo.toml" | grep -v '^warrant-fuzz$')
mkdir -p "$here/logs"
# Build once, then run copies of the binaries (see run.sh), with the commit they were built from.
fuzz_target_dir="${WARRANT_FUZZ_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/warrant-fuzz-target}"
(cd "$here" && unset CARGO_TARGET_DIR && cargo +nightly fuzz build --target-dir "$fuzz_target_dir") || exit 1
bins="$here/logs/bin"
rm -rf "$bins" && mkdir -p "$bins"
for t in $targets; do
  cp "$fuzz_target_dir/x86_64-unknown-linux-gnu/release/$t" "$bins/$t" || exit 1
done
export WARRANT_FUZZ_BINARIES="$bins"
echo "fuzzing $(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet || echo '+dirty'): $seconds s per target, $jobs at a time"
run_one() {
  local t=$1 status=0
  nice -n 10 bash "$here/run.sh" "$t" "$seconds" >"$here/logs/$t.log" 2>&1 || status=$?
  echo "$status" >"$here/logs/$t.status"
}
running=0
for t in $targets; do
  run_one "$t" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
failed=0
for t in $targets; do
  st=$(cat "$here/logs/$t.status" 2>/dev/null || echo missing)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$here/logs/$t.log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$here/logs/$t.log" | tail -1)
  printf '%-18s %5ss  executions %-12s peak RSS %5s MB  %s\n' "$t" "$seconds" "${execs:-?}" "${rss:-?}" \
    "$([ "$st" = 0 ] && echo 'no finding' || echo "FOUND (status $st, see fuzz/artifacts/$t)")"
  [ "$st" = 0 ] || failed=1
done
exit "$failed"
