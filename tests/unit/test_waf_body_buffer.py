"""Invariant: the proxies of the WAF's Gateway hold a whole request body of the size the WAF needs, so
that Envoy never answers 413 before the WAF has seen the body (Envoy Gateway v1.9.0 would at 32 KiB over
HTTP/1.1 and 64 KiB over HTTP/2), in exactly one ClientTrafficPolicy per Gateway; configs where that
cannot work are rejected by config path.

The rule (body_buffer.needed, body_buffer.client_traffic_settings):
- reject: the body buffer is waf.body.limit, no headroom (Envoy counts only body bytes: a body of exactly
  the buffer passes, one byte more gets Envoy's 413 - the status the WAF answers past the limit);
- partial: waf.body.max_size (default 1 MiB, above the limit), the largest body accepted;
- connection.bufferLimit (HTTP/1.1) and http2.initialStreamWindowSize (HTTP/2) both carry it, never below
  Envoy Gateway's own 32768 and 65536;
- on the WAF's Gateway only: merged into the client_traffic policy when that targets the same Gateway,
  else a policy of its own with the same name `<gateway>-client-traffic`.

Mutation checks (done once on the builders and validation, each restored):
- `max()` dropped from client_traffic_settings: for bufferLimit turned
  test_never_below_envoy_gateways_values[4096] red, for the HTTP/2 window both of its cases;
- the buffer put on the client_traffic target instead of the WAF's Gateway turned
  test_buffer_beside_a_policy_on_another_gateway red;
- a policy of its own (`<gateway>-waf-buffer`) beside the client_traffic one turned 12 tests red, among
  them test_buffer_merged_into_the_gateways_client_traffic_policy and
  test_one_client_traffic_policy_per_gateway for both configs with client_traffic on the WAF's Gateway;
- needed() returning waf.body.limit for partial turned test_partial_buffers_max_size red (both cases);
- each rule of waf._body_problems removed in turn, and the schema's maximum for waf.body.limit,
  turned exactly its cases of test_rejected red.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from envoy_block import body_buffer, formats
from tests.support.helpers import MISSING, at, load, objects, problems, with_gateway


def waf(body: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """The WAF attached to the default Gateway, plus `extra` config sections."""
    return with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}, "body": body or {}}, **extra})


def client_traffic_policies(cfg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects(cfg) if o["kind"] == "ClientTrafficPolicy"}


def buffer_of(policy: dict[str, Any]) -> tuple[Any, Any]:
    return at(policy, "spec.connection.bufferLimit"), at(policy, "spec.http2.initialStreamWindowSize")


def test_default_waf_gets_a_policy_of_its_own() -> None:
    """The default WAF (reject, 128 KiB) on the default Gateway: one policy with the buffer and nothing else."""
    policies = client_traffic_policies(waf())
    assert list(policies) == ["eg-shared-client-traffic"]
    spec = policies["eg-shared-client-traffic"]["spec"]
    assert spec == {
        "targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "eg-shared"}],
        "connection": {"bufferLimit": 131072},
        "http2": {"initialStreamWindowSize": 131072},
    }


def test_reject_buffers_exactly_the_limit() -> None:
    """reject: no headroom - the buffer is the limit, so Envoy's 413 starts where the WAF's would."""
    assert buffer_of(client_traffic_policies(waf({"limit": 200000}))["eg-shared-client-traffic"]) == (200000, 200000)


@pytest.mark.parametrize(("body", "size"), [({}, 1048576), ({"max_size": 3000000}, 3000000)])
def test_partial_buffers_max_size(body: dict[str, Any], size: int) -> None:
    """partial: Envoy buffers the whole body before the WAF reads its first `limit` bytes, so the buffer is
    max_size, the largest body accepted."""
    policy = client_traffic_policies(waf({"limit_action": "partial", **body}))["eg-shared-client-traffic"]
    assert buffer_of(policy) == (size, size)


@pytest.mark.parametrize(("limit", "expected"), [(4096, (32768, 65536)), (40000, (40000, 65536))])
def test_never_below_envoy_gateways_values(limit: int, expected: tuple[int, int]) -> None:
    """A small limit keeps Envoy Gateway's own buffer and window (its translator refuses a window below
    65535, and a smaller connection buffer would only slow every connection of the Gateway)."""
    assert buffer_of(client_traffic_policies(waf({"limit": limit}))["eg-shared-client-traffic"]) == expected


@pytest.mark.parametrize("target", ["", "eg-shared"])
def test_buffer_merged_into_the_gateways_client_traffic_policy(target: str) -> None:
    """client_traffic on the WAF's Gateway (by default or by name): one policy carries both."""
    cfg = waf(
        client_traffic={
            "enabled": True,
            "target_gateway_name": target,
            "proxy_protocol": {"enabled": True},
            "timeouts": {"idle": "1h"},
        }
    )
    policies = client_traffic_policies(cfg)
    assert list(policies) == ["eg-shared-client-traffic"]
    spec = policies["eg-shared-client-traffic"]["spec"]
    assert spec["proxyProtocol"] == {}
    assert spec["timeout"] == {"http": {"idleTimeout": "1h"}}
    assert buffer_of(policies["eg-shared-client-traffic"]) == (131072, 131072)


