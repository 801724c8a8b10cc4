"""The block's life cycle through the real Polycrate CLI v0.23.3 in local mode (`polycrate --local run envoy ...`),
on the local control plane with the real controller and charts, once per Python environment: the project's
pinned .venv and .venv-image (the packages of Polycrate's container image, from
../shared/polycrate/image-python-requirements.lock).

Guards: the block loads under Polycrate (no schema.json for its loader), its actions find their playbooks and
ansible.cfg from the workspace root (script actions changing into the block's folder), a workspace
inventory.yml without ansible_python_interpreter does not send the modules to another Python, the artifacts
land in the block's artifacts folder, the summary shows the Gateway's address, a second install changes
nothing, and uninstall runs without a TTY with --force. Mutation checks (done once): a `playbook:` action
turned it red at render (playbook not found); dropping the play's ansible_python_interpreter turned it red at
install (module result deserialization failed, with the image's Python).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.conftest import Kube
from tests.conftest import ROOT
from tests.polycrate.workspace import NS, Workspace, create, environment, lifecycle

pytestmark = pytest.mark.playbook


@pytest.mark.parametrize("venv", [".venv", ".venv-image"])
def test_lifecycle_under_polycrate(kube: Kube, tmp_path: Path, venv: str) -> None:
    python_bin = ROOT / venv / "bin"
    assert (python_bin / "ansible-playbook").is_file(), f"{venv} is missing: `make setup` builds it"
    cfg = kube.config(
        default_gateway={"enabled": True},
        service={"loadbalancer_ip": "203.0.113.77", "loadbalancer_provider": "metallb"},
    )
    env = environment(tmp_path / "home", python_bin, {"SSL_CERT_FILE": str(kube.registry.ca_bundle)})
    ws = Workspace(create(tmp_path / "ws", cfg, kube.cluster.kubeconfig), env)
    lifecycle(ws, f"Gateway {NS}/eg-shared: 203.0.113.77")
    assert kube.get(f"/api/v1/namespaces/{NS}") is None, "uninstall removes the namespace it created"
