"""Invariants of prune/uninstall selection and status evaluation (pure functions behind the filters).

Guards: only objects carrying ALL ownership labels of this instance are ever deleted; what the plan
renders is never pruned; deletion follows the plan's delete order; status is healthy only when every
planned object reports its condition True. Mutation check (done once): dropping the ownership-label
test in lifecycle.leftovers turned test_only_owned_objects_are_candidates red.
"""

from __future__ import annotations

from typing import Any

from envoy_block import lifecycle
from tests.support.helpers import plan, with_gateway

OWN = {
    "app.kubernetes.io/part-of": "envoy-gateway",
    "app.kubernetes.io/managed-by": "polycrate",
    "app.kubernetes.io/instance": "envoy",
}


def obj(
    kind: str,
    name: str,
    labels: dict[str, str],
    api: str = "gateway.envoyproxy.io/v1alpha1",
    namespace: str | None = "envoy-gateway-system",
    **extra: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": labels}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta, **extra}


def test_only_owned_objects_are_candidates() -> None:
    found = [
        obj("ClientTrafficPolicy", "ours", OWN),
        obj("ClientTrafficPolicy", "other-instance", {**OWN, "app.kubernetes.io/instance": "envoy-2"}),
        obj("ClientTrafficPolicy", "tenant", {"team": "a"}),
        obj("ClientTrafficPolicy", "half", {"app.kubernetes.io/managed-by": "polycrate"}),
    ]
    assert [r["name"] for r in lifecycle.leftovers(found, None, OWN)] == ["ours"]


def test_planned_objects_are_never_pruned() -> None:
    p = plan(with_gateway()).to_dict()
    found = [entry["definition"] for entry in p["objects"]]
    assert lifecycle.leftovers(found, p, OWN) == []
    assert {r["kind"] for r in lifecycle.leftovers(found, None, OWN)} == {"EnvoyProxy", "GatewayClass", "Gateway"}


def test_delete_order_gateways_first() -> None:
    found = [
        obj("GatewayClass", "c", OWN, "gateway.networking.k8s.io/v1", None),
        obj("EnvoyProxy", "p", OWN),
        obj("NetworkPolicy", "n", OWN, "networking.k8s.io/v1"),
        obj("BackendTrafficPolicy", "b", OWN),
        obj("Gateway", "g", OWN, "gateway.networking.k8s.io/v1"),
    ]
    kinds = [r["kind"] for r in lifecycle.leftovers(found, None, OWN)]
    assert kinds == ["Gateway", "BackendTrafficPolicy", "EnvoyProxy", "GatewayClass", "NetworkPolicy"]


def _cond(kind: str, status: str = "True") -> dict[str, Any]:
    return {"conditions": [{"type": kind, "status": status, "reason": kind}]}


def test_status_healthy_only_when_every_condition_holds() -> None:
    p = plan(with_gateway({"client_traffic": {"enabled": True}})).to_dict()
    deployment = {"spec": {"replicas": 1}, "status": {"readyReplicas": 1}}
    found = [
        obj("GatewayClass", "eg-shared", OWN, "gateway.networking.k8s.io/v1", None, status=_cond("Accepted")),
        obj("GatewayClass", "eg-dedicated", OWN, "gateway.networking.k8s.io/v1", None, status=_cond("Accepted")),
        obj(
            "Gateway",
            "eg-shared",
            OWN,
            "gateway.networking.k8s.io/v1",
            status={**_cond("Programmed"), "addresses": [{"value": "192.0.2.1"}]},
        ),
        obj("ClientTrafficPolicy", "eg-shared-client-traffic", OWN, status={"ancestors": [_cond("Accepted")]}),
    ]
    rows = lifecycle.status_rows(p, found, deployment)
    assert all(r["ok"] for r in rows), rows
    assert any("192.0.2.1" in r["detail"] for r in rows)
    found[2]["status"] = _cond("Programmed", "False")
    assert not all(r["ok"] for r in lifecycle.status_rows(p, found, deployment))
    assert not all(r["ok"] for r in lifecycle.status_rows(p, found[:3], deployment)), "a missing policy is unhealthy"
    assert not all(r["ok"] for r in lifecycle.status_rows(p, found, None)), "no controller is unhealthy"
    stopped = {"spec": {"replicas": 0}, "status": {}}
    controller = lifecycle.status_rows(p, found, stopped)[0]
    assert controller["name"] == "envoy-gateway"
    assert not controller["ok"], "a controller scaled to zero is stopped (found on the real cluster)"


def test_third_party_kinds_name_what_provides_them() -> None:
    """install checks these before changing anything; the block's own and built-in kinds are never listed."""
    p = plan({"metrics": {"vmpodscrape": {"enabled": True}}, "network_policy": {"provider": "calico"}}).to_dict()
    kinds = {(k["kind"], k["needs"].split()[0]) for k in lifecycle.third_party_kinds(p)}
    assert kinds == {("VMPodScrape", "metrics.vmpodscrape.enabled"), ("NetworkPolicy", "network_policy.provider")}
    assert lifecycle.third_party_kinds(plan({}).to_dict()) == []


def test_status_looks_up_every_policy_the_plan_renders() -> None:
    """`status` reads what it reports on: the WAF's EnvoyExtensionPolicy was reported "not found" (unhealthy)
    because the role never looked it up (issue #12 item 7). Mutation check (done once): dropping
    EnvoyExtensionPolicy from STATUS_KINDS turned this red."""
    p = plan(with_gateway({"client_traffic": {"enabled": True}, "backend_traffic": {"enabled": True}})).to_dict()
    waf = plan(with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}}})).to_dict()
    for rendered in (p, waf):
        wanted = {(e["kind"], e["name"]) for e in rendered["objects"] if e["kind"].endswith("Policy")}
        wanted -= {(e["kind"], e["name"]) for e in rendered["objects"] if e["kind"] == "NetworkPolicy"}
        asked = {(q["kind"], q["name"]) for q in lifecycle.status_queries(rendered)}
        assert wanted, "the config renders policies"
        assert wanted <= asked, wanted - asked
    assert "EnvoyExtensionPolicy" in {q["kind"] for q in lifecycle.status_queries(waf)}


