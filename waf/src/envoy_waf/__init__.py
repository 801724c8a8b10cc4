"""Test harness of the envoy-waf Go service (waf/cmd/envoy-waf): a real Envoy, backends, the CRS corpus, the benchmark."""

__version__ = "0.4.0"
