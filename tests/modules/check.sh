#!/usr/bin/env bash
# The import-cycle check of the issue "the guard becomes an authorizer, the vocabulary depends on
# nothing": cargo-modules (rust-analyzer) prints the library's module graph with every "uses"
# edge resolved to the module that defines the item, and acyclic.py fails on any cycle, between
# any two modules and between top-level modules. Installs the pinned cargo-modules when missing
# (about 5 minutes on 2 cores, once per machine).
set -euo pipefail
cd "$(dirname "$0")/../.."

version=0.27.0 # the newest release that builds with our rustc (0.28 needs 1.98)
bin="$HOME/.cargo/bin/cargo-modules"
if ! "$bin" --version 2>/dev/null | grep -q " $version\$"; then
  echo "installing cargo-modules $version"
  env -u CARGO_TARGET_DIR cargo install --quiet --locked --version "$version" cargo-modules
fi
graph=$(mktemp)
trap 'rm -f "$graph"' EXIT
"$bin" dependencies --lib --no-fns --no-traits --no-types --no-externs --no-sysroot --no-owns >"$graph"
python3 tests/modules/acyclic.py "$graph"
