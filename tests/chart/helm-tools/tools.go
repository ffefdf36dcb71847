//go:build tools

// Package tools pins the Helm CLI this module builds (tests/chart/build-helm.sh builds it with
// `go build` into a cache keyed by its version).
package tools

import (
	_ "helm.sh/helm/v4/cmd/helm"
)
