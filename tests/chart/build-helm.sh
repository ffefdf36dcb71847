#!/usr/bin/env bash
# Builds the Helm CLI from the Go module pinned in helm-tools/ (helm.sh/helm/v4, from the Go
# module proxy) into a cache directory keyed by its version and Go's, and prints the binary's
# path. A second run finds the binary and builds nothing; Go's module and build caches are
# reused as they are (as tests/apiserver/build-tools.sh does for kube-apiserver).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tools="$here/helm-tools"
export GOFLAGS="${GOFLAGS:--mod=mod}"
helm_version=$(cd "$tools" && go list -m -f '{{.Version}}' helm.sh/helm/v4)
go_version=$(go env GOVERSION)
bin="${XDG_CACHE_HOME:-$HOME/.cache}/warrant-go/helm-${helm_version}-${go_version}/bin"
mkdir -p "$bin"
if [ ! -x "$bin/helm" ]; then
  echo "building helm ${helm_version}" >&2
  # Stamped as upstream's Makefile does, so `helm version` prints the release.
  (cd "$tools" && CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=${helm_version} -X helm.sh/helm/v4/internal/version.gitTreeState=clean" \
    -o "$bin/helm.tmp" helm.sh/helm/v4/cmd/helm)
  mv "$bin/helm.tmp" "$bin/helm"
fi
echo "$bin/helm"
