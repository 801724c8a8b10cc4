"""What uninstall removes and in what order, decided in Python (lifecycle.decide_uninstall) from one read.

Guards: nothing is removed while a tenant's Gateway uses one of the block's classes, or while waits are on and
the controller has no ready pod with Gateways to delete (only a running controller removes their proxies);
a pod on its way is waited for; Gateways go first, the rest in delete order; the namespace goes only when it
carries every ownership label. Mutations (tools/mutate.py): `uninstall-controller-down` (no refusal for a
stopped controller) and `uninstall-foreign-namespace` (a namespace removed without the ownership test) turn
these red.
"""

from __future__ import annotations

from typing import Any

import pytest

from envoy_block import lifecycle
from envoy_block.lifecycle import UninstallObserved, decide_uninstall
from envoy_block.plan import Plan
from tests.support.helpers import plan, with_gateway
from tests.unit.test_lifecycle import OWN, obj

NS = "envoy-gateway-system"
GW = "gateway.networking.k8s.io/v1"


def _plan(cfg: dict[str, Any] | None = None) -> Plan:
    return plan(with_gateway(cfg))


def _controller(ready: int, replicas: int = 1) -> dict[str, Any]:
    return {"spec": {"replicas": replicas}, "status": {"readyReplicas": ready}}


def _owned() -> tuple[dict[str, Any], ...]:
    return (
        obj("GatewayClass", "eg-shared", OWN, GW, None),
        obj("EnvoyProxy", "eg-shared", OWN),
        obj("NetworkPolicy", "n", OWN, "networking.k8s.io/v1"),
        obj("Gateway", "eg-shared", OWN, GW, spec={"gatewayClassName": "eg-shared"}),
    )


def _observed(
    owned: tuple[dict[str, Any], ...] | None = None,
    controller: dict[str, Any] | None = None,
    namespace: dict[str, Any] | None = None,
    gateways: tuple[dict[str, Any], ...] | None = None,
) -> UninstallObserved:
    owned = _owned() if owned is None else owned
    mine = tuple(o for o in owned if o["kind"] == "Gateway")
    return UninstallObserved(owned, mine if gateways is None else gateways, controller, namespace)


def test_gateways_first_then_the_rest_in_delete_order() -> None:
    decision = decide_uninstall(_plan(), _observed(controller=_controller(1)))
    assert decision.refusals == ()
    assert not decision.await_controller
    assert [g["kind"] for g in decision.gateways] == ["Gateway"]
    assert [o["kind"] for o in decision.others] == ["EnvoyProxy", "GatewayClass", "NetworkPolicy"]
    assert decision.uninstall_helm
    assert not decision.remove_crds
    assert decision.proxy_services, "waits on: uninstall waits for the controller to remove the proxy Services"
    assert {q["kind"] for q in decision.proxy_services} == {"Service"}
    assert all(q["wait_absent"] for q in decision.proxy_services), "waited for in one module run, not polled"


def test_a_tenant_gateway_on_a_block_class_refuses_before_anything() -> None:
    tenant = obj("Gateway", "eg-shared", {"team": "b"}, GW, "team-b", spec={"gatewayClassName": "eg-shared"})
    decision = decide_uninstall(_plan(), _observed(controller=None, gateways=(*_owned()[3:], tenant)))
    (refusal,) = decision.refusals
    assert "team-b/eg-shared" in refusal
    assert "eg-shared" in refusal
    assert "Nothing was removed" in refusal
    assert decision.gateways == decision.others == ()
    assert not decision.delete_namespace


@pytest.mark.parametrize(
    ("controller", "waited", "refused", "awaits"),
    [
        (_controller(0, replicas=1), False, False, True),  # a pod on its way: read it again
        (_controller(0, replicas=1), True, True, False),  # still none after wait.timeout
        (_controller(0, replicas=0), False, True, False),  # scaled to zero: it never comes
        (None, False, True, False),  # no Deployment
        (_controller(1), False, False, False),
    ],
    ids=["starting", "starting-timed-out", "scaled-to-zero", "missing", "ready"],
)
def test_gateways_are_deleted_only_while_the_controller_runs(
    controller: dict[str, Any] | None, waited: bool, refused: bool, awaits: bool
) -> None:
    decision = decide_uninstall(_plan(), _observed(controller=controller), controller_waited=waited)
    assert bool(decision.refusals) is refused
    assert decision.await_controller is awaits
    if refused:
        assert "has no ready pod" in decision.refusals[0]
        assert "Nothing was removed" in decision.refusals[0]
    if refused or awaits:
        assert decision.gateways == decision.others == ()


