"""Invariant: the helm task hands helm exactly what the plan says (pinned here without a cluster; the
cluster tests run it for real): release name, namespace, chart ref, pinned version, values, and
skip_crds - dropping skip_crds would let Helm's crds/ fight the block's server-side-applied CRDs."""

from __future__ import annotations

import yaml

from tests.conftest import ROOT


def _task(name: str) -> dict[str, object]:
    tasks = yaml.safe_load((ROOT / "roles/envoy_apply/tasks/controller.yml").read_text(encoding="utf-8"))
    return next(t for t in tasks if t["name"] == name)


def test_helm_task_takes_every_setting_from_the_plan() -> None:
    args = _task("Install or upgrade gateway-helm")["kubernetes.core.helm"]
    assert isinstance(args, dict)
    expected = {
        "name": "name",
        "release_namespace": "namespace",
        "chart_ref": "chart_ref",
        "chart_version": "chart_version",
        "release_values": "values",
        "skip_crds": "skip_crds",
    }
    for param, key in expected.items():
        # Item syntax everywhere: `.values` would resolve to the dict's method, not the key (found by the
        # cluster tests: helm failed with "Type 'method' is unsupported").
        assert args[param] in (
            f"{{{{ envoy_config_plan.helm.{key} }}}}",
            f"{{{{ envoy_config_plan.helm['{key}'] }}}}",
        ), param
    assert ".values }}" not in str(args["release_values"])
    assert args["wait"] is False, "the rollout wait is a task of its own, with the block's timeout"


def _leaf_tasks(tasks: list[dict[str, object]]) -> list[dict[str, object]]:
    out = []
    for task in tasks:
        nested = [task.get(k) for k in ("block", "rescue", "always") if isinstance(task.get(k), list)]
        if nested:
            for part in nested:
                out += _leaf_tasks(part)  # type: ignore[arg-type]
        else:
            out.append(task)
    return out


def test_registry_credentials_only_in_no_log_tasks() -> None:
    """Every task that touches the credential-bearing helm_release filter runs with no_log."""
    for path in (ROOT / "roles").rglob("tasks/*.yml"):
        for task in _leaf_tasks(yaml.safe_load(path.read_text(encoding="utf-8")) or []):
            if "helm_release" in yaml.safe_dump(task):
                assert task.get("no_log") is True, (path, task.get("name"))
