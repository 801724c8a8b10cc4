"""What install does after it applied: whether it waits (and for what), and the summary it shows. Pure: the
decision install_state returned, what the apply tasks reported and, after the wait, the Gateways as read."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..plan import Plan
from .install import InstallDecision
from .waits import gateway_line, wait_queries


def applied_objects(results: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Each object's result from the k8s_apply runs' registered results (a skipped run sent nothing)."""
    objects: list[Mapping[str, Any]] = []
    for result in results:
        if result.get("skipped"):
            continue
        objects += (result.get("result") or {}).get("results") or [result]
    return objects


def changed(decision: InstallDecision, crds_applied: int, objects: Sequence[Mapping[str, Any]]) -> bool:
    """Whether this run changed the cluster: helm ran, CRDs or the namespace were applied, an object changed,
    or something was pruned."""
    return bool(
        decision.helm_needed
        or crds_applied
        or decision.namespace_apply
        or any(o.get("changed") for o in objects)
        or decision.leftovers
    )


def final_wait(plan: Plan, decision: InstallDecision, did_change: bool) -> list[dict[str, Any]]:
    """The k8s_list queries install runs last (empty: none). It waits (GatewayClasses Accepted, Gateways
    Programmed, and the controller Available when helm did not just roll it) when waits are on and the state
    read did not find everything settled; it reads the Gateways' addresses again after a real change without
    waiting. Otherwise nothing: waiting or reading would see what the state read saw."""
    wait = plan.wait.enabled and not decision.check_mode
    if (did_change and not decision.check_mode) or (wait and not decision.settled):
        return wait_queries(plan, wait, plan.controller.install and not decision.helm_needed)
    return []


def summary(
    plan: Plan,
    decision: InstallDecision,
    objects: Sequence[Mapping[str, Any]],
    crds_applied: int,
    gateways: Sequence[Mapping[str, Any]],
) -> list[str]:
    """The lines install ends with: what it applied, pruned and handed to helm, whose the Gateway API CRDs
    are, the plan's warnings, the upgrade step, what was still rolling, and each Gateway's addresses."""
    if not plan.controller.install:
        controller = "not managed (controller.install: false)"
    elif decision.helm_needed:
        controller = "gateway-helm handed to helm: " + "; ".join(decision.helm_changes)
    else:
        controller = "gateway-helm release as planned, helm not run"
    owners = decision.crd_owners.get("message") or "the block's"
    current = " (the cluster holds every CRD of the configured source)" if decision.crds_current else ""
    lines = [
        f"Objects: {len(plan.steps)} planned, {len(objects)} applied, changed: "
        f"{sum(1 for o in objects if o.get('changed'))} (the others were found as last applied and not sent)",
        f"Pruned: {[str(o.get('name')) for o in decision.leftovers]}",
        f"Controller: {controller}",
        f"CRDs applied: {crds_applied}{current}",
        f"Gateway API CRDs: {owners}",
        f"Warnings: {list(plan.warnings)}",
        f"Envoy Gateway: {decision.upgrade.get('summary')}",
        f"Still rolling (as read before this run): {'; '.join(decision.rollout) or 'nothing'}",
    ]
    if decision.check_mode and not decision.namespace_exists:
        files = ", ".join(plan.file_name(s) for s in plan.ordered())
        lines.append(
            f"Namespace {plan.namespace.name} does not exist yet: a real run creates it and every object of the "
            f"plan ({files}); objects cannot be dry-run into a namespace that does not exist."
        )
    return lines + [gateway_line(g) for g in gateways]


def waited_gateways(results: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The Gateways the final k8s_list run returned."""
    return [o for r in results if (r.get("item") or {}).get("kind") == "Gateway" for o in r.get("resources") or []]
