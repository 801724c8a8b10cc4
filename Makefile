# Two commands on a fresh clone: `make render` and `make test`. Both set up .venv on first use.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
REQ_HASH := $(shell sha256sum requirements.txt | cut -c1-12)
STAMP := $(VENV)/.installed-$(REQ_HASH)
ARTIFACTS ?= artifacts
# CONFIG: optional workspace-style override (a workspace.poly blocks: entry, or a config mapping).
CONFIG ?=
PKG := collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils
export PATH := $(BIN):$(PATH)
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_NOCOLOR := 1
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: setup render test lint unit molecule molecule-cluster docs examples clean

$(STAMP): requirements.txt
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check --no-input -q -r requirements.txt
	@rm -f $(VENV)/.installed-* && touch $@

setup: $(STAMP)

# Render block.config (block.poly defaults, merged with CONFIG like Polycrate does) into $(ARTIFACTS)/.
# The snapshot can hold chart credentials, so it lives in a private temp file, never in artifacts.
render: $(STAMP)
	@snap=$$(mktemp) && trap 'rm -f $$snap' EXIT && \
	  $(BIN)/python tools/snapshot.py $(if $(CONFIG),--override $(CONFIG)) --artifacts $(ARTIFACTS) -o $$snap && \
	  $(BIN)/ansible-playbook -e @$$snap playbooks/render.yml
	@echo "Rendered into $(ARTIFACTS)/ (manifests/, helm/, plan.yaml)"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --config-file mypy-plugins.ini
	$(BIN)/yamllint --strict .
	$(BIN)/ansible-lint --offline --profile production

unit: $(STAMP)
	$(BIN)/pytest -n 2

# The real playbooks against the emulated API server, through molecule (converge, idempotence, verify,
# uninstall check).
molecule: $(STAMP)
	$(BIN)/molecule test -s emulated

# Against a real cluster: needs KUBECONFIG, helm on PATH and registry access. Not part of `make test`.
molecule-cluster: $(STAMP)
	@if [ -z "$$KUBECONFIG" ]; then echo "molecule-cluster SKIPPED: set KUBECONFIG to a real cluster (kind, k3d, any)"; exit 0; fi
	$(BIN)/molecule test -s cluster

test: lint unit molecule

# Regenerate what is derived from schema.json and examples/*/config.yml (tests fail when it drifts).
docs: $(STAMP)
	$(BIN)/python tools/sync_docs.py

examples: $(STAMP)
	$(BIN)/python tools/sync_docs.py

clean:
	rm -rf $(ARTIFACTS) .pytest_cache .mypy_cache .ruff_cache
