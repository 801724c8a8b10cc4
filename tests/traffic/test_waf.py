"""The WAF, attached by the block's rendered EnvoyExtensionPolicy (examples/waf), in front of a tenant's
route: Envoy Gateway generated the proxy's ext_proc filter and cluster, the WAF runs on the settings the
block rendered into its ConfigMap, and a real Envoy carries the requests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.translator import configs

from .deploy import Deployed, deployed
from .stack import LEAK, http_request, wait_for

# name -> (method, path, body, headers, the WAF's answer): CRS blocks with waf.block_status (403); the WAF
# refuses an XML body with a DTD before parsing it (400, waf/internal/xmlguard).
ATTACKS = {
    "SQL injection in the query": ("GET", "/search?id=1%27%20OR%20%271%27%3D%271", None, {}, 403),
    "XSS in the query": ("GET", "/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E", None, {}, 403),
    "path traversal": ("GET", "/files?name=..%2F..%2F..%2Fetc%2Fpasswd", None, {}, 403),
    "SQL injection in a form body": (
        "POST",
        "/login",
        b"user=admin&password=%27%20OR%201%3D1--",
        {"Content-Type": "application/x-www-form-urlencoded"},
        403,
    ),
    "SQL injection in a JSON body": (
        "POST",
        "/api/orders",
        b'{"id": "1\' UNION SELECT password FROM users--"}',
        {"Content-Type": "application/json"},
        403,
    ),
    "XXE in an XML body": (
        "POST",
        "/api/orders",
        b'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]><r>&x;</r>',
        {"Content-Type": "application/xml"},
        400,
    ),
}


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    with deployed(configs.EXAMPLES["waf"], Path(tmp_path_factory.mktemp("waf"))) as running:
        yield running


def _get(edge: Deployed, path: str = "/", method: str = "GET", body: bytes | None = None, **headers: str) -> int:
    status, _, _ = http_request(edge.port("http"), edge.host("http"), path, method, body, headers)
    return status


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_benign_requests_reach_the_backend(edge: Deployed, method: str) -> None:
    """REST verbs pass the WAF (waf.allowed_methods) and reach the tenant's backend."""
    with_body = method in ("POST", "PUT", "PATCH")
    body = b'{"qty": 1}' if with_body else None
    headers = {"Content-Type": "application/json"} if with_body else {}
    status, body, _ = http_request(edge.port("http"), edge.host("http"), "/api/orders/42", method, body, headers)
    assert status == 200, body
    if method != "HEAD":
        assert edge.backend("http") in body.decode()


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_attacks_are_blocked(edge: Deployed, attack: str) -> None:
    method, path, body, headers, refused = ATTACKS[attack]
    assert _get(edge, path, method, body, **headers) == refused


def test_responses_are_not_inspected_by_default(edge: Deployed) -> None:
    """waf.response_inspection is off by default: a backend's error page reaches the client as it is."""
    status, body, _ = http_request(edge.port("http"), edge.host("http"), "/leak/orders")
    assert (status, body) == (500, LEAK)


def test_waf_stopped_fails_closed_and_blocking_resumes(edge: Deployed) -> None:
    """Fail closed (waf.fail_open false -> the generated ext_proc filter's failure_mode_allow false): with the
    WAF down nothing passes unchecked; once it is back, it blocks again without touching Envoy.
    Mutation: failOpen always true in components/waf.py -> this test red (200 with the WAF stopped)."""
    assert edge.waf is not None
    assert _get(edge) == 200
    edge.waf.stop()
    try:
        down = [_get(edge), _get(edge, "/?q=%3Cscript%3E")]
        assert all(500 <= s < 600 for s in down), down
    finally:
        edge.waf.start()
    wait_for("a benign request through the restarted WAF", lambda: _get(edge) == 200)
    assert _get(edge, "/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E") == 403
