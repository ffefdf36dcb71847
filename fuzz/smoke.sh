#!/usr/bin/env bash
# The bounded fuzz smoke of CI: builds the fuzz crate (installing cargo-fuzz when missing) and
# runs every target for SECONDS (default 10) with its seeds and dictionary. Fails on the first
# crash, panic, timeout or OOM. Long runs: `bash fuzz/run.sh TARGET 1800` (CONTRIBUTING.md, "Fuzzing").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
seconds="${1:-10}"
export PATH="$HOME/.cargo/bin:$PATH"
unset CARGO_TARGET_DIR
# The same cache directory as run.sh (kept by the machine, shared by fresh clones).
fuzz_target_dir="${WARRANT_FUZZ_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/warrant-fuzz-target}"
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
(cd "$here" && cargo +nightly fuzz build --target-dir "$fuzz_target_dir")
targets=$(sed -n 's/^name = "\([a-z_]*\)"$/\1/p' "$here/Cargo.toml" | grep -v '^warrant-fuzz$')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in $targets; do
  echo "== fuzz smoke: $t (${seconds}s)"
  status=0
  bash "$here/run.sh" "$t" "$seconds" >"$log" 2>&1 || status=$?
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done [0-9]+ runs)' "$log" || true
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$log" >&2
    echo "fuzz target $t failed (status $status; artifacts in fuzz/artifacts/$t)" >&2
    exit 1
  fi
done
echo "fuzz smoke: all targets ran ${seconds}s without a finding"
