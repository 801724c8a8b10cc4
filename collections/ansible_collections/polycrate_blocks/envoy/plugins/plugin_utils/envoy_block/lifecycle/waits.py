"""What install waits for after it applied, and how its summary shows a Gateway."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..components import controller


def wait_queries(plan: Mapping[str, Any], wait: bool, controller: bool = False) -> list[dict[str, Any]]:
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
                "name": plan["controller"]["deployment"],
                "namespace": plan["namespace"]["name"],
                **({"wait_condition": {"type": "Available", "status": "True"}} if wait else {}),
            }
        )
    return queries + [
        {
            "api_version": e["api_version"],
            "kind": e["kind"],
            "name": e["name"],
            "namespace": e["namespace"],
            **({"wait_condition": {"type": e["wait_condition"], "status": "True"}} if wait else {}),
        }
        for e in plan["objects"]
        if e["kind"] in ("GatewayClass", "Gateway")
    ]


def previous_controller_query(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The controller's pods that are terminating, for install to wait on after helm changed the release.
    The Deployment counts a rollout done while the old pod still shuts down, and that pod keeps the leader
    lease until it exits: objects applied meanwhile are reconciled by the old controller under its old
    settings. On the real node, a deploy_type switch made the old controller build a proxy Deployment in the
    controller's namespace that the new one (GatewayNamespace) never looks at again."""
    return [
        {
            "api_version": "v1",
            "kind": "Pod",
            "namespace": plan["namespace"]["name"],
            "label_selectors": list(controller.POD_SELECTOR),
            "metadata_only": True,
            "terminating_only": True,
        }
    ]


def gateway_line(gateway: Mapping[str, Any]) -> str:
    """`Gateway <namespace>/<name>: <addresses>` for install's summary."""
    meta = gateway.get("metadata") or {}
    addresses = [str(a.get("value")) for a in (gateway.get("status") or {}).get("addresses") or []]
    return f"Gateway {meta.get('namespace')}/{meta.get('name')}: {', '.join(addresses) or 'no address yet'}"
