#!/usr/bin/env bash
# Build the real components the tests run from their pinned Go modules (tools/go/*/go.mod + go.sum) into
# DEST (.tools/bin). Nothing prebuilt is downloaded: only modules from the Go module proxy.
# A binary is rebuilt only when its wrapper module (go.mod, go.sum, *.go), its build flags or the Go version
# changes. Builds run under `nice`: the machine is shared with the tests.
# Usage: tools/build-go.sh DEST [NAME...]   (NAMEs: only those builds, e.g. the long ones started early)
set -euo pipefail
mkdir -p "${1:?destination folder}"
dest=$(cd "$1" && pwd)
shift
only=" $* "
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dest/../stamps"
stamps=$(cd "$dest/../stamps" && pwd)
# Never fetch a toolchain: the machine's Go (1.26) builds every module here.
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0

# name | wrapper module folder | extra ldflags | packages...   (env: tags=..., cgo=1 for a cgo build)
build() {
  local name=$1 module=$2 ldflags=$3
  shift 3
  [[ $only == "  " || $only == *" $name "* ]] || return 0
  local stamp
  stamp=$( (go version; cat "$here/go/$module"/go.* "$here/go/$module"/*.go
    echo "$ldflags $* tags=${tags:-} cgo=${cgo:-0}") | sha256sum | cut -c1-16)
  local have=1 bin out=${out:-$dest}
  for pkg in "$@"; do
    bin=$out/$(basename "$pkg")
    [[ -x $bin ]] || have=0
  done
  if [[ $have == 1 && -f $stamps/$name && $(cat "$stamps/$name") == "$stamp" ]]; then
    echo "go build $name: up to date"
    return
  fi
  local start=$SECONDS
  mkdir -p "$out"
  (cd "$here/go/$module" && CGO_ENABLED=${cgo:-0} nice -n 10 go build -trimpath -tags "${tags:-}" \
    -ldflags "-s -w $ldflags" -o "$out/" "$@")
  echo "$stamp" >"$stamps/$name"
  echo "go build $name: $((SECONDS - start)) s"
}

k8s=v1.36.3
build etcd etcd "" polycrate.local/envoy/tools/etcd
# The control plane and, since the real node (tests/harness/node.py), the node's kubelet, kube-proxy and
# kube-scheduler: one module, one pin, warm after the API server.
build kube kube "-X k8s.io/component-base/version.gitVersion=$k8s -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kube-scheduler
# ---- The real node's runtime and network parts (tests/harness/node.py).
# containerd without cgo: overlayfs is the only snapshotter the node uses.
tags="no_btrfs no_devmapper no_zfs" build containerd containerd \
  "-X github.com/containerd/containerd/v2/version.Version=v2.2.1" \
  github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/ctr \
  github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2
# runc needs seccomp (pods run with the RuntimeDefault profile): cgo against Debian's libseccomp-dev.
cgo=1 tags=seccomp build runc runc "-X main.version=1.3.4" github.com/opencontainers/runc
build coredns coredns "" polycrate.local/envoy/tools/coredns
build kube-router kube-router "-X github.com/cloudnativelabs/kube-router/v2/pkg/version.Version=v2.1.0" \
  github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
# MetalLB (tests/harness/metallb.py): controller and speaker into metallb/ beside bin/ (their names are generic).
# v0.15.2: v0.16.2 needs frr-k8s v0.0.27's API, and the proxy serves frr-k8s only at v0.0.17, v0.0.18 and
# v0.0.21; the go.mod replaces v0.15.2's v0.0.20 (not served) by v0.0.21 (the FRR-K8s mode's API types only).
out=$dest/../metallb build metallb metallb "" \
  go.universe.tf/metallb/controller go.universe.tf/metallb/speaker
# The node's own small images (tests/harness/images.py): the sandbox's pause and the echo backend, into
# node-images/, beside bin/, so `echo` never shadows the shell's on PATH.
out=$dest/../node-images build pause pause "" polycrate.local/envoy/tools/pause
out=$dest/../node-images build echo echo "" polycrate.local/envoy/tools/echo
build helm helm "-X helm.sh/helm/v3/internal/version.version=v3.22.0 -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
  helm.sh/helm/v3/cmd/helm
# The default release (envoy_block.ENVOY_GATEWAY_VERSION; tests/unit/test_envoy_gateway_version.py checks it).
build envoy-gateway envoy-gateway "-X github.com/envoyproxy/gateway/internal/cmd/version.envoyGatewayVersion=v1.9.1" \
  github.com/envoyproxy/gateway/cmd/envoy-gateway github.com/envoyproxy/gateway/cmd/egctl
# The upgrade sources (tests/cluster/test_upgrade.py): v1.9.0 (patch upgrade) and v1.8.3 (minor upgrade).
dest=$dest/../envoy-gateway-v1.9.0 build envoy-gateway-v1.9.0 envoy-gateway-v1.9.0 \
  "-X github.com/envoyproxy/gateway/internal/cmd/version.envoyGatewayVersion=v1.9.0" github.com/envoyproxy/gateway/cmd/envoy-gateway
dest=$dest/../envoy-gateway-v1.8.3 build envoy-gateway-v1.8.3 envoy-gateway-v1.8.3 \
  "-X github.com/envoyproxy/gateway/internal/cmd/version.envoyGatewayVersion=v1.8.3" github.com/envoyproxy/gateway/cmd/envoy-gateway

# The alert test (tests/traffic/test_alerts.py): VictoriaMetrics single-node scrapes the real Envoy and WAF,
# vmalert evaluates the block's rendered VMRule against it.
build victoriametrics victoriametrics "-X github.com/VictoriaMetrics/VictoriaMetrics/lib/buildinfo.Version=victoria-metrics-v1.151.0" \
  github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics github.com/VictoriaMetrics/VictoriaMetrics/app/vmalert

# helm and kubectl of Polycrate v0.23.3's container image (Dockerfile.goreleaser), for its stand-in
# (tools/oci/images.py): into image-bin/, beside bin/, so they never shadow the block's own helm.
out=$dest/../image-bin build helm-3.17 helm-3.17 \
  "-X helm.sh/helm/v3/internal/version.version=v3.17.0 -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
  helm.sh/helm/v3/cmd/helm
out=$dest/../image-bin build kubectl kubectl "-X k8s.io/component-base/version.gitVersion=v1.32.1 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=32" \
  k8s.io/kubernetes/cmd/kubectl

# ---- Polycrate: the published CLI v0.23.3, unmodified, from ../shared/polycrate (its own script and stamp).
[[ $only != "  " ]] || "$here/build-polycrate.sh" "$dest"
