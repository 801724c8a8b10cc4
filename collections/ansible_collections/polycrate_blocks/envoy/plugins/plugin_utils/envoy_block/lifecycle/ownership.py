"""What the block owns: the kinds it can render, the ownership-label test (written once, here), the owned
objects a plan no longer renders, and the kinds other projects provide.

Only objects that carry the block instance's ownership labels are ever candidates for prune or uninstall; the
order is the plan's delete order (Gateways first, network policies last), so uninstall is "prune against
nothing"."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .. import builder
from ..plan import Phase, Plan

# Every kind the block can render, with its phase, as the components' steps declare them (the Namespace aside:
# created and removed only on request, by name, never listed by the ownership labels): install lists these
# to find what it owns, uninstall to remove it.
OWNED_KINDS: tuple[tuple[str, str, Phase], ...] = tuple(
    sorted(
        ((api, kind, phase) for (api, kind), phase in builder.renderable_kinds().items() if kind != "Namespace"),
        key=lambda row: (row[2].delete_rank, row[0], row[1]),
    )
)


def owned_kinds() -> list[dict[str, str]]:
    return [{"api_version": api, "kind": kind} for api, kind, _ in OWNED_KINDS]


def owns(obj: Mapping[str, Any] | None, ownership_labels: Mapping[str, str]) -> bool:
    """Whether the object is this block instance's: it carries every ownership label with its value. The one
    ownership test: prune, uninstall, the tenant check and the namespace all ask it."""
    labels = ((obj or {}).get("metadata") or {}).get("labels") or {}
    return obj is not None and ownership_labels.items() <= labels.items()


def ref(obj: Mapping[str, Any]) -> tuple[str, str, str | None, str]:
    meta = obj.get("metadata", {})
    return str(obj.get("apiVersion")), str(obj.get("kind")), meta.get("namespace"), str(meta.get("name"))


def leftovers(
    found: Iterable[Mapping[str, Any]], plan: Plan | None, ownership_labels: Mapping[str, str]
) -> list[dict[str, Any]]:
    """Owned objects the plan does not render (all owned objects when plan is None), in delete order."""
    wanted = {ref(step.obj) for step in plan.steps} if plan else set()
    rank = {(api, kind): phase.delete_rank for api, kind, phase in OWNED_KINDS}
    out = []
    for obj in found:
        key = ref(obj)
        if key[:2] not in rank or not owns(obj, ownership_labels) or key in wanted:
            continue
        meta = {"name": key[3], **({"namespace": key[2]} if key[2] else {})}
        out.append(
            {
                "api_version": key[0],
                "kind": key[1],
                "namespace": key[2],
                "name": key[3],
                "delete_rank": rank[key[:2]],
                # What kubernetes.core.k8s (state: absent) takes, so one module run deletes a list in order.
                "ref": {"apiVersion": key[0], "kind": key[1], "metadata": meta},
            }
        )
    return sorted(out, key=lambda r: (r["delete_rank"], r["kind"], r["namespace"] or "", r["name"]))


# Kinds whose CRDs other components install; install checks they are served before touching anything.
THIRD_PARTY = {
    "operator.victoriametrics.com": (
        "metrics.vmpodscrape.enabled and metrics.rules.enabled need the VictoriaMetrics operator (its CRDs)"
    ),
    "cilium.io": "network_policy.provider cilium needs Cilium's CRDs",
    "projectcalico.org": "network_policy.provider calico needs the Calico API server (projectcalico.org/v3)",
}


def third_party_kinds(plan: Plan) -> list[dict[str, str]]:
    """The plan's kinds that the block does not install the CRDs of, with what provides them."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for step in plan.steps:
        group = step.api_version.rpartition("/")[0]
        if group in THIRD_PARTY:
            out[(step.api_version, step.kind)] = {
                "api_version": step.api_version,
                "kind": step.kind,
                "needs": THIRD_PARTY[group],
            }
    return [out[key] for key in sorted(out)]


def block_field_manager(plan: Plan) -> str:
    """The field manager install applies with by default (envoy_apply_field_manager: polycrate-<block name>):
    what else applied the Gateway API CRDs is another owner (crd_owners)."""
    return f"polycrate-{plan.ownership_labels['app.kubernetes.io/instance']}"
