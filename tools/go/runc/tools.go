//go:build tools

// Package tools pins runc, the OCI runtime under containerd's shim (cgo, -tags seccomp: pods ask for
// the RuntimeDefault seccomp profile).
package tools

import _ "github.com/opencontainers/runc"
