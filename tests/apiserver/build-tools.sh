#!/usr/bin/env bash
# Builds kube-apiserver, kubectl and etcd from the pinned Go modules in tools/ into a cache
# directory keyed by their versions, and prints that directory. A second run finds the binaries
# and builds nothing. Go's module and build caches (GOMODCACHE, GOCACHE) are reused as they are.
# Usage: build-tools.sh [TOOLS_DIR [BINARY...]]: another tools module (tools-v1.38 for the
# conditional-authorization tier, built with GOTOOLCHAIN=go1.27.3) and only the named binaries.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tools="${1:-$here/tools}"
shift || true
wanted=("$@")
[ ${#wanted[@]} -gt 0 ] || wanted=(kube-apiserver etcd kubectl)
export GOFLAGS="${GOFLAGS:--mod=mod}"
k8s_version=$(cd "$tools" && go list -m -f '{{.Version}}' k8s.io/kubernetes)
etcd_version=$(cd "$tools" && go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
go_version=$(go env GOVERSION)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/warrant-go/kube-${k8s_version}-etcd-${etcd_version}-${go_version}"
bin="$cache/bin"
mkdir -p "$bin"
minor=$(echo "$k8s_version" | cut -d. -f2)
# Unstamped builds report v0.0.0-master; stamp what /version and kubectl print.
ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${k8s_version} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${minor} -X k8s.io/component-base/version.gitTreeState=clean"
build() { # NAME PACKAGE [LDFLAGS]
  case " ${wanted[*]} " in *" $1 "*) ;; *) return 0 ;; esac
  if [ -x "$bin/$1" ]; then return 0; fi
  echo "building $1 ($2)" >&2
  (cd "$tools" && CGO_ENABLED=0 go build -trimpath -ldflags "$3" -o "$bin/$1.tmp" "$2")
  mv "$bin/$1.tmp" "$bin/$1"
}
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$ldflags"
build etcd go.etcd.io/etcd/server/v3 "-s -w"
build kubectl k8s.io/kubernetes/cmd/kubectl "$ldflags"
echo "$bin"
