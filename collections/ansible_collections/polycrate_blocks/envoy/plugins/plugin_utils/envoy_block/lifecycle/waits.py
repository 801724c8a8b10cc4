"""What install waits for after it applied, and how its summary shows a Gateway."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..components import controller
from ..plan import Plan


def wait_queries(plan: Plan, wait: bool, controller: bool = False) -> list[dict[str, Any]]:
    """The plan's GatewayClasses and Gateways by name, each waiting for its condition (Accepted,
    Programmed) when `wait`: one k8s_list run that also returns the Gateways' addresses. With
    `controller`, the controller's Deployment (Available) first: the rollout install did not wait for
    because helm had nothing to change."""
    queries = []
    if controller:
        queries.append(
            {
                "api_version": "apps/v1",
                "kind": "Deployment",
                "name": plan.controller.deployment,
                "namespace": plan.namespace.name,
                **({"wait_condition": {"type": "Available", "status": "True"}} if wait else {}),
            }
        )
    return queries + [
        {
            "api_version": step.api_version,
            "kind": step.kind,
            "name": step.name,
            "namespace": step.namespace,
            **({"wait_condition": {"type": step.wait_condition, "status": "True"}} if wait else {}),
        }
        for step in plan.ordered()
        if step.kind in ("GatewayClass", "Gateway")
    ]


def controller_waits(plan: Plan) -> list[dict[str, Any]]:
    """What install waits for after helm changed the release, in one k8s_list run (the lease read follows in
    the same run, lease_decision): the controller's Deployment rolled out (kubernetes.core's readiness of a
    Deployment, what `k8s_info` with `wait` reads: every replica updated and available, none unavailable, its
    generation observed), then no pod of the previous controller still terminating."""
    rollout = {
        "api_version": "apps/v1",
        "kind": "Deployment",
        "name": plan.controller.deployment,
        "namespace": plan.helm.namespace,
        "metadata_only": True,
        "wait_ready": True,
    }
    return [rollout, *previous_controller_query(plan)]


def previous_controller_query(plan: Plan) -> list[dict[str, Any]]:
    """The controller's pods that are terminating, for install to wait on after helm changed the release (until
    none is: wait_absent, one module run).
    The Deployment counts a rollout done while the old pod still shuts down, and that pod keeps the leader
    lease until it exits: objects applied meanwhile are reconciled by the old controller under its old
    settings. On the real node, a deploy_type switch made the old controller build a proxy Deployment in the
    controller's namespace that the new one (GatewayNamespace) never looks at again."""
    return [
        {
            "api_version": "v1",
            "kind": "Pod",
            "namespace": plan.namespace.name,
            "label_selectors": list(controller.POD_SELECTOR),
            "metadata_only": True,
            "terminating_only": True,
            "wait_absent": True,
        }
    ]


def gateway_line(gateway: Mapping[str, Any]) -> str:
    """`Gateway <namespace>/<name>: <addresses>` for install's summary."""
    meta = gateway.get("metadata") or {}
    addresses = [str(a.get("value")) for a in (gateway.get("status") or {}).get("addresses") or []]
    return f"Gateway {meta.get('namespace')}/{meta.get('name')}: {', '.join(addresses) or 'no address yet'}"


def lease_lookups(plan: Plan) -> list[dict[str, Any]]:
    """The controller's leader Lease and its pods (metadata: names), the two things stale_lease reads."""
    namespace = plan.namespace.name
    return [
        {
            "api_version": "coordination.k8s.io/v1",
            "kind": "Lease",
            "name": plan.controller.lease,
            "namespace": namespace,
        },
        {
            "api_version": "v1",
            "kind": "Pod",
            "namespace": namespace,
            "label_selectors": list(plan.controller.pod_selector),
            "metadata_only": True,
        },
    ]


def stale_lease(leases: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The controller's leader Lease when the pod that holds it no longer exists, else {}.

    Envoy Gateway does not give its lease back when it stops (no ReleaseOnCancel), so after an upgrade the
    new replicas wait out the stopped leader's leaseDuration (15 s) before one of them leads, and only the
    leader rolls the proxies onto the new release. Proxies that moved to a new controller meanwhile run its
    configuration on their old bootstrap: on v1.9.0 -> v1.9.1 their TLS listeners lose their certificates 15 s
    after that push (envoyproxy/gateway#9918). Deleting a dead holder's lease lets a live replica take it at
    its next retry (2 s). The resourceVersion goes with the decision: install deletes on that precondition,
    so a lease a new leader has taken meanwhile is left alone. The holder identity is <pod name>_<uuid>."""
    if not leases:
        return {}
    lease = leases[0]
    holder = str((lease.get("spec") or {}).get("holderIdentity") or "")
    if not holder:
        return {}
    pod_name = holder.split("_", 1)[0]
    if pod_name in {str((p.get("metadata") or {}).get("name")) for p in pods}:
        return {}
    meta = lease.get("metadata") or {}
    return {"holder": holder, "pod": pod_name, "resource_version": str(meta.get("resourceVersion", ""))}
