# Two commands on a fresh clone: `make render` and `make test`. Both set up .venv on first use; `make` alone
# lists the targets. This file is the table of contents; the rules are in mk/ by concern: setup.mk (venvs, Debian
# packages), go.mk (what is built from Go), images.mk, checks.mk (lint, unit suites, mutations, fuzz, docs),
# cluster.mk (the real node, one and three nodes, conformance), waf.mk and bench.mk.
SHELL := /bin/bash
.DEFAULT_GOAL := help
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
STAMP := $(VENV)/.installed-$(shell sha256sum requirements.txt | cut -c1-12)
ARTIFACTS ?= artifacts
# CONFIG: optional workspace-style override (a workspace.poly blocks: entry, or a config mapping).
CONFIG ?=
PKG := collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils
# Binaries built from pinned Go modules (tools/build-go.sh): helm v3, etcd, Kubernetes, the node's runtime and
# network parts, Envoy Gateway.
TOOLS := $(CURDIR)/.tools/bin
export PATH := $(BIN):$(TOOLS):$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_NOCOLOR := 1
export PYTHONDONTWRITEBYTECODE := 1
# Progress shows as it happens, also when the output goes to a pipe or a log.
export PYTHONUNBUFFERED := 1

include mk/setup.mk mk/go.mk mk/images.mk mk/checks.mk mk/cluster.mk mk/waf.mk mk/bench.mk
.PHONY: setup render test clean help

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

## test: lint and every test (what CI runs)
# What every job shares is built first (venvs, Go builds, Debian packages: two apt-gets at once would fail on
# dpkg's lock); then tools/jobs.py runs the jobs side by side (each job's output printed whole when it ends,
# every exit code counted): the checks that need only CPU at once, beside the image build (one core), and once
# the images are there the single-node suite (two sessions, each with a real node of its own), the three-node
# scenarios (drains, rollouts, a node loss) with the image test, and the real node's own proof, molecule,
# container mode and the Gateway API conformance core tests. The cluster scenarios mostly wait on pods.
test: $(STAMP) $(WAF_STAMP) $(IMAGE_STAMP) $(WAF_BINARY) $(STATICCHECK) $(CORAZA) tools $(OCI_DEPS) $(REGISTRY) \
  $(NODE_DEPS) $(CURL) $(DOCKERD) $(CONFORMANCE_BUILT)
	$(BIN)/python tools/jobs.py $(CHECK_JOB) --after "images conformance-images" $(CLUSTER_JOB) $(NODES_JOB) $(NODE_JOB)
CLUSTER_JOB := "cluster-test"
NODES_JOB := "cluster-test-nodes image-test"
CHECK_JOB := "lint unit unit-go unit-image waf-test traffic-test mutation fuzz"
NODE_JOB := "node-test molecule container-mode-test conformance-core"

## clean: remove artifacts/ and the linters' caches
clean:
	rm -rf $(ARTIFACTS) .pytest_cache .mypy_cache .ruff_cache

## help: list the targets, one line each
help:
	@sed -n 's/^## \([a-z-]*\): \(.*\)/\1\t\2/p' $(MAKEFILE_LIST) | sort | \
	  awk -F'\t' '{ printf "  %-20s %s\n", $$1, $$2 }'
