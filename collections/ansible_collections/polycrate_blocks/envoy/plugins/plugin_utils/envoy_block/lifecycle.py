"""What install prunes and uninstall removes, decided from the plan and what the cluster reports.

Only objects that carry the block instance's ownership labels are ever candidates; the order is the
plan's delete order (Gateways first, network policies last), so uninstall is "prune against nothing".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .plan import Phase

# Every kind the block can render, with its phase: install lists these to find what it owns.
OWNED_KINDS: tuple[tuple[str, str, Phase], ...] = (
    ("gateway.networking.k8s.io/v1", "Gateway", Phase.GATEWAY),
    ("gateway.envoyproxy.io/v1alpha1", "ClientTrafficPolicy", Phase.POLICY),
    ("gateway.envoyproxy.io/v1alpha1", "BackendTrafficPolicy", Phase.POLICY),
    ("gateway.envoyproxy.io/v1alpha1", "EnvoyExtensionPolicy", Phase.POLICY),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy", Phase.POLICY),
    ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding", Phase.POLICY),
    ("gateway.envoyproxy.io/v1alpha1", "EnvoyProxy", Phase.PROXY_CONFIG),
    ("gateway.networking.k8s.io/v1", "GatewayClass", Phase.GATEWAYCLASS),
    ("operator.victoriametrics.com/v1beta1", "VMPodScrape", Phase.MONITORING),
    ("apps/v1", "Deployment", Phase.WAF),
    ("v1", "Service", Phase.WAF),
    ("v1", "ConfigMap", Phase.WAF),
    ("policy/v1", "PodDisruptionBudget", Phase.WAF),
    ("networking.k8s.io/v1", "NetworkPolicy", Phase.NETWORK),
    ("cilium.io/v2", "CiliumNetworkPolicy", Phase.NETWORK),
    ("cilium.io/v2", "CiliumClusterwideNetworkPolicy", Phase.NETWORK),
    ("projectcalico.org/v3", "NetworkPolicy", Phase.NETWORK),
    ("projectcalico.org/v3", "GlobalNetworkPolicy", Phase.NETWORK),
)


def owned_kinds() -> list[dict[str, str]]:
    return [{"api_version": api, "kind": kind} for api, kind, _ in OWNED_KINDS]


def _ref(obj: Mapping[str, Any]) -> tuple[str, str, str | None, str]:
    meta = obj.get("metadata", {})
    return str(obj.get("apiVersion")), str(obj.get("kind")), meta.get("namespace"), str(meta.get("name"))


def leftovers(
    found: Iterable[Mapping[str, Any]], plan: Mapping[str, Any] | None, ownership_labels: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Owned objects the plan does not render (all owned objects when plan is None), in delete order."""
    wanted = {_ref(o["definition"]) for o in plan["objects"]} if plan else set()
    rank = {(api, kind): phase.delete_rank for api, kind, phase in OWNED_KINDS}
    out = []
    for obj in found:
        labels = obj.get("metadata", {}).get("labels") or {}
        ref = _ref(obj)
        if ref[:2] not in rank or not ownership_labels.items() <= labels.items() or ref in wanted:
            continue
        meta = {"name": ref[3], **({"namespace": ref[2]} if ref[2] else {})}
        out.append(
            {
                "api_version": ref[0],
                "kind": ref[1],
                "namespace": ref[2],
                "name": ref[3],
                "delete_rank": rank[ref[:2]],
                # What kubernetes.core.k8s (state: absent) takes, so one module run deletes a list in order.
                "ref": {"apiVersion": ref[0], "kind": ref[1], "metadata": meta},
            }
        )
    return sorted(out, key=lambda r: (r["delete_rank"], r["kind"], r["namespace"] or "", r["name"]))


EG_LABEL = "gateway.envoyproxy.io"


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


# What `status` reports on, besides the controller: every one the plan renders.
STATUS_KINDS = ("GatewayClass", "Gateway", "ClientTrafficPolicy", "BackendTrafficPolicy", "EnvoyExtensionPolicy")


