"""Invariant: traffic policies target the right Gateway and use the current API (proxyProtocol, never
the deprecated enableProxyProtocol), with only the timeouts the user set."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import MISSING, at, find, kinds, with_gateway

CTP = {"client_traffic": {"enabled": True}}
BTP = {"backend_traffic": {"enabled": True}}

CASES: list[tuple[str, dict[str, Any], str, str, Any]] = [
    (
        "ctp-targets-default",
        CTP,
        "ClientTrafficPolicy",
        "spec.targetRefs",
        [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "eg-shared"}],
    ),
    (
        "ctp-explicit-target",
        {"client_traffic": {"enabled": True, "target_gateway_name": "edge"}},
        "ClientTrafficPolicy",
        "spec.targetRefs[0].name",
        "edge",
    ),
    (
        "proxy-protocol-required",
        {"client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True}}},
        "ClientTrafficPolicy",
        "spec.proxyProtocol",
        {},
    ),
    (
        "proxy-protocol-optional",
        {"client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True, "optional": True}}},
        "ClientTrafficPolicy",
        "spec.proxyProtocol",
        {"optional": True},
    ),
    (
        "no-deprecated-field",
        {"client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True}}},
        "ClientTrafficPolicy",
        "spec.enableProxyProtocol",
        MISSING,
    ),
    ("no-proxy-protocol-by-default", CTP, "ClientTrafficPolicy", "spec.proxyProtocol", MISSING),
    (
        "client-timeouts",
        {"client_traffic": {"enabled": True, "timeouts": {"idle": "1h", "request_received": "30s"}}},
        "ClientTrafficPolicy",
        "spec.timeout",
        {"http": {"requestReceivedTimeout": "30s", "idleTimeout": "1h"}},
    ),
    ("btp-targets-default", BTP, "BackendTrafficPolicy", "spec.targetRefs[0].name", "eg-shared"),
    (
        "backend-timeouts",
        {"backend_traffic": {"enabled": True, "timeouts": {"connect": "5s", "request": "1m", "idle": "15m"}}},
        "BackendTrafficPolicy",
        "spec.timeout",
        {"tcp": {"connectTimeout": "5s"}, "http": {"requestTimeout": "1m", "connectionIdleTimeout": "15m"}},
    ),
    ("btp-no-timeouts", BTP, "BackendTrafficPolicy", "spec.timeout", MISSING),
]


@pytest.mark.parametrize(("config", "kind", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_traffic_policy(config: dict[str, Any], kind: str, path: str, expected: Any) -> None:
    assert at(find(with_gateway(config), kind), path) == expected


def test_explicit_target_needs_no_default_gateway() -> None:
    """A policy for the user's own Gateway renders without the opt-in bootstrap Gateway."""
    cfg = {"backend_traffic": {"enabled": True, "target_gateway_name": "edge"}}
    assert at(find(cfg, "BackendTrafficPolicy"), "spec.targetRefs[0].name") == "edge"
    assert "Gateway" not in kinds(cfg)


def test_policies_absent_by_default() -> None:
    assert not {"ClientTrafficPolicy", "BackendTrafficPolicy"} & set(kinds({}))
