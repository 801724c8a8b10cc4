//go:build tools

// Package tools pins the commands this module builds, so `go mod tidy` keeps their dependencies.
package tools

import (
	_ "github.com/envoyproxy/gateway/cmd/egctl"
	_ "github.com/envoyproxy/gateway/cmd/envoy-gateway"
)
