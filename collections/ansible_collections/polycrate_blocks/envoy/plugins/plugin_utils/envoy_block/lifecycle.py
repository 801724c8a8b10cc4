"""What install prunes and uninstall removes, decided from the plan and what the cluster reports.

Only objects that carry the block instance's ownership labels are ever candidates; the order is the
plan's delete order (Gateways first, network policies last), so uninstall is "prune against nothing".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .plan import DIGEST_ANNOTATION, Phase
from .release import differences as release_differences
from .release import image_problems, installed_version, upgrade_step

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
    ("operator.victoriametrics.com/v1beta1", "VMServiceScrape", Phase.MONITORING),
    ("operator.victoriametrics.com/v1beta1", "VMRule", Phase.MONITORING),
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
        labelled = ownership_labels.items() <= (meta.get("labels") or {}).items()
        if (meta.get("namespace"), meta.get("name")) in ours and labelled:
            continue
        tenants.append(f"{meta.get('namespace')}/{meta.get('name')}")
    return sorted(tenants)


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


def status_queries(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The lookups `status` makes: each planned object of a STATUS_KINDS kind, by name, and the proxies."""
    return [
        {"api_version": e["api_version"], "kind": e["kind"], "name": e["name"], "namespace": e["namespace"]}
        for e in plan["objects"]
        if e["kind"] in STATUS_KINDS
    ] + [proxies_query()]


def status_rows(
    plan: Mapping[str, Any], found: Iterable[Mapping[str, Any]], deployment: Mapping[str, Any] | None
) -> list[dict[str, Any]]:
    """One row per thing a healthy install has: controller, classes, Gateways (+address), policies."""
    rows: list[dict[str, Any]] = []
    if plan["controller"]["install"] or deployment is not None:
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
        elif kind in MONITORING_KINDS:
            ok, detail = True, "present"
        else:
            ok, detail = _policy_accepted(obj)
        rows.append({"what": kind, "name": entry["name"], "ok": ok, "detail": detail})
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


