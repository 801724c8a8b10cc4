"""What install decides from its one read of the cluster before it writes anything."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..plan import DIGEST_ANNOTATION, Phase, Plan, Step
from ..release import differences as release_differences
from ..release import image_problems, installed_version, upgrade_step
from . import crd_owners
from .ownership import block_field_manager, leftovers, owned_kinds, owns, ref, third_party_kinds
from .status import proxies_query, rollout_lines
from .terminating import decide as namespace_gate
from .waits import controller_waits

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


def install_lookups(plan: Plan) -> list[dict[str, Any]]:
    """Everything install reads before it writes, for one k8s_list run (metadata only unless said), each
    query tagged with its `purpose`: the namespace, the CRDs (their digests and source), the objects this
    instance owns, whole (what prune removes: the objects this run applies are rendered, so listing before
    applying finds the same leftovers; what is unchanged; the classes' and Gateways' status), the kinds
    other components provide (served or not), and, when the block installs the controller, helm's release
    record and the controller's Deployment. The namespace whole: its status says what holds one being deleted."""
    selector = plan.ownership_selector
    queries: list[dict[str, Any]] = [
        {
            "api_version": "v1",
            "kind": "Namespace",
            "name": plan.namespace.name,
            "purpose": "namespace",
            "metadata_only": False,
        },
        # With their managedFields' managers: who else applied them (lifecycle.crd_owners).
        {
            "api_version": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "purpose": "crds",
            "managed_fields": True,
        },
    ]
    # Whole objects: install compares each with the plan's (`unchanged`); none of these kinds is a Secret.
    queries += [{**q, "label_selectors": selector, "purpose": "owned", "metadata_only": False} for q in owned_kinds()]
    queries += [{**q, "label_selectors": selector, "purpose": "third_party"} for q in third_party_kinds(plan)]
    queries.append({**proxies_query(), "purpose": "proxies"})
    if plan.controller.install:
        helm, namespace = plan.helm, plan.namespace.name
        queries += [
            {
                "api_version": "v1",
                "kind": "Secret",
                "namespace": namespace,
                "label_selectors": ["owner=helm", f"name={helm.name}"],
                "helm_release": True,
                "metadata_only": False,
                "purpose": "release",
            },
            {
                "api_version": "apps/v1",
                "kind": "Deployment",
                "name": plan.controller.deployment,
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


def _namespace_apply(plan: Plan, live: Mapping[str, Any] | None) -> bool:
    """Create the namespace when it is missing; re-apply the block's own (it carries the ownership labels)
    only when it lacks a planned label or annotation. One that existed before the block is used, never
    adopted: uninstall deletes only a namespace the block created."""
    if not plan.namespace.create:
        return False
    if live is None:
        return True
    want = next(s.definition for s in plan.steps if s.phase is Phase.NAMESPACE)["metadata"]
    meta = live.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    ours = owns(live, plan.ownership_labels)
    # The digest annotation is the plan's own stamp, not something a namespace must carry to be ours.
    wanted_annotations = {k: v for k, v in (want.get("annotations") or {}).items() if k != DIGEST_ANNOTATION}
    complete = (
        want.get("labels") or {}
    ).items() <= labels.items() and wanted_annotations.items() <= annotations.items()
    return ours and not complete


@dataclass(frozen=True)
class InstallObserved:
    """What install_lookups found, by purpose (the CRDs' metadata with their managedFields' managers)."""

    namespace: Mapping[str, Any] | None
    crds: tuple[Mapping[str, Any], ...]
    owned: tuple[Mapping[str, Any], ...]
    missing_kinds: tuple[Mapping[str, Any], ...]  # third-party kinds the cluster does not serve (their query)
    proxies: tuple[Mapping[str, Any], ...]
    release: Mapping[str, Any] | None
    controller: Mapping[str, Any] | None

    @classmethod
    def from_results(cls, results: Iterable[Mapping[str, Any]]) -> InstallObserved:
        by: dict[str, list[Mapping[str, Any]]] = {
            p: [] for p in ("namespace", "crds", "owned", "third_party", "proxies")
        }
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
        return cls(
            namespace=next((o for r in by["namespace"] for o in r["resources"]), None),
            crds=tuple(o for r in by["crds"] for o in r["resources"]),
            owned=tuple(o for r in by["owned"] for o in r["resources"]),
            missing_kinds=tuple(r["item"] for r in by["third_party"] if not r["api_found"]),
            proxies=tuple(o for r in by["proxies"] for o in r["resources"]),
            release=release,
            controller=deployment,
        )


@dataclass(frozen=True)
class InstallDecision:
    """What install decides from its one read before it writes anything:
    `problems` (why it must stop, each with what to do: kinds not served, a namespace it may not create,
    Gateway API CRDs of another owner that are older than the release needs),
    `namespace_exists`, `namespace_apply`, `crds` (the live CRDs' metadata, for `crds.stale`),
    `crds_current` (as given: the cluster holds every CRD of the configured source), `crd_owners` (whose
    the Gateway API CRDs are and what install does with them: lifecycle.crd_owners), `crd_settings` (the
    plan's CRD settings install reads and applies: without the Gateway API CRDs when another owner's are
    left alone), `helm_changes` (why
    the release differs from the plan's: empty when helm would change nothing), `helm_needed`,
    `controller_ready`, `settled` (the controller Available and every planned GatewayClass and Gateway
    holding its wait condition for its current generation: a run that then changes nothing need not
    wait), `apply_files` (the plan's objects, but the namespace, that are not `unchanged`, in plan order:
    only they are sent), `leftovers` (owned objects the plan no longer renders, in delete order: the
    objects this run applies are rendered, so listing before applying finds the same) and `gateways` (the
    planned Gateways as read, for the summary), `upgrade` (release.upgrade_step from the controller the
    cluster runs to chart.version: a refused downgrade is one of the `problems`) and `rollout` (what is
    still rolling, as read: the controller, proxies not yet on their Deployment's current Envoy), and
    `namespace_wait` (lifecycle.terminating: the namespace is still being deleted, a recent uninstall's: the
    queries to wait on until it is gone, after which install reads and decides again; empty otherwise).

    Then the role's to-do list, each entry one task's whole condition or input (the role combines nothing):
    `check_mode` (as given: plan, a dry run), `prepare` (anything before the plan's objects: helm, the CRDs
    or the namespace), `login` (the chart registry login, once per run: only when this run pulls a chart),
    `render_crd_chart` (the CRDs come from gateway-crds-helm and the cluster lacks some), `apply_early` and
    `apply_late` (the objects to send before and after helm, each `definitions` and `rollouts` in plan
    order: the network policies the controller's pods need go before it when helm runs, everything in one
    module run when it does not; nothing in a dry run into a namespace that does not exist yet),
    `wait_controller` (wait for the controller helm rolled, the previous one to stop and a stale lease) and
    `controller_waits` (the queries for those waits, waits.controller_waits: empty when not waiting)."""

    problems: tuple[str, ...]
    namespace_exists: bool
    namespace_apply: bool
    crds: tuple[Mapping[str, Any], ...]
    crds_current: bool
    crd_owners: Mapping[str, Any]
    crd_settings: Mapping[str, Any]
    helm_changes: tuple[str, ...]
    helm_needed: bool
    controller_ready: bool
    settled: bool
    apply_files: tuple[str, ...]
    leftovers: tuple[dict[str, Any], ...]
    gateways: tuple[Mapping[str, Any], ...]
    upgrade: Mapping[str, Any]
    rollout: tuple[str, ...]
    namespace_wait: tuple[dict[str, Any], ...]
    check_mode: bool = False
    prepare: bool = False
    login: bool = False
    render_crd_chart: bool = False
    apply_early: Mapping[str, list[Any]] = field(default_factory=lambda: _batch([], False))
    apply_late: Mapping[str, list[Any]] = field(default_factory=lambda: _batch([], False))
    wait_controller: bool = False
    controller_waits: tuple[dict[str, Any], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InstallDecision:
        """The decision again from what the install_state action returned (its other keys left aside)."""
        names = {f.name for f in fields(cls)}
        # Lists back to the tuples the decision holds; the two apply batches stay mappings of lists.
        plain: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names}
        return cls(**plain)


def _batch(steps: Iterable[Step], waits: bool) -> dict[str, list[Any]]:
    """One k8s_apply run's input: the definitions in plan order and which of them roll out before the next."""
    chosen = list(steps)
    return {"definitions": [s.definition for s in chosen], "rollouts": [s.rollout and waits for s in chosen]}


def decide_install(
    plan: Plan,
    observed: InstallObserved,
    crds_current: bool,
    crd_ownership: crd_owners.CrdOwnership | None = None,
    *,
    waited: bool = False,
    check_mode: bool = False,
) -> InstallDecision:
    """What install must do, decided from its one read before it writes anything (see InstallDecision).
    `crd_ownership`: crd_owners.ownership of the CRDs as read (decided here for the default field manager
    when not given). `waited`: install already waited for the namespace to be gone (this is the read after
    that wait). `check_mode`: a dry run (plan), which sends nothing into a namespace that does not exist and
    waits for nothing."""
    namespace, release, deployment = observed.namespace, observed.release, observed.controller
    gate = namespace_gate(plan, namespace, waited)
    owners = crd_ownership or crd_owners.ownership(plan, observed.crds, block_field_manager(plan))
    problems = [gate.problem] if gate.problem else []
    if owners.outcome == "refuse":
        problems.append(owners.message)
    missing = observed.missing_kinds
    if missing:
        needs = "; ".join(dict.fromkeys(str(m["needs"]) for m in missing))
        problems.append(
            f"The cluster does not serve {', '.join(str(m['kind']) for m in missing)}: {needs}. Install it first, "
            "or switch the feature off."
        )
    if namespace is None and not plan.namespace.create:
        problems.append(
            f"Namespace {plan.namespace.name} does not exist and create_namespace is false: create it first "
            "or set create_namespace: true."
        )
    install = plan.controller.install
    upgrade = upgrade_step(
        installed_version(release, deployment), plan.helm.chart_version, plan.controller.allow_downgrade
    )
    if install:
        problems += image_problems(plan.helm.chart_version, plan.helm.controller_image)
        problems += upgrade["problems"]
    helm_changes = release_differences(release, plan.helm.to_dict()) if install else []
    controller_ready = not install or _settled(deployment, "Available")
    live = {ref(o): o for o in observed.owned}
    status_objects = [s for s in plan.ordered() if s.kind in STATUS_READ_KINDS]
    settled = controller_ready and all(_settled(live.get(ref(s.obj)), str(s.wait_condition)) for s in status_objects)
    helm_needed = install and bool(helm_changes)
    namespace_apply = _namespace_apply(plan, namespace)
    to_send = [
        s
        for s in plan.ordered()
        if s.phase is not Phase.NAMESPACE and not unchanged(s.definition, live.get(ref(s.obj)))
    ]
    if check_mode and namespace is None:  # no dry run into a namespace that does not exist
        early, late = [], []
    elif helm_needed:
        early = [s for s in to_send if s.phase.stage == "before-controller"]
        late = [s for s in to_send if s.phase.stage != "before-controller"]
    else:
        early, late = [], to_send
    wait_controller = helm_needed and plan.wait.enabled and not check_mode
    return InstallDecision(
        problems=tuple(problems),
        namespace_exists=namespace is not None,
        namespace_apply=namespace_apply,
        crds=observed.crds,
        crds_current=crds_current,
        crd_owners=owners.to_dict(),
        crd_settings=crd_owners.settings(plan, owners),
        helm_changes=tuple(helm_changes),
        helm_needed=helm_needed,
        controller_ready=controller_ready,
        settled=settled,
        apply_files=tuple(plan.file_name(s) for s in to_send),
        leftovers=tuple(leftovers(observed.owned, plan, plan.ownership_labels)),
        gateways=tuple(live[key] for s in status_objects if s.kind == "Gateway" and (key := ref(s.obj)) in live),
        upgrade=upgrade,
        rollout=tuple(rollout_lines(deployment, observed.proxies)),
        namespace_wait=gate.wait,
        check_mode=check_mode,
        prepare=helm_needed or not crds_current or namespace_apply,
        # helm keeps the login in its credential store for the chart check, the CRD chart and the release.
        login=plan.helm.auth is not None and (helm_needed or not (crds_current or bool(plan.crds.directory))),
        render_crd_chart=not crds_current and not plan.crds.directory,
        apply_early=_batch(early, plan.wait.enabled),
        apply_late=_batch(late, plan.wait.enabled),
        wait_controller=wait_controller,
        controller_waits=tuple(controller_waits(plan)) if wait_controller else (),
    )


def install_state(
    results: Iterable[Mapping[str, Any]], plan: Plan, crds_current: bool, waited: bool = False
) -> dict[str, Any]:
    """decide_install from install_lookups' results, as plain data (what the install_state action returns
    for the default field manager)."""
    return decide_install(plan, InstallObserved.from_results(results), crds_current, waited=waited).to_dict()
