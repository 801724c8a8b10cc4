"""What `status` reads and how it judges it: one row per thing a healthy install has."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import advisories
from ..components import controller
from ..plan import Plan
from ..release import installed_version
from .ownership import ref


def _condition(obj: Mapping[str, Any], kind: str) -> tuple[bool, str]:
    return _find_condition((obj.get("status") or {}).get("conditions") or [], kind)


def _find_condition(conditions: Iterable[Mapping[str, Any]], kind: str) -> tuple[bool, str]:
    for cond in conditions:
        if cond.get("type") == kind:
            return cond.get("status") == "True", str(cond.get("reason", ""))
    return False, "no status yet"


def _policy_accepted(obj: Mapping[str, Any]) -> tuple[bool, str]:
    ancestors = (obj.get("status") or {}).get("ancestors") or []
    if not ancestors:
        return False, "no status yet"
    # Policy status is per ancestor (status.ancestors[].conditions), not top-level conditions.
    states = [_find_condition(a.get("conditions") or [], "Accepted") for a in ancestors]
    return all(ok for ok, _ in states), ", ".join(reason for _, reason in states)


# What `status` reports on, besides the controller: every one the plan renders.
# The monitoring objects carry no status of their own (the VictoriaMetrics operator keeps none on them that
# says the scraper or vmalert took them): reported as present or not found.
MONITORING_KINDS = ("VMPodScrape", "VMServiceScrape", "VMRule")

STATUS_KINDS = (
    "GatewayClass",
    "Gateway",
    "ClientTrafficPolicy",
    "BackendTrafficPolicy",
    "EnvoyExtensionPolicy",
    *MONITORING_KINDS,
)


def status_queries(plan: Plan) -> list[dict[str, Any]]:
    """The lookups `status` makes: each planned object of a STATUS_KINDS kind, by name, and the proxies."""
    return [
        {"api_version": s.api_version, "kind": s.kind, "name": s.name, "namespace": s.namespace}
        for s in plan.ordered()
        if s.kind in STATUS_KINDS
    ] + [proxies_query()]


def status_rows(
    plan: Plan, found: Iterable[Mapping[str, Any]], deployment: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """One row per thing a healthy install has: controller, classes, Gateways (+address), policies."""
    rows: list[dict[str, Any]] = []
    if plan.controller.install or deployment is not None:
        ready = (deployment or {}).get("status", {}).get("readyReplicas", 0)
        wanted = (deployment or {}).get("spec", {}).get("replicas", 1)
        rolled = deployment is None or rolled_out(deployment)
        version = installed_version(None, deployment) or "unknown version"
        rows.append(
            {
                "what": "controller",
                "name": "envoy-gateway",
                # Scaled to zero is stopped, not healthy: nothing reconciles the Gateways.
                "ok": deployment is not None and ready >= max(wanted, 1) and rolled,
                "detail": (f"{ready}/{wanted} ready, {version}" + ("" if rolled else ", rolling out"))
                if deployment
                else "Deployment not found",
            }
        )
    rows += proxy_rows([o for o in found if is_proxy(o)])
    index = {ref(o)[1:]: o for o in found}
    for step in plan.ordered():
        kind = step.kind
        obj = index.get((kind, step.namespace, step.name))
        if kind not in STATUS_KINDS:
            continue
        if obj is None:
            rows.append({"what": kind, "name": step.name, "ok": False, "detail": "not found"})
            continue
        if kind == "GatewayClass":
            ok, detail = _condition(obj, "Accepted")
        elif kind == "Gateway":
            ok, detail = _condition(obj, "Programmed")
            addresses = [a.get("value") for a in (obj.get("status") or {}).get("addresses") or []]
            detail = f"{detail}; address {', '.join(addresses) or 'none'}"
        elif kind in MONITORING_KINDS:
            ok, detail = True, "present"
        else:
            ok, detail = _policy_accepted(obj)
        rows.append({"what": kind, "name": step.name, "ok": ok, "detail": detail})
    return rows


PROXY_SELECTOR = ["app.kubernetes.io/managed-by=envoy-gateway", "app.kubernetes.io/component=proxy"]


def proxies_query() -> dict[str, Any]:
    """The proxy Deployments Envoy Gateway made, in every namespace (GatewayNamespace mode puts them
    beside their Gateways): their Envoy image and rollout show how far an upgrade has got."""
    return {"api_version": "apps/v1", "kind": "Deployment", "label_selectors": PROXY_SELECTOR, "metadata_only": False}


def is_proxy(obj: Mapping[str, Any]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    wanted = dict(item.split("=", 1) for item in PROXY_SELECTOR)
    return obj.get("kind") == "Deployment" and wanted.items() <= labels.items()


def rolled_out(deployment: Mapping[str, Any]) -> bool:
    """The Deployment controller has seen the current spec and every replica runs it, available."""
    meta, spec, status = (deployment.get(k) or {} for k in ("metadata", "spec", "status"))
    wanted = spec.get("replicas", 1)
    return bool(
        status.get("observedGeneration") == meta.get("generation")
        and status.get("updatedReplicas", 0) == wanted
        and status.get("availableReplicas", 0) == wanted
        and status.get("replicas", 0) == wanted  # no pod of the old ReplicaSet left
    )


def envoy_image(deployment: Mapping[str, Any]) -> str:
    containers = ((deployment.get("spec") or {}).get("template") or {}).get("spec", {}).get("containers") or []
    return str(next((c.get("image") for c in containers if c.get("name") == "envoy"), "unknown image"))


def proxy_rows(proxies: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One row per proxy Deployment: its Envoy image, and whether its pods all run it yet (after an
    upgrade the new controller changes the image, and the proxies roll)."""
    rows = []
    for proxy in sorted(proxies, key=lambda p: str((p.get("metadata") or {}).get("name"))):
        status, wanted = proxy.get("status") or {}, (proxy.get("spec") or {}).get("replicas", 1)
        done = rolled_out(proxy)
        detail = f"{envoy_image(proxy)}, {status.get('updatedReplicas', 0)}/{wanted} updated"
        rows.append(
            {
                "what": "proxies",
                "name": str((proxy.get("metadata") or {}).get("name")),
                "ok": done,
                "detail": detail if done else f"rolling to {detail}",
            }
        )
    return rows


