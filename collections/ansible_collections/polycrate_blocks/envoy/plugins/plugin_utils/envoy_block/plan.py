"""The one ordered plan every action reads: render writes it, install applies it, uninstall removes it."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

from . import fact

if TYPE_CHECKING:  # the owners of the plan's parts import this module for Phase and Step
    from .components.controller import ControllerSettings, HelmRelease
    from .components.namespace import NamespaceSettings
    from .crds import CrdSettings

# What the block last applied, as the sha256 of the manifest (canonical JSON, without this annotation):
# install compares it with the plan's to tell a manifest it already applied from a changed one.
DIGEST_ANNOTATION = "envoy.polycrate.io/manifest-digest"


def with_digest(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The object with DIGEST_ANNOTATION set to the digest of its manifest."""
    out = copy.deepcopy(dict(obj))
    annotations = dict(out["metadata"].get("annotations") or {})
    annotations.pop(DIGEST_ANNOTATION, None)
    out["metadata"] = {**out["metadata"], "annotations": annotations}
    canonical = json.dumps(out, sort_keys=True, separators=(",", ":")).encode()
    annotations[DIGEST_ANNOTATION] = hashlib.sha256(canonical).hexdigest()
    return out


class Phase(Enum):
    """Where an object sits in the apply and the delete order. Values: (name, apply rank, delete rank).

    Apply: what others reference comes first (EnvoyProxy before GatewayClass before Gateway before
    policies). Delete: Gateways first, while the controller still runs to remove their proxies, then
    policies, EnvoyProxies, GatewayClasses, the WAF and the rest; network policies last so traffic
    needed during teardown stays allowed.
    """

    NAMESPACE = ("namespace", 0, 90)
    NETWORK = ("network", 1, 80)
    PROXY_CONFIG = ("proxy-config", 2, 30)
    GATEWAYCLASS = ("gatewayclass", 3, 40)
    WAF = ("waf", 4, 50)
    GATEWAY = ("gateway", 5, 10)
    POLICY = ("policy", 6, 20)
    MONITORING = ("monitoring", 7, 60)

    @property
    def label(self) -> str:
        return self.value[0]

    @property
    def apply_rank(self) -> int:
        return self.value[1]

    @property
    def delete_rank(self) -> int:
        return self.value[2]

    @property
    def stage(self) -> str:
        """ "before-controller" for what the helm release's own pods need on a default-deny cluster: the
        certgen hook and the controller talk to the API server, so their network policies exist first."""
        return "before-controller" if self in (Phase.NAMESPACE, Phase.NETWORK) else "after-controller"


@dataclass(frozen=True)
class Waits:
    """plan.wait (wait.*): whether install waits for what it applied (rollouts, Accepted, Programmed) and
    uninstall for what it deleted, and how long each wait may take, in seconds."""

    enabled: bool
    timeout: int

    @classmethod
    def from_dict(cls, data: object, path: str = "plan.wait") -> Waits:
        d = fact.fields(data, path, ("enabled", "timeout"))
        return cls(enabled=fact.boolean(d, "enabled", path), timeout=fact.integer(d, "timeout", path))


@dataclass(frozen=True)
class Step:
    """One Kubernetes object of the plan, with what install waits for after applying it."""

    phase: Phase
    obj: dict[str, Any]
    wait_condition: str | None = None
    # A Deployment install lets roll out (the new spec observed, every replica updated and available) before it
    # applies anything after it in plan order, when waits are on: what must not reach the request path before
    # the pods behind it run (the WAF's Deployment before its EnvoyExtensionPolicy).
    rollout: bool = False

    @property
    def kind(self) -> str:
        return str(self.obj["kind"])

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def namespace(self) -> str | None:
        ns = self.obj["metadata"].get("namespace")
        return str(ns) if ns is not None else None

    @property
    def api_version(self) -> str:
        return str(self.obj["apiVersion"])

    @property
    def definition(self) -> dict[str, Any]:
        """The manifest as render writes it and install applies it: stamped with its digest."""
        return with_digest(self.obj)

    def to_dict(self, file: str, waits: bool) -> dict[str, Any]:
        """One of the plan's `objects`: its place in the order (`file`) and whether waits are on are the plan's."""
        return {
            "phase": self.phase.label,
            "stage": self.phase.stage,
            "apply_rank": self.phase.apply_rank,
            "delete_rank": self.phase.delete_rank,
            "wait_condition": self.wait_condition,
            "rollout": self.rollout and waits,
            "file": file,
            "kind": self.kind,
            "name": self.name,
            "namespace": self.namespace,
            "api_version": self.api_version,
            "definition": self.definition,
        }

    @classmethod
    def from_dict(cls, data: object, path: str) -> Step:
        """The step one of the plan's `objects` was written from. Everything but phase, wait_condition, rollout
        and the definition is derived and checked here; `file` (the step's place in the plan) and `rollout`
        (off without waits) the plan checks."""
        d = fact.fields(data, path, STEP_KEYS)
        label = fact.string(d, "phase", path)
        phase = next((p for p in Phase if p.label == label), None)
        if phase is None:
            raise ValueError(f"{path}.phase: unknown phase {label!r}; one of {', '.join(p.label for p in Phase)}")
        definition = fact.mapping(d, "definition", path)
        # A manifest is Kubernetes' to shape: only the keys the plan reads are checked, any other is allowed.
        fact.fields(definition, f"{path}.definition", ("apiVersion", "kind", "metadata"), closed=False)
        fact.string(definition, "apiVersion", f"{path}.definition")
        fact.string(definition, "kind", f"{path}.definition")
        metadata = fact.fields(definition["metadata"], f"{path}.definition.metadata", ("name",), closed=False)
        fact.string(metadata, "name", f"{path}.definition.metadata")
        step = cls(
            phase=phase,
            obj=_without_digest(definition),
            wait_condition=fact.optional_string(d, "wait_condition", path),
            rollout=fact.boolean(d, "rollout", path),
        )
        own = {k: v for k, v in step.to_dict(str(d["file"]), step.rollout).items() if k not in ("file", "rollout")}
        fact.derived({k: d[k] for k in own}, own, path)
        return step


