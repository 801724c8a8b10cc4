"""Test harness of the envoy-waf Go service (waf/cmd/envoy-waf): Envoy, backends, the CRS corpus, the bench."""

__version__ = "0.4.0"
