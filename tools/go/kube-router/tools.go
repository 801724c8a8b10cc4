//go:build tools

// Package tools pins kube-router, run on the real node only as its NetworkPolicy controller.
package tools

import _ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
