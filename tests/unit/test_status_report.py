"""`status` from one read (lifecycle.status_lookups -> lifecycle.status): the controller's row comes from the
query tagged `controller`, everything else from the planned objects; healthy only when every row is."""

from __future__ import annotations

from typing import Any

from envoy_block import lifecycle
from envoy_block.plan import Plan
from tests.support.helpers import plan, with_gateway
from tests.unit.test_lifecycle import OWN, ROLLED_OUT, _cond, obj

GW = "gateway.networking.k8s.io/v1"


def _results(p: Plan, found: list[dict[str, Any]], controller: dict[str, Any] | None) -> list[dict[str, Any]]:
    queries = lifecycle.status_lookups(p)
    assert [q["purpose"] for q in queries].count("controller") == 1
    return [
        {"item": q, "resources": ([controller] if controller else []) if q["purpose"] == "controller" else found}
        for q in queries
    ]


def test_one_read_gives_the_table() -> None:
    p = plan(with_gateway())
    controller = {"metadata": {"generation": 1}, "spec": {"replicas": 1}, "status": ROLLED_OUT}
    found = [
        obj("GatewayClass", "eg-shared", OWN, GW, None, status=_cond("Accepted")),
        obj("GatewayClass", "eg-dedicated", OWN, GW, None, status=_cond("Accepted")),
        obj("Gateway", "eg-shared", OWN, GW, status={**_cond("Programmed"), "addresses": [{"value": "203.0.113.7"}]}),
    ]
    report = lifecycle.status(p, _results(p, found, controller)).to_dict()
    assert report["healthy"], report["lines"]
    assert report["rows"][0]["what"] == "controller"
    assert report["rows"][0]["ok"]
    assert any("203.0.113.7" in line for line in report["lines"])

    stopped = lifecycle.status(p, _results(p, found, None)).to_dict()
    assert not stopped["healthy"]
    assert stopped["rows"][0] == {
        "what": "controller",
        "name": "envoy-gateway",
        "ok": False,
        "detail": "Deployment not found",
    }
