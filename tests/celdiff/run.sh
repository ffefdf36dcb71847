#!/usr/bin/env bash
# Builds the Go side of the differential CEL test (cached under ~/.cache/warrant-go) and judges
# the corpus with Kubernetes' authorization CEL. Usage: run.sh RESULTS.jsonl
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh RESULTS.jsonl}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/warrant-go
mkdir -p "$cache"
(cd "$here" && go mod download && go build -o "$cache/celdiff" .)
"$cache/celdiff" -versions
"$cache/celdiff" -corpus "$here/corpus.yaml" -out "$out"
