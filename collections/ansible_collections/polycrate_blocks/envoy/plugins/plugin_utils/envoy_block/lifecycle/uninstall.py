"""What uninstall must know before it removes anything: tenants on the block's classes, the proxies the
controller made for the block's Gateways."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .ownership import owns


def tenant_gateways(
    gateways: Iterable[Mapping[str, Any]], owned: Iterable[Mapping[str, Any]], ownership_labels: Mapping[str, str]
) -> list[str]:
    """`namespace/name` of each Gateway on a GatewayClass uninstall would remove (one of `owned`, leftovers'
    rows) that is not the block's own: the block's are the owned Gateways, by namespace AND name, that still
    carry every ownership label. A tenant's Gateway named like the block's (`eg-shared` in its own namespace)
    is a tenant's: removing the class under it would stop its traffic."""
    rows = list(owned)
    classes = {r["name"] for r in rows if r["kind"] == "GatewayClass"}
    ours = {(r["namespace"], r["name"]) for r in rows if r["kind"] == "Gateway"}
    tenants = []
    for gateway in gateways:
        meta = gateway.get("metadata") or {}
        if (gateway.get("spec") or {}).get("gatewayClassName") not in classes:
            continue
        if (meta.get("namespace"), meta.get("name")) in ours and owns(gateway, ownership_labels):
            continue
        tenants.append(f"{meta.get('namespace')}/{meta.get('name')}")
    return sorted(tenants)


EG_LABEL = "gateway.envoyproxy.io"

# What Envoy Gateway creates per proxy (a Gateway of its own, or a merged class) and removes only while it
# runs as leader: a Gateway deleted while it is down, or before a restarted one holds the lease, leaves them.
PROXY_KINDS = (
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
    ("apps/v1", "DaemonSet"),
    ("autoscaling/v2", "HorizontalPodAutoscaler"),
    ("policy/v1", "PodDisruptionBudget"),
    ("v1", "ServiceAccount"),
)


def proxy_queries(owned: Iterable[Mapping[str, Any]], services_only: bool = False) -> list[dict[str, Any]]:
    """The proxies Envoy Gateway made for the block's Gateways, by the labels it stamps: a Gateway of its own
    (no mergeGateways) gets owning-gateway-name/-namespace; the proxy of a merged class carries only
    owning-gatewayclass and is named after the class, not a Gateway. Services only: what uninstall waits on."""
    selectors: list[list[str]] = []
    for obj in owned:
        if obj["kind"] == "Gateway":
            selectors.append(
                [
                    f"{EG_LABEL}/owning-gateway-name={obj['name']}",
                    f"{EG_LABEL}/owning-gateway-namespace={obj['namespace']}",
                ]
            )
        elif obj["kind"] == "GatewayClass":
            selectors.append([f"{EG_LABEL}/owning-gatewayclass={obj['name']}"])
    kinds = PROXY_KINDS[:1] if services_only else PROXY_KINDS
    return [
        {"api_version": api_version, "kind": kind, "label_selectors": selector}
        for selector in selectors
        for api_version, kind in kinds
    ]
