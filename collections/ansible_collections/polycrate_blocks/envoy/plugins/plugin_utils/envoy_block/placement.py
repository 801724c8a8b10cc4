"""Where pods run and what they may use, one fact for every workload the block places: the proxies
(data_plane.*, in the EnvoyProxy) and the controller (controller.*, in gateway-helm's values). The same
schema definitions ($defs resources, label_map, tolerations, optional_dns_subdomain) give their shape; this
module renders them alike and checks what the schema cannot: the toleration rules the API server applies to a
pod spec, which would otherwise fail only on the cluster (the proxies' Deployment or the controller's refused,
long after install reported success or with helm stuck).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .model import Problem

_TOLERATION_KEYS = {"key": "key", "operator": "operator", "value": "value", "effect": "effect"}


def resources(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A container's resources: requests and limits as set (each sorted), empty parts left out."""
    return {part: dict(sorted(spec[part].items())) for part in ("requests", "limits") if spec.get(part)}


def toleration(item: Mapping[str, Any]) -> dict[str, Any]:
    """One toleration as a pod spec has it (toleration_seconds -> tolerationSeconds)."""
    out = {_TOLERATION_KEYS[k]: v for k, v in item.items() if k in _TOLERATION_KEYS}
    if "toleration_seconds" in item:
        out["tolerationSeconds"] = item["toleration_seconds"]
    return out


def tolerations(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [toleration(item) for item in items]


def toleration_problems(path: str, items: Sequence[Mapping[str, Any]]) -> list[Problem]:
    """The API server's rules for a pod's tolerations (core validation of Toleration), by config path."""
    problems: list[Problem] = []
    for index, item in enumerate(items):
        at = f"{path}[{index}]"
        exists = item.get("operator") == "Exists"
        if exists and item.get("value"):
            problems.append(
                Problem(f"{at}.value", "must be empty with operator Exists (it matches any value); remove value")
            )
        if not item.get("key") and not exists:
            problems.append(
                Problem(
                    f"{at}.key",
                    "is empty, which tolerates every taint only with operator Exists; set a key, or operator: Exists",
                )
            )
        if "toleration_seconds" in item and item.get("effect") != "NoExecute":
            problems.append(
                Problem(
                    f"{at}.toleration_seconds",
                    "applies to effect NoExecute only (how long the pod stays after such a taint appears); set "
                    "effect: NoExecute or remove toleration_seconds",
                )
            )
    return problems
