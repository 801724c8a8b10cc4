"""Run the REAL playbooks (ansible-playbook, kubernetes.core, the Python client) against the EMULATED API
server (tests/emulator), one fresh emulator per test."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import polycrate
from tests.conftest import PKG, ROOT
from tests.support.gate import shared_dir

BIN = Path(sys.executable).parent
BLOCK_POLY = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))


@dataclass
class Run:
    returncode: int
    output: str

    @property
    def recap(self) -> dict[str, int]:
        match = re.search(r"localhost\s+:\s+(.*)", self.output)
        assert match, self.output[-3000:]
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}


class Emulator:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.kubeconfig = workdir / "kubeconfig.yml"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (PKG, ROOT)))}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.emulator", "--kubeconfig", str(self.kubeconfig)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("ready "), line
        self.url = line.split()[1]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)

    def request(
        self, method: str, path: str, body: Any = None, content_type: str = "application/json"
    ) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method, headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(req) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.request("GET", "/emulator/state")[1]
        return state

    def objects(self, kind: str | None = None) -> list[dict[str, Any]]:
        return [o for o in self.state()["objects"] if kind is None or o["kind"] == kind]

    def journal(self) -> list[dict[str, Any]]:
        return list(self.state()["journal"])

    def playbook(self, name: str, config: dict[str, Any], *extra: str) -> Run:
        snap = polycrate.snapshot(BLOCK_POLY, {"config": config}, str(self.workdir / "artifacts"), str(self.kubeconfig))
        snap_file = self.workdir / "snapshot.yml"
        snap_file.write_text(yaml.safe_dump(snap), encoding="utf-8")
        env = {
            **os.environ,
            "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
            "ANSIBLE_NOCOLOR": "1",
            "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
            "KUBECONFIG": str(self.kubeconfig),
            "HOME": str(self.workdir),
        }
        done = subprocess.run(
            [str(BIN / "ansible-playbook"), "-e", f"@{snap_file}", f"playbooks/{name}.yml", *extra],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        return Run(done.returncode, done.stdout + done.stderr)


def base_config(**extra: Any) -> dict[str, Any]:
    """Emulated runs: no helm (Helm's release storage cannot run here), no controller waits, CRDs from shared/."""
    cfg: dict[str, Any] = {
        "controller": {"install": False},
        "wait": {"enabled": False},
        "crds": {"directory": str(shared_dir() / "crds")},
    }
    cfg.update(extra)
    return cfg


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[Emulator]:
    emu = Emulator(tmp_path)
    try:
        yield emu
    finally:
        emu.stop()
