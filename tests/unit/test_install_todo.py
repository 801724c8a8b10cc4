"""Install's to-do list and its last step come from Python (lifecycle.decide_install, lifecycle.outcome): the
role only carries out each entry, so what runs when is judged here, not in Jinja. Guards: the network policies
the controller's pods need go before helm only when helm runs (everything in one run otherwise); a dry run
sends nothing into a namespace that does not exist and waits for nothing; the registry login only when a chart
is pulled with credentials; the final wait only when something changed or is not settled; the summary says what
happened.

Mutation checks: sending the network policies after helm (tools/mutate.py `install-netpol-before-helm`) and a
dry run that waits for the controller (`install-dry-run-waits-nothing`) turn this file red in make test;
final_wait returning [] after a change turned test_the_last_wait_runs_after_a_change_or_when_not_settled red
(done once, restored)."""

from __future__ import annotations

import copy
from typing import Any

from envoy_block import lifecycle
from envoy_block.lifecycle import outcome
from envoy_block.lifecycle.install import InstallDecision
from envoy_block.plan import Plan
from tests.support.helpers import plan, with_gateway


def _read(p: Plan, namespace: bool = True) -> list[dict[str, Any]]:
    """A cluster with nothing of the block's on it (the namespace there or not)."""
    out = []
    for query in lifecycle.install_lookups(p):
        resources: list[dict[str, Any]] = []
        if query["purpose"] == "namespace" and namespace:
            resources = [{"metadata": {"name": p.namespace.name, "labels": dict(p.ownership_labels)}}]
        out.append({"item": query, "api_found": True, "resources": resources, "release": None})
    return out


def _decide(p: Plan, *, crds_current: bool = True, check_mode: bool = False, namespace: bool = True) -> InstallDecision:
    observed = lifecycle.InstallObserved.from_results(_read(p, namespace))
    return lifecycle.decide_install(p, observed, crds_current, check_mode=check_mode)


def _kinds(batch: Any) -> list[str]:
    return [d["kind"] for d in batch["definitions"]]


def test_the_network_policies_go_before_helm_only_when_it_runs() -> None:
    p = plan(with_gateway({"network_policy": {"provider": "kubernetes", "api_server_cidrs": ["192.0.2.1/32"]}}))
    fresh = _decide(p)
    assert fresh.helm_needed
    assert fresh.prepare
    assert set(_kinds(fresh.apply_early)) == {"NetworkPolicy"}, "the controller's pods need them first"
    assert "NetworkPolicy" not in _kinds(fresh.apply_late)
    assert _kinds(fresh.apply_early) + _kinds(fresh.apply_late) == [
        s.kind for s in p.ordered() if s.kind != "Namespace"
    ], "together every object, each once, in plan order but the namespace"
    assert len(fresh.apply_early["rollouts"]) == len(fresh.apply_early["definitions"])

    unmanaged = plan(
        with_gateway(
            {
                "network_policy": {"provider": "kubernetes", "api_server_cidrs": ["192.0.2.1/32"]},
                "controller": {"install": False},
            }
        )
    )
    quiet = _decide(unmanaged)
    assert not quiet.helm_needed
    assert quiet.apply_early == {"definitions": [], "rollouts": []}, "no helm: everything in one module run"
    assert "NetworkPolicy" in _kinds(quiet.apply_late)


def test_a_dry_run_sends_and_waits_for_nothing() -> None:
    p = plan(with_gateway())
    dry = _decide(p, check_mode=True, namespace=False)
    assert dry.check_mode
    assert dry.helm_needed
    assert dry.apply_early["definitions"] == dry.apply_late["definitions"] == [], "no dry run into no namespace"
    assert not dry.wait_controller
    assert dry.controller_waits == ()
    real = _decide(p, namespace=False)
    assert real.wait_controller, "a real run waits for the controller helm rolled"
    assert real.controller_waits
    assert real.apply_late["definitions"]
    dry_into_existing = _decide(p, check_mode=True)
    assert dry_into_existing.apply_late["definitions"], "a dry run into an existing namespace is sent as one"
    no_waits = _decide(plan(with_gateway({"wait": {"enabled": False}})))
    assert not no_waits.wait_controller


