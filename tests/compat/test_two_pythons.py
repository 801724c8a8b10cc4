"""The block gives the same bytes in both Python environments it runs in: the project's pinned one (.venv,
requirements.txt) and Polycrate's image (.venv-image, `make image-venv` from
../shared/polycrate/image-python-requirements.lock: ansible-core 2.18, jsonschema 3.2, kubernetes 17.17,
PyYAML 5.3.1 without libyaml).

Guards: for the default config, every example, every configuration of the seed README, the translator's
coverage configs and a set of bad configs, the pure core renders identical files (and identical problem
lists) in both, and reads Envoy Gateway's CRDs into identical objects; `playbooks/render.yml` run by each
environment's ansible-playbook writes identical trees.

Mutation check (done once): validating with jsonschema.Draft202012Validator again (what the block did
before) turned test_the_pure_core_renders_the_same_bytes_in_both red: render_all.py died in .venv-image with
"module 'jsonschema' has no attribute 'Draft202012Validator'", the failure issue 17 reports.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import polycrate
from tests.conftest import ROOT
from tests.support import seed
from tests.support.gate import envoy_gateway_crds
from tests.translator import configs as translator_configs

pytestmark = pytest.mark.playbook
BLOCK_POLY = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
PINNED = ROOT / ".venv" / "bin"
IMAGE = ROOT / ".venv-image" / "bin"
# The CRDs install applies, read by crds.py (PyYAML 5.3.1 in the image has no libyaml: ~9 s here, 1 s pinned).
CRD_FOLDER = envoy_gateway_crds()

BAD: dict[str, dict[str, Any]] = {
    "bad-unknown-key": {"servcie": {"type": "LoadBalancer"}},
    "bad-type": {"data_plane": {"replicas": "two"}},
    "bad-enum": {"service": {"type": "Loadbalancer"}},
    "bad-pattern": {"namespace": "Envoy_System"},
    "bad-format": {"network_policy": {"provider": "kubernetes", "api_server_cidrs": ["10.0.0.1/8"]}},
    "bad-minimum": {"data_plane": {"replicas": 0}},
    "bad-required": {"default_gateway": {"enabled": True, "listeners": [{"name": "x"}]}},
    "bad-vip-needs-lb": {"service": {"type": "ClusterIP", "loadbalancer_ip": "192.0.2.1"}},
}


def _configs() -> dict[str, dict[str, Any]]:
    return {"default": {}, **translator_configs.CONFIGS, **seed.envoy_configs(), **BAD}


def _python(bin_dir: Path) -> Path:
    python = bin_dir / "python"
    if not python.exists():
        pytest.fail(f"{bin_dir.parent.name} is missing: run `make image-venv` (or `make setup`) first")
    return python


def _render_all(bin_dir: Path) -> dict[str, dict[str, str]]:
    done = subprocess.run(
        [str(_python(bin_dir)), str(ROOT / "tests/compat/render_all.py")],
        input=json.dumps({"configs": _configs(), "crd_folders": [str(CRD_FOLDER)]}),
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, dict[str, str]] = json.loads(done.stdout)
    return result


def test_the_pure_core_renders_the_same_bytes_in_both() -> None:
    pinned, image = _render_all(PINNED), _render_all(IMAGE)
    assert sorted(pinned) == sorted(image) == sorted([*_configs(), f"crds: {CRD_FOLDER}"])
    for name in BAD:
        assert "error" in pinned[name], f"{name} should be refused"
    differ = {
        name: sorted(f for f in set(pinned[name]) | set(image[name]) if pinned[name].get(f) != image[name].get(f))
        for name in pinned
        if pinned[name] != image[name]
    }
    assert not differ, f"rendered differently by .venv and .venv-image: {differ}"


def _tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def _playbook_render(bin_dir: Path, cfg: dict[str, Any], work: Path) -> dict[str, bytes]:
    artifacts = work / "artifacts"
    snap_file = work / "snapshot.yml"
    snap_file.write_text(yaml.safe_dump(polycrate.snapshot(BLOCK_POLY, {"config": cfg}, str(artifacts))), "utf-8")
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(
        [str(bin_dir / "ansible-playbook"), "-e", f"@{snap_file}", "playbooks/render.yml"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"{bin_dir.parent.name}:\n{(done.stdout + done.stderr)[-3000:]}"
    return _tree(artifacts)


@pytest.mark.parametrize("name", ["default", f"seed: {seed.SHARED_VIP}"])
def test_render_playbook_writes_the_same_bytes_in_both(name: str, tmp_path: Path) -> None:
    """The real `render` action (ansible-core 2.19 against 2.18) over the default config and the seed's VIP."""
    cfg = _configs()[name]
    _python(IMAGE)
    trees = {}
    for bin_dir in (PINNED, IMAGE):
        work = tmp_path / bin_dir.parent.name
        work.mkdir()
        trees[bin_dir.parent.name] = _playbook_render(bin_dir, cfg, work)
    pinned, image = trees[".venv"], trees[".venv-image"]
    assert pinned, "render wrote nothing"
    assert sorted(pinned) == sorted(image)
    assert [f for f in pinned if pinned[f] != image[f]] == []
