//go:build tools

// Package tools pins the main packages this module builds (kube-apiserver v1.38 for the conditional-authorization tier, kubectl, etcd);
// run.sh builds them with `go build` into the version-keyed cache.
package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
