"""`polycrate --local run envoy render` with the real CLI v0.23.3, no cluster: the block loads (no schema.json for
Polycrate's loader, which fails on any), its action finds the playbook and ansible.cfg from the workspace root,
the render lands in the block's artifacts folder, and a config key spelled with capitals in workspace.poly is
named in a warning (Polycrate lower-cases every key). Mutation checks (done once): the render action as
`playbook: playbooks/render.yml` turned it red (run in the workspace root, the playbook is not found); a
schema.json in the block folder turned it red (`json: unsupported type: map[interface {}]interface {}`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.polycrate.workspace import BLOCK, Workspace, create, environment

pytestmark = pytest.mark.playbook


def test_render_under_polycrate(tmp_path: Path) -> None:
    config = {"default_gateway": {"enabled": True}, "service": {"annotations": {"example.com/MixedCase": "x"}}}
    ws = Workspace(create(tmp_path / "ws", config, None), environment(tmp_path / "home", ROOT / ".venv/bin"))
    run = ws.run("render").ok()
    assert (ws.artifacts / "plan.yaml").is_file()
    (shared,) = (ws.artifacts / "manifests").glob("*-envoyproxy-eg-shared.yaml")  # its number follows the plan
    service = shared.read_text(encoding="utf-8")
    assert "example.com/mixedcase" in service, "Polycrate hands the key over lower-cased"
    text = " ".join(run.output.split())
    assert "config.service.annotations.example.com/MixedCase: Polycrate lower-cases every config key" in text
    assert "__envoy" not in run.output
    # Polycrate passes its snapshot as `block` and `action`, names Ansible reserves: the block's vars plugin drops
    # exactly that warning (it was 14 lines of every run).
    assert "reserved name" not in run.output
    ansible = [line for line in run.lines if not line.startswith(("time=", "Using "))]
    assert len([line for line in ansible if line.strip()]) <= 10, run.output


def test_a_schema_json_would_stop_polycrate(tmp_path: Path) -> None:
    """Why the block's schema is config.schema.json: v0.23.3 fails on a block's schema.json, whatever it says."""
    ws = Workspace(create(tmp_path / "ws", {}, None), environment(tmp_path / "home", ROOT / ".venv/bin"))
    shutil.copyfile(ROOT / "config.schema.json", ws.path / "blocks" / BLOCK / "schema.json")
    run = ws.run("render")
    assert run.returncode != 0
    assert "json: unsupported type" in run.output, run.tail()
