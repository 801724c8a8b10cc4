"""Whose the Gateway API CRDs are, and what install may do with them (issue 37).

Platforms install the Gateway API CRDs themselves: RKE2 1.37 through the Helm release
`rke2-gateway-api-crd` (rancher/rke2#11135, taking ownership), k3s through its `traefik-crd` chart, managed
clusters preinstall them. Applying the block's over theirs fights the owner, or loses to it on the
platform's next upgrade (envoyproxy/gateway#8991, rancher/rke2#10999). Before touching them, install reads
who owns them (`install_lookups` reads the CRDs' metadata with their managedFields' managers) and decides:

- nobody else owns them (absent, the block's own, or unmarked) -> apply;
- another owner, every one of its CRDs at least the required Gateway API release (its bundle-version
  annotation), of the configured channel (experimental CRDs serve a standard config too), and every CRD the
  configuration needs there -> leave them alone (install applies only Envoy Gateway's), and say so;
- another owner and older, of no version it can tell, of the standard channel for an experimental config,
  or lacking a needed CRD -> refuse before any change, naming the owner and the required release;
- `gateway_api_crds.take_ownership` -> apply over the owner, and say whose they were;
- `gateway_api_crds.install: false` -> the block touches none of them (not_managed).

Pure: the install_state action calls `ownership` between its one read and `decide_install`, which turns a
refusal into one of install's problems; the role applies the CRDs of `settings` only. Uninstall with
remove_crds deletes the Gateway API CRDs only when nobody else owns one of them (`removal`), whatever
take_ownership says: deleting them deletes every route in the cluster and breaks their owner.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .. import crds
from ..crds import CHANNEL_ANNOTATION, GATEWAY_API_GROUPS, SOURCE_ANNOTATION
from ..plan import Plan
from ..release import semver

BUNDLE_VERSION = "gateway.networking.k8s.io/bundle-version"
HELM_RELEASE = "meta.helm.sh/release-name"
HELM_NAMESPACE = "meta.helm.sh/release-namespace"
MANAGED_BY = "app.kubernetes.io/managed-by"
# Managers that are no owner: the API server's own writers (status, the CRD's Established condition).
NOT_OWNERS = ("kube-apiserver", "kube-controller-manager")


@dataclass(frozen=True)
class CrdOwnership:
    """`outcome`: apply | leave | refuse | take_over | not_managed; `owners`: who else owns the Gateway API
    CRDs, as read; `message`: what install reports (the problem when refused)."""

    outcome: str
    owners: tuple[str, ...]
    message: str

    @property
    def applies(self) -> bool:
        """Whether install applies the block's Gateway API CRDs."""
        return self.outcome in ("apply", "take_over")

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "owners": list(self.owners), "message": self.message}


def owners_of(crd: Mapping[str, Any], block_managers: Iterable[str]) -> list[str]:
    """Who, besides the block, owns `crd`: a Helm release (its annotations), a tool naming itself in
    app.kubernetes.io/managed-by, and server-side apply managers (managedFields, operation Apply). A CRD
    carrying the block's source stamp and applied by the block's manager only is the block's."""
    meta = crd.get("metadata") or {}
    annotations, labels = meta.get("annotations") or {}, meta.get("labels") or {}
    ours = set(block_managers)
    found: list[str] = []
    if HELM_RELEASE in annotations:
        where = annotations.get(HELM_NAMESPACE)
        found.append(f"Helm release {where + '/' if where else ''}{annotations[HELM_RELEASE]}")
    managed_by = labels.get(MANAGED_BY)
    if managed_by and managed_by != "Helm" and not (managed_by == "polycrate" and SOURCE_ANNOTATION in annotations):
        found.append(f"{managed_by} ({MANAGED_BY})")
    for entry in meta.get("managedFields") or []:
        manager = str(entry.get("manager", ""))
        if entry.get("operation") == "Apply" and manager and manager not in ours and manager not in NOT_OWNERS:
            found.append(f"server-side apply manager {manager}")
    return list(dict.fromkeys(found))