@pytest.mark.parametrize(
    "cfg",
    [{"wait": {"enabled": False}}, {"controller": {"install": False}}],
    ids=["waits-off", "controller-not-managed"],
)
def test_a_stopped_controller_does_not_stop_uninstall_when_it_is_not_waited_for(cfg: dict[str, Any]) -> None:
    decision = decide_uninstall(_plan(cfg), _observed(controller=None))
    assert decision.refusals == ()
    assert [g["kind"] for g in decision.gateways] == ["Gateway"]


def test_without_gateways_the_controller_is_not_needed() -> None:
    decision = decide_uninstall(_plan(), _observed(owned=_owned()[:3], controller=None))
    assert decision.refusals == ()
    assert decision.gateways == ()


def test_the_namespace_goes_only_when_it_is_the_blocks() -> None:
    ours = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {**OWN, "x": "y"}}}
    half = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {"x": "y"}}}
    ready = _controller(1)
    assert decide_uninstall(_plan(), _observed(controller=ready, namespace=ours)).delete_namespace
    assert not decide_uninstall(_plan(), _observed(controller=ready, namespace=half)).delete_namespace
    assert not decide_uninstall(_plan(), _observed(controller=ready, namespace=None)).delete_namespace


def test_crds_go_only_when_asked_and_proxy_waits_only_with_waits() -> None:
    decision = decide_uninstall(_plan({"uninstall": {"remove_crds": True}, "wait": {"enabled": False}}), _observed())
    assert decision.remove_crds
    assert decision.proxy_services == ()
    assert decision.proxies, "what the controller left is still found by its labels"


def test_the_lookups_tag_each_query_with_what_it_is_for() -> None:
    p = _plan()
    purposes = [q["purpose"] for q in lifecycle.uninstall_lookups(p)]
    assert purposes.count("owned") == len(lifecycle.OWNED_KINDS)
    assert purposes[-3:] == ["gateways", "controller", "namespace"]
    results = [
        {"item": q, "resources": [{"kind": "Namespace"}] if q["purpose"] == "namespace" else []}
        for q in lifecycle.uninstall_lookups(p)
    ]
    observed = UninstallObserved.from_results(results)
    assert observed.namespace == {"kind": "Namespace"}
    assert observed.controller is None
    assert observed.owned == ()


def test_the_namespaces_pods_are_awaited_before_it_goes() -> None:
    """The namespace controller looks again only after a terminating pod's grace period (a proxy's is
    drainTimeout + 300 s): uninstall waits for the namespace's pods first, and only for a namespace it deletes
    (seen on the real node: the namespace outlived wait.timeout while a proxy pod was already gone)."""
    ours = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {**OWN, "x": "y"}}}
    half = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": {"x": "y"}}}
    ready = _controller(1)
    decision = decide_uninstall(_plan(), _observed(controller=ready, namespace=ours))
    pods = {
        "api_version": "v1",
        "kind": "Pod",
        "namespace": NS,
        # Finished pods (certgen's, kept until its Job's TTL) hold nothing up: the namespace controller
        # deletes them without a grace period, so waiting for them only waited out the TTL.
        "field_selectors": ["status.phase!=Succeeded", "status.phase!=Failed"],
        "wait_absent": True,
    }
    assert decision.namespace_pods == (pods,)
    assert decision.to_dict()["namespace_pods"] == [pods]
    assert decide_uninstall(_plan(), _observed(controller=ready, namespace=half)).namespace_pods == ()
    no_wait = _plan({"wait": {"enabled": False}})
    assert decide_uninstall(no_wait, _observed(controller=ready, namespace=ours)).namespace_pods == ()
