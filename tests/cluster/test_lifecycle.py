"""Config changes, tenants' objects and uninstall on the real API server and controller.

Guards: what the config no longer renders is pruned and nothing else; tenant objects (an HTTPRoute and a
policy a tenant creates) survive install, prune and uninstall; the GatewayClass transition rule (the only
CEL rule with `oldSelf` in the block's kinds, which the gate cannot run) holds on update; uninstall refuses
while a tenant Gateway uses a class, also one named like the block's Gateway in its own namespace,
otherwise deletes Gateways first (the API server's audit log shows the order) and waits until their proxies
are gone, keeps CRDs and a namespace that existed before, and a second run changes nothing; remove_crds
removes the CRDs; install right after an uninstall whose namespace is still being deleted waits for it to go,
or stops before any change naming what holds it. Upgrades: test_upgrade.py (the real v1.8.3 and v1.9.0
charts).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from envoy_block import lifecycle
from tests.cluster.common import EG_API, GW_API, assert_healthy, block_writes, writes
from tests.cluster.conftest import Kube
from tests.harness.api import ApiError
from tests.support.helpers import plan

pytestmark = pytest.mark.playbook
NS = "envoy-gateway-system"
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def tenant_objects(ns: str) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "HTTPRoute",
            "metadata": {"name": "app", "namespace": ns},
            "spec": {
                "parentRefs": [{"name": "eg-shared", "namespace": NS}],
                "rules": [{"backendRefs": [{"name": "app", "port": 8080}]}],
            },
        },
        {
            "apiVersion": "gateway.envoyproxy.io/v1alpha1",
            "kind": "BackendTrafficPolicy",
            "metadata": {"name": "app-timeouts", "namespace": ns},
            "spec": {
                "targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "app"}],
                "timeout": {"http": {"requestTimeout": "5s"}},
            },
        },
    ]


def owned(kube: Kube) -> set[tuple[str, str]]:
    found = set()
    for path, kind in (
        (f"{GW_API}/gateways", "Gateway"),
        (f"{GW_API}/gatewayclasses", "GatewayClass"),
        (f"{EG_API}/envoyproxies", "EnvoyProxy"),
        (f"{EG_API}/clienttrafficpolicies", "ClientTrafficPolicy"),
        (f"{EG_API}/backendtrafficpolicies", "BackendTrafficPolicy"),
    ):
        for obj in kube.items(path, labelSelector="app.kubernetes.io/managed-by=polycrate"):
            found.add((kind, obj["metadata"]["name"]))
    return found


def test_prune_keeps_tenant_objects(kube: Kube) -> None:
    on = kube.config(
        default_gateway={"enabled": True}, client_traffic={"enabled": True}, backend_traffic={"enabled": True}
    )
    kube.playbook("install", on).ok()
    for obj in tenant_objects("team-a"):
        kube.apply(obj)
    kube.playbook("install", on).ok()
    off = kube.config(default_gateway={"enabled": True}, backend_traffic={"enabled": True})
    kube.playbook("install", off).ok()
    kinds = {kind for kind, _ in owned(kube)}
    assert "ClientTrafficPolicy" not in kinds, owned(kube)
    assert "BackendTrafficPolicy" in kinds, "only what the config dropped is pruned"
    assert kube.get(f"{GW_API}/namespaces/team-a/httproutes/app") is not None
    assert kube.get(f"{EG_API}/namespaces/team-a/backendtrafficpolicies/app-timeouts") is not None
    _uninstall_leaving_the_namespace_terminating(kube, off)
    assert kube.get(f"{GW_API}/namespaces/team-a/httproutes/app") is not None, "uninstall keeps tenant routes"
    assert kube.get(f"{EG_API}/namespaces/team-a/backendtrafficpolicies/app-timeouts") is not None
    for obj in reversed(tenant_objects("team-a")):
        kube.delete(obj)
    _install_right_after_uninstall_then_remove_crds(kube)


HOLD = "envoy.test/hold"
NS_PATH = f"/api/v1/namespaces/{NS}"


def _uninstall_leaving_the_namespace_terminating(kube: Kube, cfg: dict[str, Any]) -> None:
    """The real uninstall, but the block's namespace outlives it (a finalizer of the test's holds it, as a
    pod draining past wait.timeout would): uninstall removes everything else and fails on the namespace's
    deletion after wait.timeout, leaving it Terminating, as issue 40 saw on the real node."""
    kube.api.merge_patch(NS_PATH, {"metadata": {"finalizers": [HOLD]}})
    cut = kube.playbook("uninstall", {**cfg, "wait": {"timeout": 30}})
    assert cut.returncode != 0, cut.output[-3000:]
    assert "Delete the namespace the block created" in cut.output.split("fatal:")[0].rsplit("TASK [", 1)[-1], (
        "uninstall got as far as the namespace's deletion: " + cut.output[-3000:]
    )
    assert ((kube.get(NS_PATH) or {}).get("metadata") or {}).get("deletionTimestamp"), "the namespace terminates"
    assert owned(kube) == set()


def _install_right_after_uninstall_then_remove_crds(kube: Kube) -> None:
    """Install while the namespace is still terminating: within wait.timeout it waits until the namespace
    is gone and installs (the hold released meanwhile); still there after wait.timeout, it stops before any
    write, naming the namespace and what holds it. Then uninstall with remove_crds removes the CRDs."""
    cfg = kube.config(uninstall={"remove_crds": True})
    mark = len(kube.cluster.audit())
    stopped = kube.playbook("install", kube.config(uninstall={"remove_crds": True}, wait={"timeout": 3}))
    assert stopped.returncode != 0, stopped.output[-3000:]
    assert f"Namespace {NS} was still being deleted after wait.timeout (3 s)" in stopped.output, stopped.output[-3000:]
    assert HOLD in stopped.output, "what holds it is named"
    assert "Nothing was changed" in stopped.output
    assert block_writes(kube, mark) == [], "nothing written while the namespace terminates"

    def release() -> None:
        try:
            kube.api.merge_patch(NS_PATH, {"metadata": {"finalizers": None}})
        except ApiError as err:
            if err.status != 404:
                raise

    # The hold goes a few seconds into install's wait (it then polls the namespace once a second).
    timers: list[threading.Timer] = []

    def watch(line: str) -> None:
        if "Wait until the namespace being deleted is gone" in line and not timers:
            timers.append(threading.Timer(4, release))
            timers[0].start()

    try:
        run = kube.playbook("install", cfg, watch=watch).ok()
    finally:
        for timer in timers:
            timer.join()
        release()
    assert timers, "install waited for the namespace: " + run.output[-3000:]
    assert_healthy(kube, plan(cfg))

    kube.playbook("uninstall", cfg).ok()
    names = {c["metadata"]["name"] for c in kube.items(CRD)}
    assert not any(n.endswith(".gateway.envoyproxy.io") or n.endswith(".gateway.networking.k8s.io") for n in names)


def _gatewayclass_transition_rule_on_update(kube: Kube) -> None:
    """GatewayClass spec.controllerName is immutable (`self == oldSelf`, evaluated by the API server on
    update only): an update of the block's class that keeps it is admitted, one that changes it refused."""
    path = f"{GW_API}/gatewayclasses/eg-shared"
    kube.api.merge_patch(path, {"spec": {"description": "updated by the transition-rule test"}})
    with pytest.raises(ApiError) as refused:
        kube.api.merge_patch(path, {"spec": {"controllerName": "example.com/another-controller"}})
    assert refused.value.status == 422, refused.value
    assert "Value is immutable" in str(refused.value), refused.value
    assert (kube.get(path) or {})["spec"]["controllerName"] == "gateway.envoyproxy.io/gatewayclass-controller"