def rollout_lines(deployment: Mapping[str, Any] | None, proxies: Iterable[Mapping[str, Any]]) -> list[str]:
    """What is still rolling after an upgrade (controller, proxies), for install's and plan's summary."""
    lines = []
    if deployment is not None and not rolled_out(deployment):
        lines.append(f"controller envoy-gateway rolling out to {installed_version(None, deployment)}")
    lines += [f"proxies/{r['name']}: {r['detail']}" for r in proxy_rows(proxies) if not r["ok"]]
    return lines


def status_table(rows: list[dict[str, Any]]) -> list[str]:
    width = max([len(f"{r['what']}/{r['name']}") for r in rows] + [10])
    lines = [f"{'OBJECT':<{width}}  STATE      DETAIL"]
    lines += [
        f"{r['what'] + '/' + r['name']:<{width}}  {'healthy' if r['ok'] else 'UNHEALTHY':<9}  {r['detail']}"
        for r in rows
    ]
    return lines


# The container of each pod that runs a release of the advisory table: the controller's, and the proxies' Envoy.
RUNNING = (("envoy-gateway", advisories.ENVOY_GATEWAY), ("envoy", advisories.ENVOY))


def pod_queries(plan: Plan) -> list[dict[str, Any]]:
    """The controller's pods and the proxies' (every namespace): the images they run, for the advisories."""
    return [
        {
            "api_version": "v1",
            "kind": "Pod",
            "namespace": plan.namespace.name,
            "label_selectors": list(controller.POD_SELECTOR),
            "metadata_only": False,
        },
        {"api_version": "v1", "kind": "Pod", "label_selectors": list(PROXY_SELECTOR), "metadata_only": False},
    ]


def running_images(pods: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], int]:
    """(product, image) -> how many pods run it, from each RUNNING container: the image the runtime reports
    (containerStatuses), else the spec's (a pod not started yet). A pod two queries returned counts once."""
    counts: dict[tuple[str, str], int] = {}
    products = dict(RUNNING)
    unique = {
        (str((p.get("metadata") or {}).get("namespace")), str((p.get("metadata") or {}).get("name"))): p for p in pods
    }
    for pod in unique.values():
        spec = {c.get("name"): c.get("image") for c in (pod.get("spec") or {}).get("containers") or []}
        ran = {c.get("name"): c.get("image") for c in (pod.get("status") or {}).get("containerStatuses") or []}
        for container, product in products.items():
            image = ran.get(container) or spec.get(container)
            if image:
                counts[(product, str(image))] = counts.get((product, str(image)), 0) + 1
    return counts


def advisory_lines(pods: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per image a pod runs that has known issues (advisories), naming each and its first fix."""
    lines = []
    for (product, image), count in sorted(running_images(pods).items()):
        tag = image.split("@", 1)[0].rpartition(":")[2]
        found = advisories.findings(product, tag)
        if found:
            lines.append(f"{count} pod(s) run {image}: {found}")
    return lines


def status_lookups(plan: Plan) -> list[dict[str, Any]]:
    """Everything `status` reads, for one k8s_list run: the planned objects it reports on and the proxies
    (status_queries), the controller's Deployment, and the controller's and proxies' pods (pod_queries), each
    query tagged with its `purpose`."""
    return (
        [{**q, "purpose": "objects"} for q in status_queries(plan)]
        + [
            {
                "api_version": "apps/v1",
                "kind": "Deployment",
                "name": plan.controller.deployment,
                "namespace": plan.namespace.name,
                "purpose": "controller",
            }
        ]
        + [{**q, "purpose": "pods"} for q in pod_queries(plan)]
    )


@dataclass(frozen=True)
class StatusReport:
    """The health table: one row per thing a healthy install has, its lines, and whether all are healthy."""

    rows: tuple[dict[str, Any], ...]
    # Known issues of the releases the pods run (advisory_lines): reported, not unhealthy (what runs still
    # serves; moving to a fixed release is the operator's change).
    advisories: tuple[str, ...] = ()

    @property
    def healthy(self) -> bool:
        return all(r["ok"] for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        lines = status_table(list(self.rows))
        if self.advisories:
            lines += ["Known issues of what runs (docs/security.md#known-vulnerable-releases):", *self.advisories]
        return {"rows": list(self.rows), "lines": lines, "healthy": self.healthy, "advisories": list(self.advisories)}


def status(plan: Plan, results: Iterable[Mapping[str, Any]]) -> StatusReport:
    """The report from status_lookups' results."""
    found: list[Mapping[str, Any]] = []
    pods: list[Mapping[str, Any]] = []
    deployment: Mapping[str, Any] | None = None
    for result in results:
        purpose = result["item"]["purpose"]
        if purpose == "controller":
            deployment = next(iter(result.get("resources") or []), None)
        elif purpose == "pods":
            pods += result.get("resources") or []
        else:
            found += result.get("resources") or []
    return StatusReport(tuple(status_rows(plan, found, deployment)), tuple(advisory_lines(pods)))
