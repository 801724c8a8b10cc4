"""Invariant: in ControllerNamespace mode every policy is namespaced in the block namespace; in
GatewayNamespace mode proxies live in every Gateway's namespace (also ones created later), so Cilium and
Calico select them cluster-wide, and provider kubernetes, which cannot, says so in a warning. The
controller admits xDS from proxies of every namespace then, and only from proxies."""

from __future__ import annotations

import pytest

from tests.support.helpers import load
from tests.support.netpol import PROVIDERS, config_for, read

CLUSTERWIDE = {"cilium": "CiliumClusterwideNetworkPolicy", "calico": "GlobalNetworkPolicy"}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_controller_namespace_mode_is_namespaced(provider: str) -> None:
    for policy in read(config_for(provider, "ControllerNamespace")).values():
        assert policy.namespace == "envoy-gateway-system", policy


@pytest.mark.parametrize("provider", sorted(CLUSTERWIDE))
def test_gateway_namespace_mode_selects_proxies_clusterwide(provider: str) -> None:
    policies = read(config_for(provider, "GatewayNamespace"))
    assert policies["proxies"].kind == CLUSTERWIDE[provider]
    assert policies["proxies"].namespace is None
    xds = [r for r in policies["controller"].ingress() if ("TCP", 18000) in r.ports]
    assert [p[1] for r in xds for p in r.peers] == ["*"]
    assert all(p[2] for r in xds for p in r.peers), "xDS only from labelled proxies"


def test_kubernetes_provider_warns_in_gateway_namespace_mode() -> None:
    warnings = load(config_for("kubernetes", "GatewayNamespace")).warnings
    assert any("cannot cover namespaces created later" in w for w in warnings)


def test_no_policies_without_a_provider() -> None:
    assert read({}) == {}