def test_uninstall_refuses_then_removes_in_order(kube: Kube) -> None:
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})  # existed before the block
    cfg = kube.config(
        default_gateway={"enabled": True}, client_traffic={"enabled": True}, backend_traffic={"enabled": True}
    )
    kube.playbook("install", cfg).ok()
    assert_healthy(kube, plan(cfg))
    # The selectors uninstall waits on find every proxy Service the real controller made (issue #12 item 4:
    # in merged mode the old owning-gateway-name selectors matched nothing, so the wait never waited).
    proxy_services = {
        s["metadata"]["name"] for s in kube.items("/api/v1/services", labelSelector="app.kubernetes.io/component=proxy")
    }
    owned_now = [
        {"kind": kind, "name": name, "namespace": NS if kind == "Gateway" else None} for kind, name in owned(kube)
    ]
    waited_on = {
        s["metadata"]["name"]
        for q in lifecycle.proxy_queries(owned_now, services_only=True)
        for s in kube.items("/api/v1/services", labelSelector=",".join(q["label_selectors"]))
    }
    assert proxy_services, "the controller made a proxy Service for the default Gateway"
    assert waited_on == proxy_services, (waited_on, proxy_services)

    _gatewayclass_transition_rule_on_update(kube)

    # A tenant's Gateway named like the block's default one (eg-shared), in its own namespace, on the class
    # uninstall would remove: it is told apart by namespace and labels, not by name (red before: uninstall
    # took it for the block's and removed the class under it).
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-b"}})
    tenant = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "eg-shared", "namespace": "team-b"},
        "spec": {"gatewayClassName": "eg-shared", "listeners": [{"name": "http", "protocol": "HTTP", "port": 8080}]},
    }
    kube.apply(tenant)
    mark = len(kube.cluster.audit())
    refused = kube.playbook("uninstall", cfg)
    assert refused.returncode != 0, refused.output[-3000:]
    assert "team-b/eg-shared" in refused.output
    assert "Nothing was removed" in refused.output
    assert [w for w in block_writes(kube, mark) if w.verb == "delete"] == [], "uninstall refused: nothing deleted"
    kube.delete(tenant)
    kube.wait(lambda: kube.get(f"{GW_API}/namespaces/team-b/gateways/eg-shared") is None, 60, "tenant Gateway gone")

    mark = len(kube.cluster.audit())
    kube.playbook("uninstall", cfg).ok()
    deletes = [(x.resource, x.name) for x in writes(kube, mark) if x.verb in ("delete", "deletecollection")]
    block_deletes = [
        d for d in deletes if d[0] in ("gateways", "gatewayclasses", "envoyproxies", "clienttrafficpolicies")
    ]
    assert block_deletes[0] == ("gateways", "eg-shared"), deletes
    # The controller removes a proxy's Services with a deletecollection by its labels (no name in the audit).
    first_class_delete = deletes.index(next(d for d in deletes if d[0] in ("envoyproxies", "gatewayclasses")))
    assert ("services", "") in deletes[:first_class_delete], f"proxy Services removed before the classes: {deletes}"
    left = {s["metadata"]["name"] for s in kube.items("/api/v1/services")}
    assert not proxy_services & left, left
    order = [res for res, _ in block_deletes]
    assert order.index("clienttrafficpolicies") < order.index("envoyproxies") < order.index("gatewayclasses")
    proxies = kube.items(
        f"/apis/apps/v1/namespaces/{NS}/deployments", labelSelector="app.kubernetes.io/component=proxy"
    )
    assert proxies == [], "the controller removed the proxies"
    assert owned(kube) == set()
    assert kube.get(f"{CRD}/gateways.gateway.networking.k8s.io") is not None, "CRDs stay by default"
    assert kube.get(f"/api/v1/namespaces/{NS}") is not None, "a namespace that existed before stays"
    again = kube.playbook("uninstall", cfg).ok()
    assert again.recap["changed"] == 0, again.output[-4000:]
    kube.delete_namespace("team-b")
    kube.delete_namespace(NS)
