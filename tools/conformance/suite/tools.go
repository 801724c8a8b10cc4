//go:build tools

// Package tools pins what make conformance-build compiles from this module: the suite's test package (its
// TestConformance) and the echo backend its manifests run. Imported only under the tools tag, so the module
// graph records both without a program of its own.
package tools

import (
	_ "sigs.k8s.io/gateway-api/conformance"
	_ "sigs.k8s.io/gateway-api/conformance/echo-basic"
)