def test_uninstall_waits_on_the_labels_envoy_gateway_stamps() -> None:
    """A Gateway of its own is found by owning-gateway-name/-namespace; the merged Service of a class only by
    owning-gatewayclass (issue #12 item 4: the old wait used the Gateway labels in merged mode and matched
    nothing). tests/cluster/test_lifecycle.py checks the selectors against the real controller's Services."""
    owned: list[dict[str, Any]] = [
        {"kind": "Gateway", "name": "eg-shared", "namespace": "envoy-gateway-system"},
        {"kind": "GatewayClass", "name": "eg-shared", "namespace": None},
        {"kind": "EnvoyProxy", "name": "eg-shared", "namespace": "envoy-gateway-system"},
    ]
    services = lifecycle.proxy_queries(owned, services_only=True)
    assert {q["kind"] for q in services} == {"Service"}
    assert [q["label_selectors"] for q in services] == [
        [
            "gateway.envoyproxy.io/owning-gateway-name=eg-shared",
            "gateway.envoyproxy.io/owning-gateway-namespace=envoy-gateway-system",
        ],
        ["gateway.envoyproxy.io/owning-gatewayclass=eg-shared"],
    ]
    everything = {(q["kind"], tuple(q["label_selectors"])) for q in lifecycle.proxy_queries(owned)}
    assert ("Deployment", ("gateway.envoyproxy.io/owning-gatewayclass=eg-shared",)) in everything
    assert ("DaemonSet", ("gateway.envoyproxy.io/owning-gatewayclass=eg-shared",)) in everything
    assert lifecycle.proxy_queries([]) == []


