"""A Polycrate workspace holding the block, and the block's life cycle run through the real CLI (v0.23.3, built by
`make tools`), as a user runs it: `polycrate run envoy install`.

Reusable for either mode: `Workspace.command` is the CLI and its global flags (`--local` here; container mode
passes its own, e.g. `--pull=false`), `Workspace.env` the environment (PATH decides which Python runs the
playbooks in local mode).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import ssl
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT
from tools import block_package

POLYCRATE = ROOT / ".tools/bin/polycrate"
BLOCK = "envoy"
NS = "envoy-gateway-system"
# Enough for install's waits on the local control plane; a hung action fails the test instead of the suite.
ACTION_TIMEOUT = 600


@dataclass
class Action:
    args: tuple[str, ...]
    returncode: int
    output: str

    @property
    def lines(self) -> list[str]:
        return self.output.splitlines()

    @property
    def recap(self) -> dict[str, int]:
        """The last PLAY RECAP's counts (Polycrate prints a failed run's output twice)."""
        found = re.findall(r"localhost\s+:\s+(ok=.*)", self.output)
        assert found, self.tail()
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", found[-1])}

    def tail(self, n: int = 60) -> str:
        return "\n".join(self.lines[-n:])

    def ok(self) -> Action:
        assert self.returncode == 0, f"polycrate {' '.join(self.args)} failed:\n{self.tail()}"
        return self


@dataclass
class Workspace:
    path: Path
    env: dict[str, str]
    command: list[str] = field(default_factory=lambda: [str(POLYCRATE), "--local"])
    log: list[Action] = field(default_factory=list)

    @property
    def artifacts(self) -> Path:
        return self.path / "artifacts/blocks" / BLOCK

    def polycrate(self, *args: str, timeout: float = ACTION_TIMEOUT) -> Action:
        done = subprocess.run(
            [*self.command, *args],
            cwd=self.path,
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        # Container mode prints through a TTY: CRLF and colour codes.
        output = re.sub(r"\x1b\[[0-9;]*m", "", (done.stdout + done.stderr).replace("\r\n", "\n"))
        action = Action(args, done.returncode, output)
        self.log.append(action)
        name = re.sub(r"[^A-Za-z0-9.-]+", "_", "-".join(a for a in args if not a.startswith("-")))[:60]
        (self.path.parent / f"{self.path.name}-{len(self.log):02d}-{name}.log").write_text(output, encoding="utf-8")
        return action

    def run(self, action: str, *flags: str) -> Action:
        return self.polycrate("run", BLOCK, action, *flags)


def create(path: Path, config: Mapping[str, Any], kubeconfig: Path | None, *, name: str = "envoy-test") -> Path:
    """A workspace with the block's package under blocks/envoy (copied: Polycrate hashes and packs the folder),
    the config as the workspace's override, the kubeconfig where Polycrate looks first for the block, and an
    inventory.yml that sends localhost's modules to another Python."""
    path.mkdir(parents=True)
    block_package.stage(path / "blocks" / BLOCK)
    workspace = {"name": name, "blocks": [{"name": BLOCK, "config": dict(config)}]}
    (path / "workspace.poly").write_text(yaml.safe_dump(workspace, sort_keys=False), encoding="utf-8")
    # A workspace inventory as other blocks need it, pointing localhost at the system's Python (which lacks the
    # block's libraries); Polycrate points ANSIBLE_INVENTORY at it.
    localhost = {"ansible_connection": "local", "ansible_python_interpreter": "/usr/bin/python3"}
    (path / "inventory.yml").write_text(yaml.safe_dump({"all": {"hosts": {"localhost": localhost}}}), encoding="utf-8")
    if kubeconfig is not None:
        artifacts = path / "artifacts/blocks" / BLOCK
        artifacts.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(kubeconfig, artifacts / "kubeconfig.yml")
    return path


