# Everything built from Go, from pinned modules (nothing vendored), each rebuilt only when its pins change.
.PHONY: waf-build tools conformance-build

# The WAF service: a Go binary (waf/go.mod), rebuilt only when its sources or pins change. RE2 through cgo
# (Debian's libre2-dev): the numbers chose it (waf/BUILD.md).
WAF_BINARY := waf/bin/envoy-waf
WAF_GO := waf/go.mod waf/go.sum $(shell find waf/cmd waf/internal -name '*.go' 2>/dev/null)

# Coraza with its patches (coraza.sh applies them in its order), laid out from the module proxy (waf/BUILD.md).
CORAZA := waf/third_party/coraza/.patched
$(CORAZA): waf/third_party/coraza.sh $(wildcard waf/third_party/coraza-*.patch)
	waf/third_party/coraza.sh

$(WAF_BINARY): $(WAF_GO) $(CORAZA) | $(LIBRE2) $(PKG_CONFIG)
	cd waf && CGO_ENABLED=1 go build -trimpath -tags re2_cgo -o bin/envoy-waf ./cmd/envoy-waf

## waf-build: build the WAF binary (waf/bin/envoy-waf, RE2 through cgo)
waf-build: $(WAF_BINARY)

## tools: build every Go component the tests run from its pinned module into .tools/ (reused while pins hold)
# helm, etcd, the Kubernetes control plane and node (kubelet, kube-proxy, kube-scheduler), containerd, runc,
# CoreDNS, kube-router, envoy-gateway and egctl, built with `go build` from the pinned wrapper modules in
# tools/go (Go module proxy only). Rebuilt only when a pin or Go changes.
tools: | $(LIBSECCOMP) $(PKG_CONFIG)
	tools/build-go.sh $(TOOLS)

# staticcheck for the WAF's Go code, built from its pinned module into .tools/bin (reused while the pin holds).
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)
$(STATICCHECK):
	mkdir -p $(TOOLS) && GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) && mv $(TOOLS)/staticcheck $@

# The Gateway API conformance suite (sigs.k8s.io/gateway-api/conformance v1.6.1: its TestConformance built with
# `go test -c`), its echo backend (echo-basic) and a CoreDNS with the plugins its UDP backend's Corefile names, from
# the wrapper modules in tools/conformance (go.mod + go.sum; nothing vendored) into .tools/conformance; rebuilt
# only when a wrapper module changes.
CONFORMANCE_BIN := $(CURDIR)/.tools/conformance
CONFORMANCE_BUILT := $(CONFORMANCE_BIN)/.built
CONFORMANCE_GO := env GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0 nice -n 10 go
$(CONFORMANCE_BUILT): $(wildcard tools/conformance/*/go.mod tools/conformance/*/go.sum tools/conformance/*/*.go)
	mkdir -p $(CONFORMANCE_BIN)
	cd tools/conformance/suite && $(CONFORMANCE_GO) test -c -trimpath -ldflags '-s -w' \
	  -o $(CONFORMANCE_BIN)/gateway-conformance.test sigs.k8s.io/gateway-api/conformance
	cd tools/conformance/suite && $(CONFORMANCE_GO) build -trimpath -ldflags '-s -w' \
	  -o $(CONFORMANCE_BIN)/echo-basic sigs.k8s.io/gateway-api/conformance/echo-basic
	cd tools/conformance/coredns && $(CONFORMANCE_GO) build -trimpath -ldflags '-s -w' -o $(CONFORMANCE_BIN)/coredns .
	touch $@

## conformance-build: build the Gateway API conformance suite and its backends' binaries (.tools/conformance)
conformance-build: $(CONFORMANCE_BUILT)