def test_every_renderable_kind_is_owned() -> None:
    """Prune and uninstall list only lifecycle.OWNED_KINDS: a kind the plan renders but that list lacks would
    never be pruned or removed. Mutation check (done once): dropping ValidatingAdmissionPolicyBinding from
    OWNED_KINDS turned this test red."""
    owned = {(api, kind) for api, kind, _ in lifecycle.OWNED_KINDS}
    for provider in ("kubernetes", "cilium", "calico"):
        cfg = with_gateway(
            {
                "client_traffic": {"enabled": True},
                "backend_traffic": {"enabled": True},
                "metrics": {"vmpodscrape": {"enabled": True}},
                "waf": {"enabled": True, "default_policy": {"enabled": True}, "enforce": True},
                "network_policy": {"provider": provider, "api_server_cidrs": ["10.96.0.1/32"]},
            }
        )
        for step in plan(cfg).steps:
            if step.kind == "Namespace":
                continue  # created (and removed) only on request, by name, never by prune
            assert (step.obj["apiVersion"], step.kind) in owned, (provider, step.kind)


def test_install_reads_the_namespace_without_the_ownership_selector() -> None:
    """Install reads the cluster in one k8s_list run. The namespace query must find a namespace that existed
    before the block (no ownership labels), or install would try to create it and uninstall would later take
    it for the block's; owned objects and third-party kinds are read by the ownership labels only.
    Mutation: the ownership selector on every query -> red."""
    p = plan(
        with_gateway({"metrics": {"vmpodscrape": {"enabled": True}}, "network_policy": {"provider": "calico"}})
    ).to_dict()
    queries = lifecycle.install_lookups(p)
    by_purpose: dict[str, list[dict[str, Any]]] = {}
    for query in queries:
        by_purpose.setdefault(query["purpose"], []).append(query)
    ((namespace,),) = [by_purpose["namespace"]]
    assert (namespace["kind"], namespace["name"]) == ("Namespace", "envoy-gateway-system")
    assert "label_selectors" not in namespace
    assert [q["kind"] for q in by_purpose["crds"]] == ["CustomResourceDefinition"]
    assert "label_selectors" not in by_purpose["crds"][0]
    assert {q["kind"] for q in by_purpose["owned"]} == {k["kind"] for k in lifecycle.owned_kinds()}
    assert {q["kind"] for q in by_purpose["third_party"]} == {k["kind"] for k in lifecycle.third_party_kinds(p)}
    for query in by_purpose["owned"] + by_purpose["third_party"]:
        assert query["label_selectors"] == p["ownership_selector"]


def test_install_state_sorts_the_results_by_purpose() -> None:
    queries = lifecycle.install_lookups(plan().to_dict())
    results = [{"item": q, "api_found": True, "resources": [{"metadata": {"name": q["kind"]}}]} for q in queries]
    state = lifecycle.install_state(results)
    assert state["namespace"]["resources"] == [{"metadata": {"name": "Namespace"}}]
    assert [r["item"]["kind"] for r in state["crds"]["results"]] == ["CustomResourceDefinition"]
    assert [r["item"]["kind"] for r in state["owned"]["results"]] == [k["kind"] for k in lifecycle.owned_kinds()]
    assert state["third_party"]["results"] == []


def test_wait_queries_wait_for_each_class_and_gateway_only_when_asked() -> None:
    p = plan(with_gateway()).to_dict()
    waiting = lifecycle.wait_queries(p, wait=True)
    assert [(q["kind"], q["name"], q["wait_condition"]["type"]) for q in waiting] == [
        ("GatewayClass", "eg-shared", "Accepted"),
        ("GatewayClass", "eg-dedicated", "Accepted"),
        ("Gateway", "eg-shared", "Programmed"),
    ]
    assert all(q["wait_condition"]["status"] == "True" for q in waiting)
    assert all("wait_condition" not in q for q in lifecycle.wait_queries(p, wait=False))
