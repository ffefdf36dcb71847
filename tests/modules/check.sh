#!/usr/bin/env bash
# The import-cycle check: cargo-modules (rust-analyzer) prints the library's module graph with
# every "uses" edge of a `use` declaration resolved to the module that defines the item;
# inline.py adds the edges of paths written inline (`super::buffer::BufferSettings` in a field
# type, `crate::config::Mode::Enforce` in an expression), which cargo-modules does not report;
# acyclic.py fails on any cycle in the union, between any two modules and between top-level
# modules. Installs the pinned cargo-modules when missing
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
python3 tests/modules/inline.py src >>"$graph"
python3 tests/modules/acyclic.py "$graph"
