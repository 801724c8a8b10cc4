"""Invariant: proxy ingress admits every listener's CONTAINER port. Envoy Gateway shifts listener ports
below 1024 by +10000 inside the pod (80 -> 10080), so a port-narrowed policy must allow the shifted
port; the default (all TCP) covers listeners, metrics 19001 and readiness 19003.

Mutation check (tools/mutate.py `proxy-ingress-shifted-ports`): making network_policies.container_ports
return the ports unshifted turns test_shift_rule and test_narrowed_ingress_allows_shifted_container_ports red.
"""

from __future__ import annotations

from typing import Any

import pytest

from envoy_block.components.network_policies import container_ports
from tests.support.netpol import DEPLOY_TYPES, PROVIDERS, config_for, read

LISTENERS = [
    {"name": "http", "protocol": "HTTP", "port": 80, "allowed_routes_namespaces": "All"},
    {"name": "tls", "protocol": "TLS", "port": 443, "tls_mode": "Passthrough"},
    {"name": "alt", "protocol": "HTTP", "port": 8080},
]
MATRIX = [(p, d) for p in PROVIDERS for d in DEPLOY_TYPES]


def _ports(cfg: dict[str, Any]) -> set[tuple[str, int | None]]:
    return {port for rule in read(cfg)["proxies"].ingress() for port in rule.ports}


def test_shift_rule() -> None:
    assert container_ports([80, 443, 1023, 1024, 8080]) == [1024, 8080, 10080, 10443, 11023]


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_default_ingress_is_all_tcp(provider: str, deploy_type: str) -> None:
    assert ("TCP", None) in _ports(config_for(provider, deploy_type))


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_narrowed_ingress_allows_shifted_container_ports(provider: str, deploy_type: str) -> None:
    cfg = {
        **config_for(provider, deploy_type, proxy_ingress_ports=[80, 443, 8080]),
        "default_gateway": {"enabled": True, "listeners": LISTENERS},
    }
    ports = _ports(cfg)
    for expected in (10080, 10443, 8080, 19001, 19003):
        assert ("TCP", expected) in ports, (expected, ports)
    assert ("TCP", None) not in ports
    assert ("TCP", 80) not in ports, "the unshifted port is never what the container listens on"
