"""What uninstall must know before it removes anything: tenants on the block's classes, the proxies the
controller made for the block's Gateways."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..plan import Plan
from . import crd_owners
from .ownership import block_field_manager, leftovers, owned_kinds, owns


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
# The wait for the namespace's pods leaves finished ones out: the namespace controller deletes a Succeeded or
# Failed pod without waiting for a grace period (it estimates none for them), and certgen's pod stays until
# its Job's ttlSecondsAfterFinished (30 s): an uninstall soon after an install waited up to that long for it.
FINISHED_PODS_LEFT_OUT = ("status.phase!=Succeeded", "status.phase!=Failed")

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


def uninstall_lookups(plan: Plan) -> list[dict[str, Any]]:
    """Everything uninstall reads before it removes anything, for one k8s_list run, each query tagged with its
    `purpose`: the objects this instance owns (by its ownership labels), every Gateway (a tenant's on one of
    the block's classes stops uninstall), the controller's Deployment (it must run to remove the proxies) and
    the namespace (removed only when it carries the ownership labels); with uninstall.remove_crds, the CRDs'
    metadata and managers (another owner's Gateway API CRDs are kept: crd_owners.removal)."""
    selector = plan.ownership_selector
    crd_query = {
        "api_version": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "purpose": "crds",
        "metadata_only": True,
        "managed_fields": True,
    }
    return [
        *([crd_query] if plan.crds.remove_on_uninstall else []),
        *({**q, "label_selectors": selector, "purpose": "owned", "metadata_only": True} for q in owned_kinds()),
        {"api_version": "gateway.networking.k8s.io/v1", "kind": "Gateway", "purpose": "gateways"},
        {
            "api_version": "apps/v1",
            "kind": "Deployment",
            "name": plan.controller.deployment,
            "namespace": plan.helm.namespace,
            "purpose": "controller",
        },
        {"api_version": "v1", "kind": "Namespace", "name": plan.namespace.name, "purpose": "namespace"},
    ]


@dataclass(frozen=True)
class UninstallObserved:
    """What uninstall_lookups found, by purpose."""

    owned: tuple[Mapping[str, Any], ...]
    gateways: tuple[Mapping[str, Any], ...]
    controller: Mapping[str, Any] | None
    namespace: Mapping[str, Any] | None
    crds: tuple[Mapping[str, Any], ...] = ()

    @classmethod
    def from_results(cls, results: Iterable[Mapping[str, Any]]) -> UninstallObserved:
        purposes = ("owned", "gateways", "controller", "namespace", "crds")
        by: dict[str, list[Mapping[str, Any]]] = {p: [] for p in purposes}
        for result in results:
            by[str(result["item"]["purpose"])] += list(result.get("resources") or [])
        return cls(
            owned=tuple(by["owned"]),
            gateways=tuple(by["gateways"]),
            controller=next(iter(by["controller"]), None),
            namespace=next(iter(by["namespace"]), None),
            crds=tuple(by["crds"]),
        )

    def with_controller(self, controller: Mapping[str, Any] | None) -> UninstallObserved:
        return UninstallObserved(self.owned, self.gateways, controller, self.namespace, self.crds)


@dataclass(frozen=True)
class UninstallDecision:
    """What uninstall does, in this order, decided before it removes anything. With `refusals` it removes
    nothing; with `await_controller` a controller pod is on its way: read the controller again and decide
    again (with `controller_waited` once the wait is over)."""

    refusals: tuple[str, ...] = ()
    await_controller: bool = False
    # Deleted first, each waited for, while the controller runs to remove their proxies.
    gateways: tuple[dict[str, Any], ...] = ()
    # k8s_list queries: the proxy Services the controller must remove, each waited for in the module run
    # (wait_absent; empty: no wait); then, if any is left, every proxy object it left (the controller removes
    # proxies only as leader).
    proxy_services: tuple[dict[str, Any], ...] = ()
    proxies: tuple[dict[str, Any], ...] = ()
    # The other owned objects, in the plan's delete order.
    others: tuple[dict[str, Any], ...] = ()
    uninstall_helm: bool = False
    remove_crds: bool = False
    # With remove_crds: the CRD settings (plan.crds' shape) the CRDs to delete are read by, and what is kept
    # and why (another owner's Gateway API CRDs: crd_owners.removal).
    crd_settings: Mapping[str, Any] | None = None
    crds_kept: str = ""
    # With remove_crds and the CRDs from gateway-crds-helm: render it for their names, after the registry
    # login when credentials are configured.
    render_crd_chart: bool = False
    login: bool = False
    delete_namespace: bool = False
    # k8s_list queries: the pods left in that namespace, waited for (wait_absent) before it is deleted. The namespace
    # controller, finding pods still terminating, looks again only after their grace period (Envoy Gateway
    # gives a proxy drainTimeout + 300 s), long after they are gone; gone pods let it finish at once.
    namespace_pods: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "refusals": list(self.refusals),
            "await_controller": self.await_controller,
            "gateways": list(self.gateways),
            "proxy_services": list(self.proxy_services),
            "proxies": list(self.proxies),
            "others": list(self.others),
            "uninstall_helm": self.uninstall_helm,
            "remove_crds": self.remove_crds,
            "crd_settings": dict(self.crd_settings or {}),
            "crds_kept": self.crds_kept,
            "render_crd_chart": self.render_crd_chart,
            "login": self.login,
            "delete_namespace": self.delete_namespace,
            "namespace_pods": list(self.namespace_pods),
        }


def _ready(deployment: Mapping[str, Any] | None) -> bool:
    return int(((deployment or {}).get("status") or {}).get("readyReplicas") or 0) > 0


def _starting(deployment: Mapping[str, Any] | None) -> bool:
    """A pod is on its way (a rollout, a restart): not ready yet, but the Deployment wants one. One scaled to
    zero, or missing, never will be."""
    return (
        deployment is not None and not _ready(deployment) and int((deployment.get("spec") or {}).get("replicas", 1)) > 0
    )


def decide_uninstall(plan: Plan, observed: UninstallObserved, controller_waited: bool = False) -> UninstallDecision:
    """What uninstall removes and in what order, or why it must not start.

    Refused while a tenant's Gateway uses one of the block's GatewayClasses (removing the class would stop
    its traffic), and, when waits are on and the block manages the controller, while the controller has no
    ready pod and Gateways are to be deleted: Envoy Gateway removes a Gateway's proxies (Deployment, Service,
    the LoadBalancer address) only while it runs, so Gateways deleted while it is down leave them for good."""
    labels = plan.ownership_labels
    owned = leftovers(observed.owned, None, labels)
    classes = [r["name"] for r in owned if r["kind"] == "GatewayClass"]
    if tenants := tenant_gateways(observed.gateways, owned, labels):
        return UninstallDecision(
            refusals=(
                f"Gateways {', '.join(tenants)} (not created by this block) still use GatewayClass "
                f"{', '.join(classes)}. Their owners must remove or move them first: deleting the classes would "
                "stop their traffic. Nothing was removed.",
            )
        )
    gateways = [r for r in owned if r["kind"] == "Gateway"]
    wait = plan.wait.enabled
    if wait and plan.controller.install and gateways and not _ready(observed.controller):
        if _starting(observed.controller) and not controller_waited:
            return UninstallDecision(await_controller=True)
        return UninstallDecision(
            refusals=(
                f"The Envoy Gateway controller {plan.helm.namespace}/{plan.controller.deployment} has "
                "no ready pod: deleting the Gateways now would leave their proxies (Deployments, Services, "
                "LoadBalancer addresses) behind, because only a running controller removes them. Start it (scale "
                "the Deployment to 1) and run uninstall again, or set wait.enabled: false to delete without "
                "waiting. Nothing was removed.",
            )
        )
    delete_namespace = owns(observed.namespace, labels)
    namespace = plan.namespace.name
    remove_crds = plan.crds.remove_on_uninstall
    crd_settings, kept = (
        crd_owners.removal(plan, observed.crds, block_field_manager(plan)) if remove_crds else (plan.crds.to_dict(), "")
    )
    render_crd_chart = remove_crds and not plan.crds.directory
    return UninstallDecision(
        gateways=tuple(r["ref"] for r in gateways),
        proxy_services=tuple({**q, "wait_absent": True} for q in proxy_queries(owned, services_only=True))
        if wait
        else (),
        proxies=tuple(proxy_queries(owned)),
        others=tuple(r["ref"] for r in owned if r["kind"] != "Gateway"),
        uninstall_helm=plan.controller.install,
        remove_crds=remove_crds,
        crd_settings=crd_settings,
        crds_kept=kept,
        render_crd_chart=render_crd_chart,
        login=render_crd_chart and plan.helm.auth is not None,
        delete_namespace=delete_namespace,
        namespace_pods=(
            {
                "api_version": "v1",
                "kind": "Pod",
                "namespace": namespace,
                "field_selectors": list(FINISHED_PODS_LEFT_OUT),
                "wait_absent": True,
            },
        )
        if delete_namespace and wait
        else (),
    )
