//go:build tools

// Package tools pins the containerd commands the real node runs: the daemon, ctr (image import) and the
// runc shim.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