def decide(
    live: Iterable[Mapping[str, Any]],
    required: str,
    take_ownership: bool,
    block_managers: Iterable[str],
    *,
    channel: str = "standard",
    needed: Iterable[str] = (),
) -> CrdOwnership:
    """What install does with the Gateway API CRDs the cluster holds (see the module's docstring). `needed`:
    the Gateway API CRDs the configured release and channel need (crds.required)."""
    managers = tuple(block_managers)
    gateway_api = [c for c in live if (c.get("spec") or {}).get("group", _group(c)) in GATEWAY_API_GROUPS]
    foreign = [(c, who) for c in gateway_api if (who := owners_of(c, managers))]
    if not foreign:
        return CrdOwnership("apply", (), "")
    owners = tuple(dict.fromkeys(o for _, who in foreign for o in who))
    named = ", ".join(owners)
    if take_ownership:
        return CrdOwnership(
            "take_over",
            owners,
            f"gateway_api_crds.take_ownership: applying the Gateway API CRDs {required} over {named}; that "
            "owner may put its own back on its next upgrade",
        )
    versions = {str(_meta(c, "annotations").get(BUNDLE_VERSION, "")) for c, _ in foreign}
    parsed = [semver(v) for v in versions]
    oldest = min((p for p in parsed if p is not None), default=None)
    wanted = semver(required)
    recent = wanted is not None and oldest is not None and None not in parsed and oldest >= wanted
    found = ", ".join(sorted(v or "no bundle-version" for v in versions))
    held = {str((c.get("metadata") or {}).get("name", "")) for c in gateway_api}
    missing = [name for name in needed if name not in held]
    channels = {str(_meta(c, "annotations").get(CHANNEL_ANNOTATION, "")) for c, _ in foreign}
    narrower = channel == "experimental" and channels != {"experimental"}
    if recent and not missing and not narrower:
        return CrdOwnership(
            "leave",
            owners,
            f"the Gateway API CRDs belong to {named} (bundle {found}, at least {required}): left alone",
        )
    why = [] if recent else [f"are older than the {required} this release needs (found {found})"]
    if narrower:
        shown = ", ".join(sorted(c or "no channel" for c in channels))
        why.append(f"are of the {shown} channel, not the experimental one configured (gateway_api_crds.channel)")
    if missing:
        why.append(f"lack {', '.join(missing)}")
    return CrdOwnership(
        "refuse",
        owners,
        f"the Gateway API CRDs belong to {named} and {' and '.join(why)}: Envoy Gateway would fail on them. "
        f"Upgrade them through their owner to {required} or later, or set gateway_api_crds.take_ownership: true "
        "to apply the block's over them (the owner may put its own back on its next upgrade). Nothing was changed.",
    )


def ownership(plan: Plan, live: Iterable[Mapping[str, Any]], block_manager: str) -> CrdOwnership:
    """decide() for the plan's CRD settings (plan.crds) and the CRDs as install read them."""
    gateway_api = plan.crds.gateway_api
    if not gateway_api.install:
        return CrdOwnership(
            "not_managed", (), "gateway_api_crds.install: false: the Gateway API CRDs are left as found"
        )
    channel = gateway_api.channel
    needed = [
        name
        for name in crds.required(True, channel, plan.crds.envoy_gateway.version)
        if name.partition(".")[2] in GATEWAY_API_GROUPS
    ]
    required, take = gateway_api.version, gateway_api.take_ownership
    return decide(live, required, take, (block_manager,), channel=channel, needed=needed)


def settings(plan: Plan, decided: CrdOwnership) -> dict[str, Any]:
    """The CRD settings install reads, stamps and applies (plan.crds' shape, plain data for the role): the
    plan's, without the Gateway API CRDs when install leaves them to another owner."""
    return plan.crds.to_dict() if decided.applies else crds.without_gateway_api(plan.crds.to_dict())


def _meta(crd: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    return ((crd.get("metadata") or {}).get(key)) or {}


def _group(crd: Mapping[str, Any]) -> str:
    """The group from the CRD's name (<plural>.<group>) when only its metadata was read."""
    return str((crd.get("metadata") or {}).get("name", "")).partition(".")[2]


def removal(plan: Plan, live: Iterable[Mapping[str, Any]], block_manager: str) -> tuple[dict[str, Any], str]:
    """The CRD settings uninstall.remove_crds deletes by (plan.crds' shape), and what it keeps and why: the
    Gateway API CRDs stay when another owner marked one of them, taken over or not."""
    gateway_api = plan.crds.gateway_api
    decided = decide(live, gateway_api.version, False, (block_manager,))
    if not gateway_api.install or decided.outcome == "apply":
        return plan.crds.to_dict(), ""
    return crds.without_gateway_api(plan.crds.to_dict()), (
        f"the Gateway API CRDs belong to {', '.join(decided.owners)}: kept (uninstall.remove_crds removes the "
        "block's own CRDs only)"
    )
