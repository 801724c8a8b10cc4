//go:build tools

// Package tools pins MetalLB's controller and speaker (L2 mode) for the real node's load balancer.
package tools

import (
	_ "go.universe.tf/metallb/controller"
	_ "go.universe.tf/metallb/speaker"
)
