#!/usr/bin/env bash
# Runs one fuzz target for SECONDS (default 1800) in one process (one job, one core), with its
# seed corpus and dictionary: `bash fuzz/run.sh TARGET [SECONDS] [extra libFuzzer flags...]`. The corpus grows in
# fuzz/corpus/TARGET (not committed), crashes land in fuzz/artifacts/TARGET. Needs nightly and
# cargo-fuzz (`cargo install cargo-fuzz --locked`). Prints libFuzzer's own summary; exits
# non-zero when a crash, panic, timeout or OOM was found.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
target="${1:?usage: run.sh TARGET [SECONDS] [libFuzzer flags...]}"
seconds="${2:-1800}"
shift $(( $# >= 2 ? 2 : 1 ))

# The fuzz crate keeps its own target directory (sanitizer builds would only evict the main
# crate's artifacts from the shared cache), outside the clone so that a fresh clone on the same
# machine reuses it (a cold build of the fuzz crate takes about ten minutes on two cores).
unset CARGO_TARGET_DIR
fuzz_target_dir="${WARRANT_FUZZ_TARGET_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/warrant-fuzz-target}"

corpus="$here/corpus/$target"
mkdir -p "$corpus"
# Copies each seed file into the corpus (existing files are kept). A cluster-state input's first
# byte picks the file's extension (odd: .json), so YAML seeds get a leading newline.
seed() {
  local prefix="$1"; shift
  local f
  for f in "$@"; do
    [ -f "$f" ] || continue
    local dest="$corpus/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
    [ -e "$dest" ] || { printf '%b' "$prefix"; cat "$f"; } > "$dest"
  done
}
case "$target" in
  review_decode)
    dict=json; seed '' "$root"/tests/fixtures/reviews/*.json ;;
  admission_decode)
    dict=json; seed '' "$here"/seeds/admission_decode/* ;;
  config_load)
    dict=yaml
    seed '' "$root"/authz-config/*.yaml "$root"/authz-config/examples/*.yaml \
      "$root"/tests/fixtures/bad-configs/*.yaml ;;
  cel_expression)
    dict=cel; seed '' "$here"/seeds/cel_expression/*
    # Every one-line expression of the shipped configs and test suites.
    n=0
    grep -rhoE "expression: *\"[^\"]+\"" "$root"/authz-config "$root"/tests/fixtures/bad-configs \
      | sed -E 's/^expression: *"(.*)"$/\1/' | sort -u | while IFS= read -r e; do
        n=$((n + 1)); [ -e "$corpus/seed-config-$n" ] || printf '%s' "$e" > "$corpus/seed-config-$n"
      done ;;
  kubeconfig)
    dict=yaml; seed '' "$root"/kubeconfigs/*.yaml ;;
  tickets)
    dict=yaml; seed '' "$root"/authz-config/guard-tickets.yaml "$root"/authz-config/validation-ring-tickets.yaml ;;
  cluster_state)
    dict=yaml
    seed '\n' "$root"/authz-config/tests/validation-ring-state/* "$root"/authz-config/tests/validation-ring-objects/* ;;
  *) echo "unknown target $target (see fuzz/Cargo.toml)" >&2; exit 2 ;;
esac

cd "$here"
flags=(-dict="$here/dict/$dict.dict" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10
  -print_final_stats=1 "$@")
# fuzz/long.sh builds once and runs copies of the binaries (WARRANT_FUZZ_BINARIES), so that a
# campaign of hours is not rebuilt, or changed, by edits made to the tree meanwhile.
if [ -n "${WARRANT_FUZZ_BINARIES:-}" ]; then
  exec "$WARRANT_FUZZ_BINARIES/$target" "$corpus" "${flags[@]}"
fi
exec cargo +nightly fuzz run --target-dir "$fuzz_target_dir" "$target" "$corpus" -- "${flags[@]}"
