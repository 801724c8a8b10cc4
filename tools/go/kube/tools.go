//go:build tools

// Package tools pins the commands this module builds, so `go mod tidy` keeps their dependencies:
// the control plane the tests have always run, and the node components of the real node (issue 25).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
