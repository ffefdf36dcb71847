#!/usr/bin/env bash
# The Dockerfile builds: assembles exactly its build context (.dockerignore applied) in a scratch
# folder and runs its build stage's steps there, offline, reusing cargo's build cache
# (check.py says how). No Docker engine is needed. Usage: tests/docker-context/check.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
target="${CARGO_TARGET_DIR:-$HOME/.cache/warrant-target}"
mkdir -p "$target"
scratch="${XDG_CACHE_HOME:-$HOME/.cache}/warrant-docker-context/src"
start=$(date +%s)
python3 "$here/check.py" "$root" "$scratch" "$target"
echo "docker-context check took $(( $(date +%s) - start ))s"