# Kinds whose CRDs other components install; install checks they are served before touching anything.
THIRD_PARTY = {
    "operator.victoriametrics.com": (
        "metrics.vmpodscrape.enabled and metrics.rules.enabled need the VictoriaMetrics operator (its CRDs)"
    ),
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


# Kinds whose status install reads with the cluster's state: a no-change run that finds them settled
# needs no wait afterwards.
STATUS_READ_KINDS = ("GatewayClass", "Gateway")


def _holds(want: Any, live: Any) -> bool:
    """Whether `live` has every value `want` sets: maps may hold more keys (the API server's defaults,
    other owners' fields), lists must match element by element (server-side apply replaces or merges
    them as a whole), scalars must be equal and of the same JSON type."""
    if isinstance(want, Mapping):
        return isinstance(live, Mapping) and all(k in live and _holds(v, live[k]) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(live, list) and len(want) == len(live) and all(map(_holds, want, live))
    if isinstance(want, bool) or isinstance(live, bool):
        return want is live
    if isinstance(want, int | float) and isinstance(live, int | float):
        return want == live
    return type(want) is type(live) and bool(want == live)


def unchanged(want: Mapping[str, Any], live: Mapping[str, Any] | None) -> bool:
    """Whether server-side applying `want` (a plan definition, digest-stamped) would change nothing the
    block sets: the cluster holds the manifest the block last applied (same digest, so no field the plan
    stopped setting is left to remove) and nobody changed or removed a value of it since. Being deleted
    counts as changed."""
    if live is None or (live.get("metadata") or {}).get("deletionTimestamp"):
        return False
    digest = ((live.get("metadata") or {}).get("annotations") or {}).get(DIGEST_ANNOTATION)
    return digest == want["metadata"]["annotations"][DIGEST_ANNOTATION] and _holds(want, live)


def install_lookups(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Everything install reads before it writes, for one k8s_list run (metadata only unless said), each
    query tagged with its `purpose`: the namespace, the CRDs (their digests and source), the objects this
    instance owns, whole (what prune removes: the objects this run applies are rendered, so listing before
    applying finds the same leftovers; what is unchanged; the classes' and Gateways' status), the kinds
    other components provide (served or not), and, when the block installs the controller, helm's release
    record and the controller's Deployment."""
    selector = list(plan["ownership_selector"])
    queries: list[dict[str, Any]] = [
        {"api_version": "v1", "kind": "Namespace", "name": plan["namespace"]["name"], "purpose": "namespace"},
        {"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "purpose": "crds"},
    ]
    # Whole objects: install compares each with the plan's (`unchanged`); none of these kinds is a Secret.
    queries += [{**q, "label_selectors": selector, "purpose": "owned", "metadata_only": False} for q in owned_kinds()]
    queries += [{**q, "label_selectors": selector, "purpose": "third_party"} for q in third_party_kinds(plan)]
    queries.append({**proxies_query(), "purpose": "proxies"})
    if plan["controller"]["install"]:
        helm, namespace = plan["helm"], plan["namespace"]["name"]
        queries += [
            {
                "api_version": "v1",
                "kind": "Secret",
                "namespace": namespace,
                "label_selectors": ["owner=helm", f"name={helm['name']}"],
                "helm_release": True,
                "metadata_only": False,
                "purpose": "release",
            },
            {
                "api_version": "apps/v1",
                "kind": "Deployment",
                "name": plan["controller"]["deployment"],
                "namespace": namespace,
                "metadata_only": False,
                "purpose": "controller",
            },
        ]
    return queries


def _settled(obj: Mapping[str, Any] | None, condition: str) -> bool:
    """The condition holds for the object's current generation (not a stale report of an older spec)."""
    if obj is None:
        return False
    generation = (obj.get("metadata") or {}).get("generation")
    status = obj.get("status") or {}
    if status.get("observedGeneration", generation) != generation:  # a Deployment's rollout not yet seen
        return False
    for cond in status.get("conditions") or []:
        if cond.get("type") == condition:
            return bool(cond.get("status") == "True" and cond.get("observedGeneration", generation) == generation)
    return False


def _namespace_apply(plan: Mapping[str, Any], live: Mapping[str, Any] | None) -> bool:
    """Create the namespace when it is missing; re-apply the block's own (it carries the ownership labels)
    only when it lacks a planned label or annotation. One that existed before the block is used, never
    adopted: uninstall deletes only a namespace the block created."""
    if not plan["namespace"]["create"]:
        return False
    if live is None:
        return True
    want = next(e["definition"] for e in plan["objects"] if e["phase"] == "namespace")["metadata"]
    meta = live.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    ours = plan["ownership_labels"].items() <= labels.items()
    # The digest annotation is the plan's own stamp, not something a namespace must carry to be ours.
    wanted_annotations = {k: v for k, v in (want.get("annotations") or {}).items() if k != DIGEST_ANNOTATION}
    complete = (
        want.get("labels") or {}
    ).items() <= labels.items() and wanted_annotations.items() <= annotations.items()
    return ours and not complete


def install_state(results: Iterable[Mapping[str, Any]], plan: Mapping[str, Any], crds_current: bool) -> dict[str, Any]:
    """What install decides from install_lookups' results before it writes anything:
    `problems` (why it must stop, each with what to do: kinds not served, a namespace it may not create),
    `namespace_exists`, `namespace_apply`, `crds` (the live CRDs' metadata, for `crds.stale`),
    `crds_current` (as given: the cluster holds every CRD of the configured source), `helm_changes` (why
    the release differs from the plan's: empty when helm would change nothing), `helm_needed`,
    `controller_ready`, `settled` (the controller Available and every planned GatewayClass and Gateway
    holding its wait condition for its current generation: a run that then changes nothing need not
    wait), `apply_files` (the plan's objects, but the namespace, that are not `unchanged`, in plan order:
    only they are sent), `leftovers` (owned objects the plan no longer renders, in delete order: the
    objects this run applies are rendered, so listing before applying finds the same) and `gateways` (the
    planned Gateways as read, for the summary), `upgrade` (release.upgrade_step from the controller the
    cluster runs to chart.version: a refused downgrade is one of the `problems`) and `rollout` (what is
    still rolling, as read: the controller, proxies not yet on their Deployment's current Envoy)."""
    by: dict[str, list[Mapping[str, Any]]] = {p: [] for p in ("namespace", "crds", "owned", "third_party", "proxies")}
    release: Mapping[str, Any] | None = None
    deployment: Mapping[str, Any] | None = None
    for result in results:
        purpose = str(result["item"]["purpose"])
        if purpose == "release":
            release = result.get("release")
        elif purpose == "controller":
            deployment = next(iter(result["resources"]), None)
        else:
            by[purpose].append(result)
    namespace = next((o for r in by["namespace"] for o in r["resources"]), None)
    problems = []
    missing = [r["item"] for r in by["third_party"] if not r["api_found"]]
    if missing:
        needs = "; ".join(dict.fromkeys(str(m["needs"]) for m in missing))
        problems.append(
            f"The cluster does not serve {', '.join(str(m['kind']) for m in missing)}: {needs}. Install it first, "
            "or switch the feature off."
        )
    if namespace is None and not plan["namespace"]["create"]:
        problems.append(
            f"Namespace {plan['namespace']['name']} does not exist and create_namespace is false: create it first "
            "or set create_namespace: true."
        )
    install = bool(plan["controller"]["install"])
    upgrade = upgrade_step(
        installed_version(release, deployment),
        str(plan["helm"]["chart_version"]),
        bool(plan["controller"].get("allow_downgrade")),
    )
    if install:
        problems += image_problems(
            str(plan["helm"]["chart_version"]), str(plan["helm"]["values"]["global"]["images"]["envoyGateway"]["image"])
        )
        problems += upgrade["problems"]
    helm_changes = release_differences(release, plan["helm"]) if install else []
    controller_ready = not install or _settled(deployment, "Available")
    owned = [o for r in by["owned"] for o in r["resources"]]
    live = {_ref(o): o for o in owned}
    status_objects = [e for e in plan["objects"] if e["kind"] in STATUS_READ_KINDS]
    settled = controller_ready and all(
        _settled(live.get(_ref(e["definition"])), str(e["wait_condition"])) for e in status_objects
    )
    return {
        "problems": problems,
        "namespace_exists": namespace is not None,
        "namespace_apply": _namespace_apply(plan, namespace),
        "crds": [o for r in by["crds"] for o in r["resources"]],
        "crds_current": crds_current,
        "helm_changes": helm_changes,
        "helm_needed": install and bool(helm_changes),
        "controller_ready": controller_ready,
        "settled": settled,
        "apply_files": [
            e["file"]
            for e in plan["objects"]
            if e["phase"] != "namespace" and not unchanged(e["definition"], live.get(_ref(e["definition"])))
        ],
        "leftovers": leftovers(owned, plan, plan["ownership_labels"]),
        "gateways": [
            live[ref] for e in status_objects if e["kind"] == "Gateway" and (ref := _ref(e["definition"])) in live
        ],
        "upgrade": upgrade,
        "rollout": rollout_lines(deployment, [o for r in by["proxies"] for o in r["resources"]]),
    }


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


def gateway_line(gateway: Mapping[str, Any]) -> str:
    """`Gateway <namespace>/<name>: <addresses>` for install's summary."""
    meta = gateway.get("metadata") or {}
    addresses = [str(a.get("value")) for a in (gateway.get("status") or {}).get("addresses") or []]
    return f"Gateway {meta.get('namespace')}/{meta.get('name')}: {', '.join(addresses) or 'no address yet'}"