def status_queries(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lookups `status` makes: each planned object of a STATUS_KINDS kind, by name."""
    return [
        {"api_version": e["api_version"], "kind": e["kind"], "name": e["name"], "namespace": e["namespace"]}
        for e in plan["objects"]
        if e["kind"] in STATUS_KINDS
    ]


def status_rows(
    plan: Mapping[str, Any], found: Iterable[Mapping[str, Any]], deployment: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """One row per thing a healthy install has: controller, classes, Gateways (+address), policies."""
    rows: list[dict[str, Any]] = []
    if plan["controller"]["install"] or deployment is not None:
        ready = (deployment or {}).get("status", {}).get("readyReplicas", 0)
        wanted = (deployment or {}).get("spec", {}).get("replicas", 1)
        rows.append(
            {
                "what": "controller",
                "name": "envoy-gateway",
                # Scaled to zero is stopped, not healthy: nothing reconciles the Gateways.
                "ok": deployment is not None and ready >= max(wanted, 1),
                "detail": f"{ready}/{wanted} ready" if deployment else "Deployment not found",
            }
        )
    index = {_ref(o)[1:]: o for o in found}
    for entry in plan["objects"]:
        kind = entry["kind"]
        obj = index.get((kind, entry["namespace"], entry["name"]))
        if kind not in STATUS_KINDS:
            continue
        if obj is None:
            rows.append({"what": kind, "name": entry["name"], "ok": False, "detail": "not found"})
            continue
        if kind == "GatewayClass":
            ok, detail = _condition(obj, "Accepted")
        elif kind == "Gateway":
            ok, detail = _condition(obj, "Programmed")
            addresses = [a.get("value") for a in (obj.get("status") or {}).get("addresses") or []]
            detail = f"{detail}; address {', '.join(addresses) or 'none'}"
        else:
            ok, detail = _policy_accepted(obj)
        rows.append({"what": kind, "name": entry["name"], "ok": ok, "detail": detail})
    return rows


def status_table(rows: list[dict[str, Any]]) -> list[str]:
    width = max([len(f"{r['what']}/{r['name']}") for r in rows] + [10])
    lines = [f"{'OBJECT':<{width}}  STATE      DETAIL"]
    lines += [
        f"{r['what'] + '/' + r['name']:<{width}}  {'healthy' if r['ok'] else 'UNHEALTHY':<9}  {r['detail']}"
        for r in rows
    ]
    return lines


# Kinds whose CRDs other components install; install checks they are served before touching anything.
THIRD_PARTY = {
    "operator.victoriametrics.com": "metrics.vmpodscrape.enabled needs the VictoriaMetrics operator (its CRDs)",
    "cilium.io": "network_policy.provider cilium needs Cilium's CRDs",
    "projectcalico.org": "network_policy.provider calico needs the Calico API server (projectcalico.org/v3)",
}


def third_party_kinds(plan: Mapping[str, Any]) -> list[dict[str, str]]:
    """The plan's kinds that the block does not install the CRDs of, with what provides them."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for entry in plan["objects"]:
        group = str(entry["api_version"]).rpartition("/")[0]
        if group in THIRD_PARTY:
            out[(entry["api_version"], entry["kind"])] = {
                "api_version": entry["api_version"],
                "kind": entry["kind"],
                "needs": THIRD_PARTY[group],
            }
    return [out[key] for key in sorted(out)]


def install_lookups(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Everything install reads before it writes, for one k8s_list run (metadata only), each query tagged
    with its `purpose`: the namespace, the CRDs (their digests), the objects this instance owns (what
    prune removes: the objects this run applies are rendered, so listing before applying finds the same
    leftovers), and the kinds other components provide (served or not)."""
    selector = list(plan["ownership_selector"])
    queries: list[dict[str, Any]] = [
        {"api_version": "v1", "kind": "Namespace", "name": plan["namespace"]["name"], "purpose": "namespace"},
        {"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "purpose": "crds"},
    ]
    queries += [{**q, "label_selectors": selector, "purpose": "owned"} for q in owned_kinds()]
    queries += [{**q, "label_selectors": selector, "purpose": "third_party"} for q in third_party_kinds(plan)]
    return queries


def install_state(results: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """install_lookups' results by purpose, shaped as the separate lookups were: `namespace` (resources),
    `crds`, `owned` and `third_party` (results)."""
    by: dict[str, list[Mapping[str, Any]]] = {"namespace": [], "crds": [], "owned": [], "third_party": []}
    for result in results:
        by[str(result["item"]["purpose"])].append(result)
    namespace = list(by["namespace"][0]["resources"]) if by["namespace"] else []
    return {
        "namespace": {"resources": namespace},
        "crds": {"results": by["crds"]},
        "owned": {"results": by["owned"]},
        "third_party": {"results": by["third_party"]},
    }


def wait_queries(plan: Mapping[str, Any], wait: bool) -> list[dict[str, Any]]:
    """The plan's GatewayClasses and Gateways by name, each waiting for its condition (Accepted,
    Programmed) when `wait`: one k8s_list run that also returns the Gateways' addresses."""
    return [
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
