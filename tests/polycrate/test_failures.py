"""What a user sees when an action fails under the real Polycrate CLI v0.23.3 (`--local`, its default
--loglevel 1, which runs Ansible at -v and prints a failed run's output twice): at most 60 lines, the cause
among the last ones, the plan never printed. No cluster needed: the API server is a closed port.

Guards: each of install, status and uninstall, with the API server unreachable, ends with the block's one
message naming the cause (connection refused); with no kubeconfig anywhere (Polycrate exports KUBECONFIG=""),
install ends naming where the block looked. Before this, a failed install printed 947 lines, the reason lost.
Mutation checks (done once): `failed_when: false` back on install's cluster read turned
test_unreachable_api_server_is_named red (the cause was dropped, 71 lines); the stock default callback instead
of the block's turned it red too (77 lines: ansible-core 2.19 prints each failure twice, with source lines);
dropping the plays' ansible_python_interpreter turned the status case red (the workspace inventory sends
localhost's modules to /usr/bin/python3, which lacks the kubernetes library).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.harness.controlplane import free_port
from tests.polycrate.workspace import Workspace, create, environment

pytestmark = pytest.mark.playbook
MAX_LINES = 60
# The block's message must be this close to the end: after it come only Ansible's recap and Polycrate's log line.
LAST = 12


def _closed_port_kubeconfig(path: Path) -> Path:
    server = f"https://127.0.0.1:{free_port()}"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
                "users": [{"name": "u", "user": {"token": "not-a-secret"}}],
                "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "c",
            }
        ),
        encoding="utf-8",
    )
    return path


def _workspace(tmp_path: Path, kubeconfig: Path | None) -> Workspace:
    env = environment(tmp_path / "home", ROOT / ".venv/bin")
    return Workspace(create(tmp_path / "ws", {"default_gateway": {"enabled": True}}, kubeconfig), env)


@pytest.mark.parametrize(("action", "flags"), [("install", ()), ("status", ()), ("uninstall", ("--force",))])
def test_unreachable_api_server_is_named(tmp_path: Path, action: str, flags: tuple[str, ...]) -> None:
    ws = _workspace(tmp_path, _closed_port_kubeconfig(tmp_path / "kubeconfig.yml"))
    run = ws.run(action, *flags)
    assert run.returncode != 0
    assert len(run.lines) <= MAX_LINES, f"{len(run.lines)} lines:\n{run.output}"
    end = " ".join(" ".join(run.lines[-LAST:]).split())  # the YAML result format folds long messages
    assert "Cannot talk to the Kubernetes API server at https://127.0.0.1:" in end, run.output
    assert "connection refused" in end, run.output
    assert "envoy_config_plan" not in run.output, "the plan is never printed"


def test_no_kubeconfig_names_where_the_block_looked(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, None)
    run = ws.run("install")
    assert run.returncode != 0
    assert len(run.lines) <= MAX_LINES, f"{len(run.lines)} lines:\n{run.output}"
    end = " ".join(" ".join(run.lines[-LAST:]).split())
    assert "No kubeconfig found: block.kubeconfig.path (empty" in end, run.output
    assert "KUBECONFIG (empty)" in end, run.output
    assert "artifacts/blocks/envoy/kubeconfig.yml" in end, run.output
