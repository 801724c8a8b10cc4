"""The one ordered plan every action reads: render writes it, install applies it, uninstall removes it."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

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
            "objects": [
                {
                    "phase": s.phase.label,
                    "stage": s.phase.stage,
                    "apply_rank": s.phase.apply_rank,
                    "delete_rank": s.phase.delete_rank,
                    "wait_condition": s.wait_condition,
                    "rollout": s.rollout and self.wait.enabled,
                    "file": self.file_name(s),
                    "kind": s.kind,
                    "name": s.name,
                    "namespace": s.namespace,
                    "api_version": s.obj["apiVersion"],
                    # As render writes it and install applies it: stamped with its digest.
                    "definition": with_digest(s.obj),
                }
                for s in self.ordered()
            ],
            "delete_order": [self.file_name(s) for s in self.delete_ordered()],
            "helm": self.helm.to_dict(include_secrets),
            "crds": self.crds.to_dict(),
            "namespace": asdict(self.namespace),
            "controller": asdict(self.controller),
            "wait": asdict(self.wait),
            "ownership_labels": self.ownership_labels,
            "ownership_selector": [f"{k}={v}" for k, v in sorted(self.ownership_labels.items())],
            "warnings": list(self.warnings),
        }
