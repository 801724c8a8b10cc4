"""The real `render` action: ansible-playbook + the filter plugin + the roles, as Polycrate runs it.

Guards: the playbook writes exactly what the pure core renders (no second copy of manifest logic);
a second render changes nothing; bad config exits non-zero, writes nothing and removes a previous render;
chart credentials never reach artifacts or -vvv output. Mutation check (done once): removing the rescue
`clean` step from playbooks/render.yml turned test_invalid_config_writes_nothing_and_removes_stale red.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import polycrate
from tests.conftest import ROOT

pytestmark = pytest.mark.playbook
BIN = Path(sys.executable).parent
BLOCK_POLY = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
SECRET = "pw-Zq7-never-shown"


def run_render(tmp_path: Path, cfg: dict[str, Any], artifacts: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    snap = polycrate.snapshot(BLOCK_POLY, {"config": cfg}, str(artifacts))
    snap_file = tmp_path / "snapshot.yml"
    snap_file.write_text(yaml.safe_dump(snap), encoding="utf-8")
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    }
    return subprocess.run(
        [str(BIN / "ansible-playbook"), "-e", f"@{snap_file}", "playbooks/render.yml", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def recap(output: str) -> dict[str, int]:
    match = re.search(r"localhost\s+:\s+(.*)", output)
    assert match, output
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}


def test_render_matches_golden_and_is_idempotent(tmp_path: Path) -> None:
    """Golden: the playbook's output for the default config is byte-identical to examples/default/rendered."""
    artifacts = tmp_path / "artifacts"
    first = run_render(tmp_path, {}, artifacts)
    assert first.returncode == 0, first.stdout + first.stderr
    assert tree(artifacts) == tree(ROOT / "examples" / "default" / "rendered")
    second = run_render(tmp_path, {}, artifacts)
    assert second.returncode == 0
    assert recap(second.stdout)["changed"] == 0, second.stdout


def test_render_prunes_files_a_config_no_longer_renders(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    assert run_render(tmp_path, {"metrics": {"vmpodscrape": {"enabled": True}}}, artifacts).returncode == 0
    assert any("vmpodscrape" in name for name in tree(artifacts))
    assert run_render(tmp_path, {}, artifacts).returncode == 0
    assert not any("vmpodscrape" in name for name in tree(artifacts))


def test_invalid_config_writes_nothing_and_removes_stale(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    assert run_render(tmp_path, {}, artifacts).returncode == 0
    bad = {"service": {"type": "ClusterIP", "loadbalancer_ip": "10.0.0.1"}, "namespcae": "x"}
    result = run_render(tmp_path, bad, artifacts)
    assert result.returncode != 0
    assert "config.service.loadbalancer_ip" in result.stdout
    assert "config.namespcae" in result.stdout
    assert tree(artifacts) == {}, "a previous render must not be left looking current"


def test_invalid_config_on_fresh_folder_writes_nothing(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    result = run_render(
        tmp_path, {"default_gateway": {"listeners": [{"name": "a", "protocol": "TLS", "port": 1}]}}, artifacts
    )
    assert result.returncode != 0
    assert not artifacts.exists() or tree(artifacts) == {}


def test_credentials_never_in_artifacts_or_output(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    cfg = {"chart": {"auth": {"username": "robot", "password": SECRET}}}
    result = run_render(tmp_path, cfg, artifacts, "-vvv")
    assert result.returncode == 0, result.stdout
    assert SECRET not in result.stdout + result.stderr
    assert all(SECRET.encode() not in content for content in tree(artifacts).values())
    assert b"auth_configured: true" in tree(artifacts)["helm/release.yaml"]
