"""Invariant: every path the roles read from the plan, and from the decisions the actions return, exists in
what Python serialises. The roles read them by string (`__envoy_apply_plan.wait.timeout`); a renamed key would
otherwise fail on a cluster, not here.

Mutation check (done once, restored): renaming Waits.timeout to Waits.seconds turned
test_every_plan_path_the_roles_read_exists red.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from envoy_block import lifecycle
from envoy_block.lifecycle import UninstallDecision
from tests.support.helpers import plan as build

ROOT = Path(__file__).resolve().parents[2]
ROLES = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "roles").glob("*/tasks/*.yml")))
STEP = r"(?:\.[a-z_]+|\['[a-z_]+'\])"
# The fact the config role sets (built and serialised once per run), which every later role reads.
PLAN_VARS = ("envoy_config_plan",)
CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "credentials": {"chart": {"auth": {"username": "robot", "password": "s3cr3t"}}},
    "gateway-and-folder": {"default_gateway": {"enabled": True}, "crds": {"directory": "/crds"}},
}


def _paths(variable: str) -> set[tuple[str, ...]]:
    return {tuple(re.findall(r"[a-z_]+", match)) for match in re.findall(rf"{variable}((?:{STEP})+)", ROLES)}


def _walk(data: Any, path: tuple[str, ...]) -> bool:
    for key in path:
        if isinstance(data, list):
            return True  # a list of entries (objects): the roles map over it
        if not isinstance(data, dict) or key not in data:
            return False
        data = data[key]
    return True


@pytest.mark.parametrize("cfg", CONFIGS.values(), ids=CONFIGS.keys())
def test_every_plan_path_the_roles_read_exists(cfg: dict[str, Any]) -> None:
    paths = set().union(*(_paths(v) for v in PLAN_VARS))
    assert ("wait", "timeout") in paths, "the roles' plan paths were not found: the pattern is stale"
    data = build(cfg).to_dict()
    missing = sorted(".".join(p) for p in paths if not _walk(data, p))
    assert missing == [], f"the roles read plan paths Python does not write: {missing}"


def test_every_decision_field_the_roles_read_exists() -> None:
    data = build(CONFIGS["gateway-and-folder"])
    remove = set(UninstallDecision().to_dict())
    install = {*lifecycle.install_state([], data, crds_current=True), "crd_source"}
    status = {*lifecycle.StatusReport(()).to_dict()}
    for variable, fields in (
        (r"__envoy_remove", remove),
        (r"__envoy_apply_found", install),
        (r"__envoy_status_report", status),
    ):
        read = {p[0] for p in _paths(variable)}
        assert read, f"{variable}: no field read, the pattern is stale"
        assert read <= fields, f"{variable} reads fields no decision returns: {sorted(read - fields)}"


def test_credentials_reach_only_the_helm_release() -> None:
    """`auth` is in the plan only when asked for (install's registry login, under no_log)."""
    p = build(CONFIGS["credentials"])
    assert "auth" not in p.to_dict()["helm"]
    assert p.to_dict()["helm"]["auth_configured"] is True
    assert p.to_dict(include_secrets=True)["helm"]["auth"] == {"username": "robot", "password": "s3cr3t"}