def test_the_registry_login_and_the_crd_chart_only_when_a_chart_is_pulled() -> None:
    with_auth = {"chart": {"auth": {"username": "robot", "password": "s3cr3t"}}}
    p = plan(with_gateway(with_auth))
    assert _decide(p).login, "helm pulls the chart"
    assert _decide(plan(with_gateway())).login is False, "no credentials"
    settled = plan(with_gateway({**with_auth, "controller": {"install": False}}))
    assert not _decide(settled).login, "nothing to pull: no helm, CRDs current"
    assert _decide(settled, crds_current=False).login, "the CRD chart is pulled"
    assert _decide(settled, crds_current=False).render_crd_chart
    assert not _decide(settled).render_crd_chart


def test_the_decision_comes_back_whole_from_the_action_result() -> None:
    decision = _decide(plan(with_gateway()))
    returned = {"changed": False, "crd_source": "abc", **decision.to_dict()}
    assert InstallDecision.from_dict(copy.deepcopy(returned)) == decision


def test_the_last_wait_runs_after_a_change_or_when_not_settled() -> None:
    p = plan(with_gateway({"controller": {"install": False}}))
    decision = _decide(p)
    assert not decision.helm_needed
    settled = InstallDecision.from_dict(
        {**decision.to_dict(), "settled": True, "leftovers": [], "namespace_apply": False}
    )
    assert outcome.final_wait(p, settled, did_change=False) == [], "nothing changed, everything settled"
    waited = outcome.final_wait(p, settled, did_change=True)
    assert [q["kind"] for q in waited] == ["GatewayClass", "GatewayClass", "Gateway"]
    unsettled = InstallDecision.from_dict({**settled.to_dict(), "settled": False})
    assert outcome.final_wait(p, unsettled, did_change=False) == waited
    dry = InstallDecision.from_dict({**settled.to_dict(), "check_mode": True})
    assert outcome.final_wait(p, dry, did_change=True) == [], "a dry run neither waits nor reads again"
    assert outcome.changed(settled, 0, [{"changed": False}]) is False
    assert outcome.changed(settled, 1, []) is True
    assert outcome.changed(settled, 0, [{"changed": True}]) is True
    pruning = InstallDecision.from_dict({**settled.to_dict(), "leftovers": [{"name": "x"}]})
    assert outcome.changed(pruning, 0, []) is True


def test_the_summary_says_what_the_run_did() -> None:
    p = plan(with_gateway())
    decision = _decide(p, check_mode=True, namespace=False)
    objects = outcome.applied_objects(
        [{"skipped": True}, {"result": {"results": [{"changed": True}, {"changed": False}]}}]
    )
    gateway = {"metadata": {"namespace": "ns", "name": "eg"}, "status": {"addresses": [{"value": "192.0.2.7"}]}}
    lines = outcome.summary(p, decision, objects, 3, [gateway])
    assert lines[0] == (
        f"Objects: {len(p.steps)} planned, 2 applied, changed: 1 (the others were found as last applied and not sent)"
    )
    assert lines[1] == "Pruned: []"
    assert lines[2].startswith("Controller: gateway-helm handed to helm: ")
    assert lines[3] == "CRDs applied: 3 (the cluster holds every CRD of the configured source)"
    assert lines[4] == "Gateway API CRDs: the block's"
    assert lines[7] == "Still rolling (as read before this run): nothing"
    assert lines[8].startswith(f"Namespace {p.namespace.name} does not exist yet: a real run creates it")
    assert lines[-1] == "Gateway ns/eg: 192.0.2.7"
    assert outcome.waited_gateways([{"item": {"kind": "Gateway"}, "resources": [gateway]}]) == [gateway]
