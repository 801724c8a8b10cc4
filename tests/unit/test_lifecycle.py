"""Invariants of prune/uninstall selection and status evaluation (pure functions behind the filters).

Guards: only objects carrying ALL ownership labels of this instance are ever deleted; what the plan
renders is never pruned; deletion follows the plan's delete order; status is healthy only when every
planned object reports its condition True. Mutation check (tools/mutate.py `uninstall-unowned`): dropping the
ownership-label test in lifecycle.leftovers turns test_only_owned_objects_are_candidates red.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import lifecycle
from envoy_block.plan import DIGEST_ANNOTATION, Plan
from tests.conftest import ROOT
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
    p = plan(with_gateway())
    found = [entry["definition"] for entry in p.to_dict()["objects"]]
    assert lifecycle.leftovers(found, p, OWN) == []
    assert {r["kind"] for r in lifecycle.leftovers(found, None, OWN)} == {
        "EnvoyProxy",
        "GatewayClass",
        "Gateway",
        "ValidatingAdmissionPolicy",  # tenant_guards.envoy_proxy, on by default
        "ValidatingAdmissionPolicyBinding",
    }


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


ROLLED_OUT = {"observedGeneration": 1, "readyReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1, "replicas": 1}


def _cond(kind: str, status: str = "True") -> dict[str, Any]:
    return {"conditions": [{"type": kind, "status": status, "reason": kind}]}


def test_status_healthy_only_when_every_condition_holds() -> None:
    p = plan(with_gateway({"client_traffic": {"enabled": True}}))
    deployment = {"metadata": {"generation": 1}, "spec": {"replicas": 1}, "status": ROLLED_OUT}
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
    p = plan({"metrics": {"vmpodscrape": {"enabled": True}}, "network_policy": {"provider": "calico"}})
    kinds = {(k["kind"], k["needs"].split()[0]) for k in lifecycle.third_party_kinds(p)}
    assert kinds == {
        ("VMPodScrape", "metrics.vmpodscrape.enabled"),
        ("VMServiceScrape", "metrics.vmpodscrape.enabled"),
        ("NetworkPolicy", "network_policy.provider"),
    }
    assert lifecycle.third_party_kinds(plan({})) == []


def test_status_looks_up_every_policy_the_plan_renders() -> None:
    """`status` reads what it reports on: the WAF's EnvoyExtensionPolicy was reported "not found" (unhealthy)
    because the role never looked it up (issue #12 item 7). Mutation check (done once): dropping
    EnvoyExtensionPolicy from STATUS_KINDS turned this red."""
    p = plan(with_gateway({"client_traffic": {"enabled": True}, "backend_traffic": {"enabled": True}}))
    waf = plan(with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}}}))
    for rendered in (p, waf):
        wanted = {(e["kind"], e["name"]) for e in rendered.to_dict()["objects"] if e["kind"].endswith("Policy")}
        # Network and admission policies carry no status of their own to report.
        wanted -= {
            (e["kind"], e["name"])
            for e in rendered.to_dict()["objects"]
            if e["kind"] in ("NetworkPolicy", "ValidatingAdmissionPolicy")
        }
        asked = {(q["kind"], q["name"]) for q in lifecycle.status_queries(rendered) if "name" in q}
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


EXAMPLES = sorted((ROOT / "examples").glob("*/config.yml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.parent.name for p in EXAMPLES])
def test_every_kind_an_example_renders_is_owned(path: Path) -> None:
    """Prune and uninstall list only lifecycle.OWNED_KINDS, which is read from the steps of
    builder.EVERY_KIND_CONFIGS: a kind an example renders that those configs miss would never be pruned or
    removed. Mutation check (done once): dropping the calico provider from EVERY_KIND_CONFIGS turned the
    calico example red."""
    owned = {(api, kind) for api, kind, _ in lifecycle.OWNED_KINDS}
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))["config"]
    for step in plan(cfg).steps:
        if step.kind == "Namespace":
            continue  # created (and removed) only on request, by name, never by prune
        assert (step.obj["apiVersion"], step.kind) in owned, step.kind


def test_owned_kinds_keep_their_phases() -> None:
    """Each kind is deleted in its phase (the earliest, for a kind two phases build): Gateways first, network
    policies last; uninstall's order rests on it."""
    phases = {kind: phase.label for _, kind, phase in lifecycle.OWNED_KINDS}
    assert phases["Gateway"] == "gateway"
    assert phases["ConfigMap"] == "waf", "the WAF's ConfigMap and the dashboards': the earlier delete phase"
    assert phases["ValidatingAdmissionPolicy"] == "policy"
    assert {phases[k] for k in ("CiliumClusterwideNetworkPolicy", "GlobalNetworkPolicy", "NetworkPolicy")} == {
        "network"
    }
    assert [r[2].delete_rank for r in lifecycle.OWNED_KINDS] == sorted(r[2].delete_rank for r in lifecycle.OWNED_KINDS)


def test_install_reads_the_namespace_without_the_ownership_selector() -> None:
    """Install reads the cluster in one k8s_list run. The namespace query must find a namespace that existed
    before the block (no ownership labels), or install would try to create it and uninstall would later take
    it for the block's; owned objects and third-party kinds are read by the ownership labels only.
    Mutation: the ownership selector on every query -> red."""
    p = plan(with_gateway({"metrics": {"vmpodscrape": {"enabled": True}}, "network_policy": {"provider": "calico"}}))
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
        assert query["label_selectors"] == p.to_dict()["ownership_selector"]


def test_install_stops_before_writing_when_a_kind_is_not_served_or_the_namespace_may_not_be_created() -> None:
    """Both stop the run with every problem at once, before anything is written (install_state's
    `problems`, which the install_state action turns into one failure)."""
    p = plan({"metrics": {"vmpodscrape": {"enabled": True}}, "create_namespace": False})
    results = [
        {"item": q, "api_found": q["purpose"] != "third_party", "resources": []} for q in lifecycle.install_lookups(p)
    ]
    problems = lifecycle.install_state(results, p, crds_current=False)["problems"]
    assert len(problems) == 2, problems
    assert "does not serve VMPodScrape" in problems[0]
    assert "VictoriaMetrics operator" in problems[0]
    assert "create_namespace is false" in problems[1]


def test_the_namespace_is_created_or_completed_but_never_adopted() -> None:
    """Missing: created. The block's own (ownership labels) lacking a planned label: applied again. One that
    existed before the block (no ownership labels): used as it is, so uninstall never takes it for the
    block's. Mutation check (done once): dropping the ownership test turned the "foreign" case red."""
    p = plan()
    ns = next(e["definition"] for e in p.to_dict()["objects"] if e["phase"] == "namespace")

    def state(live: dict[str, Any] | None) -> dict[str, Any]:
        results = []
        for q in lifecycle.install_lookups(p):
            resources = [live] if live is not None and q["purpose"] == "namespace" else []
            results.append({"item": q, "api_found": True, "resources": resources})
        return lifecycle.install_state(results, p, crds_current=True)

    assert state(None)["namespace_apply"]
    assert not state(None)["namespace_exists"]
    assert not state(copy.deepcopy(ns))["namespace_apply"], "as planned"
    lacking = copy.deepcopy(ns)
    lacking["metadata"]["labels"].pop("app.kubernetes.io/version")
    assert state(lacking)["namespace_apply"], "the block's own, missing a planned label"
    foreign = {"metadata": {"name": ns["metadata"]["name"], "labels": {"team": "platform"}}}
    assert not state(foreign)["namespace_apply"], "existed before the block"


def test_only_objects_not_as_last_applied_are_sent() -> None:
    """A re-install sends only plan objects the cluster does not hold as the block last applied them: same
    digest (so no field the plan stopped setting is left behind) and every value still in place. Extra
    fields (defaults, other owners', status) do not count; a changed or removed value, a changed list, a
    changed type, another digest or deletion does. Mutation checks: comparing digests only turns the "edited"
    and "removed" cases red, ignoring deletion the "being deleted" case (both in CI: tools/mutate.py
    `reinstall-digest-only`, `reinstall-deleting-unchanged`); ignoring list lengths turned "list grew" red
    and allowing 1 == True turned "type" red (done once)."""
    p = plan(with_gateway())
    entry = next(e for e in p.to_dict()["objects"] if e["kind"] == "Gateway")
    want = entry["definition"]
    live = copy.deepcopy(want)
    live["metadata"].update(uid="1", resourceVersion="7", generation=1, finalizers=["x"])
    live["spec"]["listeners"][0]["allowedRoutes"]["kinds"] = [{"kind": "HTTPRoute"}]  # a CRD default
    live["status"] = {"conditions": []}
    assert lifecycle.unchanged(want, live)

    def edited(change: Any) -> dict[str, Any]:
        obj: dict[str, Any] = copy.deepcopy(live)
        change(obj)
        return obj

    cases = {
        "edited": lambda o: o["spec"]["listeners"][0].update(port=8080),
        "removed": lambda o: o["metadata"]["labels"].pop("app.kubernetes.io/instance"),
        "list grew": lambda o: o["spec"]["listeners"].append({"name": "extra", "port": 81, "protocol": "HTTP"}),
        "type": lambda o: o["spec"]["listeners"][0].update(port="80"),
        "another digest": lambda o: o["metadata"]["annotations"].update({DIGEST_ANNOTATION: "0" * 64}),
        "being deleted": lambda o: o["metadata"].update(deletionTimestamp="2026-12-01T00:00:00Z"),
    }
    for case, change in cases.items():
        assert not lifecycle.unchanged(want, edited(change)), case
    assert not lifecycle.unchanged(want, None), "missing"
    boolean = edited(lambda o: o["spec"].update(flag=True))
    assert not lifecycle.unchanged({**want, "spec": {**want["spec"], "flag": 1}}, boolean), "1 is not true"

    results = []
    for q in lifecycle.install_lookups(p):
        resources = [live] if q["purpose"] == "owned" and q["kind"] == "Gateway" else []
        results.append({"item": q, "api_found": True, "resources": resources})
    files = lifecycle.install_state(results, p, crds_current=True)["apply_files"]
    assert entry["file"] not in files
    assert files == [
        e["file"] for e in p.to_dict()["objects"] if e["phase"] != "namespace" and e["kind"] != "Gateway"
    ], "every other object (not found) is sent, in plan order; the namespace never here"


def test_install_prunes_owned_objects_the_plan_no_longer_renders() -> None:
    p = plan()
    gone = obj("Gateway", "eg-shared", OWN, api="gateway.networking.k8s.io/v1")
    results = []
    for q in lifecycle.install_lookups(p):
        resources = [gone] if q["purpose"] == "owned" and q["kind"] == "Gateway" else []
        results.append({"item": q, "api_found": True, "resources": resources})
    leftovers = lifecycle.install_state(results, p, crds_current=True)["leftovers"]
    assert [(x["kind"], x["name"]) for x in leftovers] == [("Gateway", "eg-shared")]


def _conditioned(obj: dict[str, Any], condition: str, generation: int = 1, observed: int = 1) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["metadata"]["generation"] = generation
    out["status"] = {"conditions": [{"type": condition, "status": "True", "observedGeneration": observed}]}
    return out


def _read(p: Plan, *, record: dict[str, Any] | None, deployment: dict[str, Any] | None) -> list[Any]:
    """What the state read returns on a cluster where the plan was applied: owned classes and Gateways as
    planned (with the given conditions), helm's record and the controller's Deployment."""
    out = []
    for query in lifecycle.install_lookups(p):
        resources: list[dict[str, Any]] = []
        if query["purpose"] == "owned":
            resources = [
                _conditioned(e["definition"], e["wait_condition"])
                for e in p.to_dict()["objects"]
                if e["kind"] == query["kind"] and e["kind"] in lifecycle.STATUS_READ_KINDS
            ]
        elif query["purpose"] == "controller":
            resources = [deployment] if deployment else []
        out.append({"item": query, "api_found": True, "resources": resources, "release": record})
    return out


def test_install_decides_from_one_read_what_it_must_run() -> None:
    """The read before any write decides whether helm runs (only when its record differs from the plan),
    and whether the run may skip its waits: only when the controller is Available and every planned class
    and Gateway holds its condition for its current generation. A condition reported for an older
    generation (a spec change the controller has not seen) is not settled. Mutation checks (done once):
    ignoring observedGeneration turned the "stale" case red; settling without the controller turned the
    "controller down" case red."""
    p = plan(with_gateway())
    helm = p.to_dict()["helm"]
    record = {"status": "deployed", "chart": "gateway-helm", "chart_version": helm["chart_version"]}
    record["values"] = helm["values"]
    available = _conditioned({"metadata": {"name": "envoy-gateway"}}, "Available")
    available["status"]["observedGeneration"] = 1

    state = lifecycle.install_state(_read(p, record=record, deployment=available), p, crds_current=True)
    assert (state["helm_needed"], state["helm_changes"], state["settled"]) == (False, [], True)
    assert [g["metadata"]["name"] for g in state["gateways"]] == ["eg-shared"]

    fresh = lifecycle.install_state(_read(p, record=None, deployment=None), p, crds_current=False)
    assert fresh["helm_needed"]
    assert not fresh["settled"]
    assert not fresh["controller_ready"]

    down = copy.deepcopy(available)
    down["status"]["conditions"][0]["status"] = "False"
    assert not lifecycle.install_state(_read(p, record=record, deployment=down), p, True)["settled"], "controller down"

    results = _read(p, record=record, deployment=available)
    for result in results:
        for obj in result["resources"]:
            if obj.get("kind") == "Gateway":
                obj["metadata"]["generation"] = 2  # spec changed, status still of generation 1
    assert not lifecycle.install_state(results, p, True)["settled"], "stale"

    unmanaged = plan(with_gateway({"controller": {"install": False}}))
    assert {q["purpose"] for q in lifecycle.install_lookups(unmanaged)} == {"namespace", "crds", "owned", "proxies"}, (
        "no release record or Deployment is read for a controller the block does not install"
    )
    state = lifecycle.install_state(_read(unmanaged, record=None, deployment=None), unmanaged, True)
    assert not state["helm_needed"]
    assert state["settled"]


def test_wait_queries_wait_for_each_class_and_gateway_only_when_asked() -> None:
    p = plan(with_gateway())
    waiting = lifecycle.wait_queries(p, wait=True)
    assert [(q["kind"], q["name"], q["wait_condition"]["type"]) for q in waiting] == [
        ("GatewayClass", "eg-shared", "Accepted"),
        ("GatewayClass", "eg-dedicated", "Accepted"),
        ("Gateway", "eg-shared", "Programmed"),
    ]
    assert all(q["wait_condition"]["status"] == "True" for q in waiting)
    assert all("wait_condition" not in q for q in lifecycle.wait_queries(p, wait=False))
    with_controller = lifecycle.wait_queries(p, wait=True, controller=True)
    assert (with_controller[0]["kind"], with_controller[0]["wait_condition"]["type"]) == ("Deployment", "Available")
    assert with_controller[1:] == waiting


def _gateway(namespace: str, name: str, gateway_class: str, labels: dict[str, str]) -> dict[str, Any]:
    return obj(
        "Gateway", name, labels, "gateway.networking.k8s.io/v1", namespace, spec={"gatewayClassName": gateway_class}
    )


def test_tenant_gateways_are_told_apart_by_namespace_name_and_labels() -> None:
    """Uninstall stops while a Gateway that is not the block's uses a class it would remove. The block's own
    Gateway is one of the owned rows by namespace and name and carries the ownership labels; a tenant's
    Gateway named like it in another namespace is a tenant's (it used to be skipped by its name). Mutation
    (tools/mutate.py `uninstall-tenant-by-name`): telling Gateways apart by name only turns this red."""
    owned = lifecycle.leftovers(
        [
            _gateway("envoy-gateway-system", "eg-shared", "eg-shared", OWN),
            obj("GatewayClass", "eg-shared", OWN, "gateway.networking.k8s.io/v1", None),
            obj("GatewayClass", "eg-dedicated", OWN, "gateway.networking.k8s.io/v1", None),
        ],
        None,
        OWN,
    )
    gateways = [
        _gateway("envoy-gateway-system", "eg-shared", "eg-shared", OWN),  # the block's
        _gateway("team-b", "eg-shared", "eg-shared", {"team": "b"}),  # same name, a tenant's namespace
        _gateway("team-c", "app", "eg-dedicated", {}),
        _gateway("team-d", "other", "someone-elses", {}),  # not on a class the block removes
    ]
    assert lifecycle.tenant_gateways(gateways, owned, OWN) == ["team-b/eg-shared", "team-c/app"]
    unlabelled = _gateway("envoy-gateway-system", "eg-shared", "eg-shared", {"team": "x"})
    assert lifecycle.tenant_gateways([unlabelled], owned, OWN) == ["envoy-gateway-system/eg-shared"], (
        "a Gateway without the ownership labels is not the block's, whatever its name"
    )
    assert lifecycle.tenant_gateways(gateways[:1], owned, OWN) == []


def test_status_shows_the_monitoring_objects() -> None:
    """`status` lists the scrapes and the VMRule the plan renders (present, or not found: unhealthy)."""
    p = plan({"metrics": {"vmpodscrape": {"enabled": True}, "rules": {"enabled": True}}})
    wanted = [q for q in lifecycle.status_queries(p) if q["kind"] in lifecycle.MONITORING_KINDS]
    assert sorted(q["kind"] for q in wanted) == ["VMPodScrape", "VMRule", "VMServiceScrape"]
    found = [{"kind": q["kind"], "metadata": {"name": q["name"], "namespace": q["namespace"]}} for q in wanted]
    rows = [r for r in lifecycle.status_rows(p, found, None) if r["what"] in lifecycle.MONITORING_KINDS]
    assert [(r["ok"], r["detail"]) for r in rows] == [(True, "present")] * 3
    rows = [r for r in lifecycle.status_rows(p, found[1:], None) if r["what"] in lifecycle.MONITORING_KINDS]
    assert [r["ok"] for r in rows].count(False) == 1
