//go:build tools

// Package tools pins OPA: run.sh builds github.com/open-policy-agent/opa (its main package) from
// this module's go.mod into a version-keyed cache directory, so OPA's dependencies are the
// versions OPA's own release selects, untouched by the Kubernetes modules of the load generator.
package tools

import (
	_ "github.com/open-policy-agent/opa/cmd"
)