# The keys of one of the plan's `objects`, in the order to_dict writes them.
STEP_KEYS = (
    "phase",
    "stage",
    "apply_rank",
    "delete_rank",
    "wait_condition",
    "rollout",
    "file",
    "kind",
    "name",
    "namespace",
    "api_version",
    "definition",
)


def _without_digest(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest a step holds, from the digest-stamped one: the annotation with_digest adds removed, and the
    annotations with it when they held nothing else (with_digest adds them: the builders leave them out)."""
    out = copy.deepcopy(dict(definition))
    annotations = {k: v for k, v in (out["metadata"].get("annotations") or {}).items() if k != DIGEST_ANNOTATION}
    # In place, not moved to the end: with_digest keeps the key where it is, and the render keeps the order.
    out["metadata"] = {
        k: annotations if k == "annotations" else v
        for k, v in out["metadata"].items()
        if k != "annotations" or annotations
    }
    return out


@dataclass(frozen=True)
class Plan:
    """The objects in order, and what each action needs besides them, each part typed by its owner:
    `helm` and `controller` (components/controller.py), `crds` (crds.py), `namespace`
    (components/namespace.py), `wait` (Waits, here)."""

    steps: tuple[Step, ...]
    helm: HelmRelease
    crds: CrdSettings
    namespace: NamespaceSettings
    controller: ControllerSettings
    wait: Waits
    ownership_labels: dict[str, str]
    warnings: tuple[str, ...]

    def ordered(self) -> list[Step]:
        """Apply order; the sort is stable, so builders decide the order inside a phase."""
        return sorted(self.steps, key=lambda s: s.phase.apply_rank)

    def delete_ordered(self) -> list[Step]:
        return sorted(self.steps, key=lambda s: s.phase.delete_rank)

    def file_name(self, step: Step) -> str:
        index = self.ordered().index(step) + 1
        return f"{index:02d}-{step.kind.lower()}-{step.name}.yaml"

    def to_dict(self, include_secrets: bool = False) -> dict[str, Any]:
        """The plan as plain data for Ansible. Credentials only with include_secrets (install's helm step)."""
        return {
            "objects": [s.to_dict(self.file_name(s), self.wait.enabled) for s in self.ordered()],
            "delete_order": [self.file_name(s) for s in self.delete_ordered()],
            "helm": self.helm.to_dict(include_secrets),
            "crds": self.crds.to_dict(),
            "namespace": asdict(self.namespace),
            "controller": asdict(self.controller),
            "wait": asdict(self.wait),
            "ownership_labels": self.ownership_labels,
            "ownership_selector": self.ownership_selector,
            "warnings": list(self.warnings),
        }

    @property
    def ownership_selector(self) -> list[str]:
        """The ownership labels as k8s_list's label selectors, in a stable order."""
        return [f"{k}={v}" for k, v in sorted(self.ownership_labels.items())]

    @classmethod
    def from_dict(cls, data: object) -> Plan:
        """The typed plan again from its fact (to_dict's output, after Ansible and JSON), each part by its owner's
        from_dict: the one place the decisions' input crosses from plain data. Refused (ValueError naming the
        path) when a key is missing or unknown, a value has the wrong type, or a field the plan derives (digests,
        ranks, file names, the delete order, the selector) is not what the rest of the fact gives: a stale fact
        (an older block wrote it) or an altered one is never decided on."""
        # Imported here: the owners import this module for Phase and Step.
        from .components.controller import ControllerSettings, HelmRelease  # noqa: PLC0415
        from .components.namespace import NamespaceSettings  # noqa: PLC0415
        from .crds import CrdSettings  # noqa: PLC0415

        d = fact.fields(data, "plan", PLAN_KEYS)
        objects = d["objects"]
        if not isinstance(objects, list):
            raise ValueError(f"plan.objects: expected a list, got {type(objects).__name__}")
        plan = cls(
            steps=tuple(Step.from_dict(entry, f"plan.objects[{index}]") for index, entry in enumerate(objects)),
            helm=HelmRelease.from_dict(d["helm"], "plan.helm"),
            crds=CrdSettings.from_dict(d["crds"], "plan.crds"),
            namespace=NamespaceSettings.from_dict(d["namespace"], "plan.namespace"),
            controller=ControllerSettings.from_dict(d["controller"], "plan.controller"),
            wait=Waits.from_dict(d["wait"], "plan.wait"),
            ownership_labels=fact.string_map(d, "ownership_labels", "plan"),
            warnings=tuple(fact.string_list(d, "warnings", "plan")),
        )
        fact.string_list(d, "delete_order", "plan")
        fact.string_list(d, "ownership_selector", "plan")
        # What only the whole plan derives (each object's file name and rollout, the delete order, the selector):
        # the fact must be what this plan writes, in its order.
        fact.derived(d, plan.to_dict(include_secrets="auth" in d["helm"]), "plan")
        return plan


# The keys of the plan's fact, in the order to_dict writes them.
PLAN_KEYS = (
    "objects",
    "delete_order",
    "helm",
    "crds",
    "namespace",
    "controller",
    "wait",
    "ownership_labels",
    "ownership_selector",
    "warnings",
)