def test_buffer_beside_a_policy_on_another_gateway() -> None:
    """client_traffic on another Gateway: that policy stays as configured, the WAF's Gateway gets its own."""
    cfg = waf(client_traffic={"enabled": True, "target_gateway_name": "edge", "timeouts": {"idle": "1h"}})
    policies = client_traffic_policies(cfg)
    assert sorted(policies) == ["edge-client-traffic", "eg-shared-client-traffic"]
    assert buffer_of(policies["edge-client-traffic"]) == (MISSING, MISSING)
    assert at(policies["eg-shared-client-traffic"], "spec.targetRefs[0].name") == "eg-shared"
    assert buffer_of(policies["eg-shared-client-traffic"]) == (131072, 131072)
    assert at(policies["eg-shared-client-traffic"], "spec.timeout") == MISSING


@pytest.mark.parametrize(
    "cfg",
    [
        pytest.param(waf({"enabled": False}), id="headers-only"),
        pytest.param(with_gateway({"waf": {"enabled": True}}), id="no-default-policy"),
        pytest.param(with_gateway({"client_traffic": {"enabled": True}}), id="no-waf"),
    ],
)
def test_no_buffer_without_a_buffered_body(cfg: dict[str, Any]) -> None:
    """Headers only, a WAF the block does not attach, or no WAF: Envoy Gateway's values stay untouched."""
    assert all(buffer_of(p) == (MISSING, MISSING) for p in client_traffic_policies(cfg).values())
    assert body_buffer.needed(load(cfg).values) is None


def test_policy_name_does_not_change_with_client_traffic() -> None:
    """Switching client_traffic on or off on the WAF's Gateway updates the one policy in place: no prune and
    re-create, so there is never a moment with two policies (or none) on the Gateway."""
    alone = client_traffic_policies(waf())
    merged = client_traffic_policies(waf(client_traffic={"enabled": True}))
    assert list(alone) == list(merged) == ["eg-shared-client-traffic"]


MATRIX = [
    waf(),
    waf({"limit_action": "partial"}, client_traffic={"enabled": True}),
    waf(client_traffic={"enabled": True, "target_gateway_name": "eg-shared"}),
    waf(client_traffic={"enabled": True, "target_gateway_name": "edge"}),
    with_gateway({"client_traffic": {"enabled": True}}),
    {"client_traffic": {"enabled": True, "target_gateway_name": "edge"}},
]


@pytest.mark.parametrize("cfg", MATRIX)
def test_one_client_traffic_policy_per_gateway(cfg: dict[str, Any]) -> None:
    """Envoy Gateway applies one Gateway-wide ClientTrafficPolicy per Gateway and marks the others
    Conflicted: the block never renders two for one Gateway."""
    targets = Counter(
        (o["metadata"]["namespace"], ref["name"])
        for o in objects(cfg)
        if o["kind"] == "ClientTrafficPolicy"
        for ref in o["spec"]["targetRefs"]
    )
    assert targets
    assert max(targets.values()) == 1, targets


REJECTED: list[tuple[str, dict[str, Any], str]] = [
    (
        "max-size-with-reject",
        waf({"max_size": 2097152}),
        "config.waf.body.max_size: only used with limit_action partial",
    ),
    (
        "max-size-not-above-limit",
        waf({"limit_action": "partial", "limit": 262144, "max_size": 262144}),
        "config.waf.body.max_size: 262144 is not above waf.body.limit (262144), so partial never applies",
    ),
    (
        "partial-limit-above-default-max-size",
        waf({"limit_action": "partial", "limit": 2097152}),
        "config.waf.body.max_size: 1048576 is not above waf.body.limit (2097152)",
    ),
    (
        "limit-not-below-proxy-memory",
        waf(data_plane={"resources": {"limits": {"memory": "100Ki"}}}),
        "config.waf.body.limit: the WAF's Gateway would buffer request bodies of up to 131072 bytes in a proxy, "
        "not less than its memory limit data_plane.resources.limits.memory (100Ki)",
    ),
    (
        "max-size-not-below-proxy-memory",
        waf({"limit_action": "partial"}, data_plane={"resources": {"limits": {"memory": "1Mi"}}}),
        "config.waf.body.max_size: the WAF's Gateway would buffer request bodies of up to 1048576 bytes",
    ),
    (
        "limit-beyond-http2-window",
        waf({"limit": 2147483648}),
        "config.waf.body.limit: 2147483648 is greater than the maximum of 1073741823",
    ),
]


@pytest.mark.parametrize(("cfg", "expected"), [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_rejected(cfg: dict[str, Any], expected: str) -> None:
    """Combinations that cannot work are rejected, naming the config path and the way out."""
    found = problems(cfg)
    assert any(p.startswith(expected) for p in found), found


@pytest.mark.parametrize(
    "cfg",
    [
        pytest.param(waf({"limit_action": "partial", "max_size": 2097152}), id="partial-with-max-size"),
        pytest.param(
            waf(
                {"limit": 4096}, data_plane={"resources": {"requests": {"memory": "1Mi"}, "limits": {"memory": "1Mi"}}}
            ),
            id="small-proxy",
        ),
        pytest.param(
            {"waf": {"enabled": True, "body": {"limit": 1073741823}}}, id="memory-rule-only-where-the-block-buffers"
        ),
    ],
)
def test_accepted(cfg: dict[str, Any]) -> None:
    load(cfg)


@pytest.mark.parametrize(
    ("quantity", "expected"),
    [("1Gi", 2**30), ("512Mi", 512 * 2**20), ("1.5Gi", 3 * 2**29), ("1G", 10**9), ("100Ki", 102400), ("1000", 1000)],
)
def test_quantity_bytes(quantity: str, expected: int) -> None:
    assert formats.quantity_bytes(quantity) == expected