def environment(home: Path, python_bin: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A user's shell: HOME of its own (Polycrate writes ~/.polycrate), `python_bin` (a venv's bin) first on PATH
    so its ansible-playbook runs the block, then helm from .tools/bin. Nothing of the test runner's Ansible,
    kubeconfig or Polycrate settings leaks in (the Makefile exports ANSIBLE_CONFIG, which would point
    ansible-playbook at the working copy instead of the block under blocks/)."""
    home.mkdir(parents=True, exist_ok=True)
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR", "TZ")}
    return {
        **keep,
        "HOME": str(home),
        "PATH": os.pathsep.join([str(python_bin), str(ROOT / ".tools/bin"), "/usr/local/bin", "/usr/bin", "/bin"]),
        "PYTHONDONTWRITEBYTECODE": "1",
        **(extra or {}),
    }


def registry_login(home: Path, host: str, user: str, password: str) -> dict[str, str]:
    """Docker's credential file for Polycrate's `block push`/`pull` (go-containerregistry's default keychain)."""
    docker = home / ".docker"
    docker.mkdir(parents=True, exist_ok=True)
    auth = base64.b64encode(f"{user}:{password}".encode()).decode()
    (docker / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}), encoding="utf-8")
    return {"DOCKER_CONFIG": str(docker)}


def lifecycle(ws: Workspace, gateway_line: str) -> dict[str, Action]:
    """render, plan, install, install again, status, uninstall --force, each through Polycrate, each checked
    as a user would read it. Returns the runs by step."""
    runs: dict[str, Action] = {}
    runs["render"] = ws.run("render").ok()
    assert (ws.artifacts / "plan.yaml").is_file(), "render writes into the block's artifacts folder"
    assert any((ws.artifacts / "manifests").iterdir()), "render writes the manifests"
    runs["plan"] = ws.run("plan").ok()
    assert "does not exist yet" in runs["plan"].output, runs["plan"].tail()
    runs["install"] = ws.run("install").ok()
    assert runs["install"].recap["changed"] > 0
    assert gateway_line in runs["install"].output, runs["install"].tail()
    runs["reinstall"] = ws.run("install").ok()
    assert runs["reinstall"].recap["changed"] == 0, runs["reinstall"].tail()
    assert gateway_line in runs["reinstall"].output, runs["reinstall"].tail()
    runs["status"] = ws.run("status").ok()
    runs["uninstall"] = ws.run("uninstall", "--force").ok()
    assert runs["uninstall"].recap["changed"] > 0
    return runs


def push_scratch_image(
    host: str, ca_bundle: Path, user: str, password: str, repository: str = "library/scratch"
) -> str:
    """An empty image (no layers) as `repository:latest`: `polycrate block push` builds the block's image on a base
    image it pulls (cargo.ayedo.cloud/library/scratch by default, not reachable here). Returns its reference."""
    context = ssl.create_default_context(cafile=str(ca_bundle))
    auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    def call(method: str, url: str, body: bytes = b"", content_type: str = "") -> Any:
        request = urllib.request.Request(url, data=body or None, method=method, headers={"Authorization": auth})
        if content_type:
            request.add_header("Content-Type", content_type)
        return urllib.request.urlopen(request, context=context, timeout=30)

    config = json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": []}}).encode()
    digest = "sha256:" + hashlib.sha256(config).hexdigest()
    base = f"https://{host}/v2/{repository}"
    with call("POST", f"{base}/blobs/uploads/") as started:
        location = urllib.parse.urljoin(f"https://{host}/", started.headers["Location"])
    separator = "&" if "?" in location else "?"
    call("PUT", f"{location}{separator}digest={digest}", config, "application/octet-stream").close()
    media_type = "application/vnd.oci.image.manifest.v1+json"
    manifest = {
        "schemaVersion": 2,
        "mediaType": media_type,
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": digest, "size": len(config)},
        "layers": [],
    }
    call("PUT", f"{base}/manifests/latest", json.dumps(manifest).encode(), media_type).close()
    return f"{host}/{repository}:latest"


def pushed_size(host: str, ca_bundle: Path, user: str, password: str, repository: str, tag: str) -> int:
    """Bytes of the pushed block image's layers (compressed, as stored)."""
    context = ssl.create_default_context(cafile=str(ca_bundle))
    request = urllib.request.Request(
        f"https://{host}/v2/{repository}/manifests/{tag}",
        headers={
            "Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode(),
            "Accept": "application/vnd.oci.image.manifest.v1+json,application/vnd.docker.distribution.manifest.v2+json",
        },
    )
    with urllib.request.urlopen(request, context=context, timeout=30) as answer:
        manifest = json.load(answer)
    return sum(int(layer["size"]) for layer in manifest["layers"])
