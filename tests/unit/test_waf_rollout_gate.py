"""Invariant: install puts the WAF in the request path only once it runs with the new settings (issue 29). The
plan marks the WAF's Deployment `rollout` when its EnvoyExtensionPolicy is in the plan (and waits are on), the
policy comes after it in apply order, and k8s_apply lets a marked Deployment roll out before applying anything
after it. Mutation check (tools/mutate.py `hostile-waf-rollout-gate`): building the WAF Deployment without
rollout turns test_the_waf_deployment_gates_its_policy red."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.support.helpers import plan

sys.path.insert(0, str(ROOT / "collections"))

WAF = {
    "default_gateway": {"enabled": True, "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]},
    "waf": {"enabled": True, "default_policy": {"enabled": True}},
}


def entries(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    return list(plan(cfg).to_dict()["objects"])


def test_the_waf_deployment_gates_its_policy() -> None:
    objects = entries(WAF)
    kinds = [(e["kind"], e["name"]) for e in objects]
    deployment = kinds.index(("Deployment", "envoy-waf"))
    policy = next(i for i, e in enumerate(objects) if e["kind"] == "EnvoyExtensionPolicy")
    assert deployment < policy
    assert objects[deployment]["rollout"] is True
    assert [e["file"] for e in objects if e["rollout"]] == [objects[deployment]["file"]]


def test_no_gate_without_the_policy_or_with_waits_off() -> None:
    assert not any(e["rollout"] for e in entries({**WAF, "waf": {"enabled": True}}))
    assert not any(e["rollout"] for e in entries({**WAF, "wait": {"enabled": False}}))


@pytest.fixture(scope="module")
def k8s_apply() -> Any:
    return importlib.import_module("ansible_collections.polycrate_blocks.envoy.plugins.modules.k8s_apply")


def deployment(
    generation: int, observed: int, replicas: int, updated: int, available: int, total: int
) -> dict[str, Any]:
    return {
        "metadata": {"generation": generation},
        "spec": {"replicas": replicas},
        "status": {
            "observedGeneration": observed,
            "updatedReplicas": updated,
            "availableReplicas": available,
            "replicas": total,
        },
    }


@pytest.mark.parametrize(
    ("obj", "done"),
    [
        (deployment(2, 2, 2, 2, 2, 2), True),
        (deployment(3, 2, 2, 2, 2, 2), False),  # the new spec not observed yet
        (deployment(2, 2, 2, 1, 2, 3), False),  # an old pod still serving
        (deployment(2, 2, 2, 2, 1, 2), False),  # a new pod not available (the WAF does not start)
        ({"metadata": {"generation": 1}, "spec": {"replicas": 2}}, False),  # no status yet
    ],
    ids=["rolled-out", "not-observed", "old-pod-left", "not-available", "no-status"],
)
def test_rolled_out(k8s_apply: Any, obj: dict[str, Any], done: bool) -> None:
    assert k8s_apply.rolled_out(obj) is done
