"""Invariant: the bootstrap Gateway is opt-in; when enabled it sits on the shared class, in the block namespace,
and turns each listener into exactly the Gateway API form (TLS mode, Secret refs, allowed namespaces).

Mutation check (done once): defaulting default_gateway.enabled to true in config.schema.json turned
test_no_gateway_by_default red.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import MISSING, at, find, kinds, with_gateway

TLS_PT = {"name": "tls", "protocol": "TLS", "port": 443, "tls_mode": "Passthrough"}
HTTPS = {
    "name": "https",
    "protocol": "HTTPS",
    "port": 443,
    "hostname": "a.example.com",
    "certificate_refs": [{"name": "a-tls"}, {"name": "b-tls", "namespace": "certs"}],
}


def gw(*listeners: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"default_gateway": {"listeners": list(listeners)}, **extra}


CASES: list[tuple[str, dict[str, Any], str, Any]] = [
    ("shared-class", {}, "spec.gatewayClassName", "eg-shared"),
    ("class-follows-rename", {"gatewayclass": {"shared": {"name": "public"}}}, "spec.gatewayClassName", "public"),
    (
        "default-http-all",
        {},
        "spec.listeners[0]",
        {"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {"from": "All"}}},
    ),
    ("passthrough", gw(TLS_PT), "spec.listeners[0].tls", {"mode": "Passthrough"}),
    ("https-defaults-terminate", gw(HTTPS), "spec.listeners[0].tls.mode", "Terminate"),
    (
        "cert-refs",
        gw(HTTPS),
        "spec.listeners[0].tls.certificateRefs",
        [
            {"group": "", "kind": "Secret", "name": "a-tls"},
            {"group": "", "kind": "Secret", "name": "b-tls", "namespace": "certs"},
        ],
    ),
    ("hostname", gw(HTTPS), "spec.listeners[0].hostname", "a.example.com"),
    ("allowed-default-same", gw(TLS_PT), "spec.listeners[0].allowedRoutes.namespaces.from", "Same"),
    (
        "selector",
        gw(
            {
                **TLS_PT,
                "allowed_routes_namespaces": "Selector",
                "allowed_routes_selector": {"match_labels": {"gw": "shared"}},
            }
        ),
        "spec.listeners[0].allowedRoutes.namespaces",
        {"from": "Selector", "selector": {"matchLabels": {"gw": "shared"}}},
    ),
    (
        "issuer-annotation",
        gw(HTTPS, tls={"cluster_issuer_name": "le"}),
        'metadata.annotations."cert-manager.io/cluster-issuer"',
        "le",
    ),
    ("no-annotation-by-default", {}, "metadata.annotations", MISSING),
    ("name", {"default_gateway": {"name": "edge"}}, "metadata.name", "edge"),
    ("namespace", {"namespace": "edge"}, "metadata.namespace", "edge"),
]


@pytest.mark.parametrize(("config", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gateway(config: dict[str, Any], path: str, expected: Any) -> None:
    assert at(find(with_gateway(config), "Gateway"), path) == expected


def test_no_gateway_by_default() -> None:
    """The bootstrap Gateway is opt-in: the defaults render none."""
    assert "Gateway" not in kinds({})


def test_no_gateway_when_disabled() -> None:
    assert "Gateway" not in kinds({"default_gateway": {"enabled": False}})
