"""The block's life cycle through the real Polycrate CLI v0.23.3 in local mode (`polycrate --local run envoy ...`),
on the local control plane with the real controller and charts, with the project's pinned .venv (a workstation
that installed requirements.txt). The packages of Polycrate's container image (.venv-image, from
../shared/polycrate/image-python-requirements.lock) run the same life cycle where users meet them, in container
mode (tests/polycrate/test_container_mode.py), and the unit and render tests run in them too (make unit).

Guards: the whole life cycle works under Polycrate (the workspace inventory.yml points localhost at
the system's Python; the plays must not follow it), the artifacts land in the block's artifacts
folder, the summary shows the Gateway's address, a second install changes nothing, and uninstall runs without a
TTY with --force. The block travels as Polycrate ships blocks: `block push` to the harness's OCI registry from
a staged package (tools/block_package.py: no .venv, .tools, artifacts or tests), `block pull` into a fresh
workspace, `render` there. The cheaper guards (a `playbook:` action, a schema.json, the inventory's Python,
failures) are in tests/polycrate, with their mutation checks.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cluster.conftest import Kube
from tests.conftest import ROOT
from tests.harness.registry import PASSWORD, USER, Registry
from tests.polycrate.workspace import (
    BLOCK,
    NS,
    Workspace,
    create,
    environment,
    lifecycle,
    push_scratch_image,
    pushed_size,
    registry_login,
)

pytestmark = pytest.mark.playbook


def test_lifecycle_under_polycrate(kube: Kube, tmp_path: Path) -> None:
    python_bin = ROOT / ".venv/bin"
    cfg = kube.config(
        default_gateway={"enabled": True},
        service={"loadbalancer_ip": "203.0.113.77", "loadbalancer_provider": "metallb"},
    )
    env = environment(tmp_path / "home", python_bin, {"SSL_CERT_FILE": str(kube.registry.ca_bundle)})
    ws = Workspace(create(tmp_path / "ws", cfg, kube.cluster.kubeconfig), env)
    lifecycle(ws, f"Gateway {NS}/eg-shared: 203.0.113.77")
    assert kube.get(f"/api/v1/namespaces/{NS}") is None, "uninstall removes the namespace it created"


def test_block_travels_through_an_oci_registry(registry: Registry, tmp_path: Path) -> None:
    version = str(yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))["version"])
    home = tmp_path / "home"
    env = environment(home, ROOT / ".venv/bin", {"SSL_CERT_FILE": str(registry.ca_bundle)})
    env.update(registry_login(home, registry.host, USER, PASSWORD))
    base = push_scratch_image(registry.host, registry.ca_bundle, USER, PASSWORD)
    flags = ["--registry-url", registry.host, "--registry-base-image", base]

    source = Workspace(create(tmp_path / "source", {}, None, name="release"), env)
    source.polycrate(*flags, "block", "push", BLOCK).ok()
    size = pushed_size(registry.host, registry.ca_bundle, USER, PASSWORD, BLOCK, version)
    # A guard against shipping what was built (a venv, .tools, artifacts: megabytes), not a budget: 0.12.0's
    # alerts, dashboards, hostile-input checks and their docs made the layer 210 KB (113 files); 0.19's
    # advisories, tenant guards, the WAF's curated exclusions and their docs 277 KB.
    assert size < 512 * 1024, f"the pushed block is {size // 1024} KB: only what users need belongs in it"

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "workspace.poly").write_text("name: fresh\n", encoding="utf-8")
    pulled = Workspace(fresh, env)
    pulled.polycrate(*flags, "block", "pull", f"{registry.host}/{BLOCK}:{version}").ok()
    folder = fresh / "blocks" / registry.host / BLOCK
    assert (folder / "block.poly").is_file(), sorted(p.name for p in (fresh / "blocks").rglob("*"))[:20]
    left = sorted(name for name in (".venv", ".venv-image", ".tools", "tests", "artifacts") if (folder / name).exists())
    assert not left, f"the package holds build outputs or tests: {left}"
    pulled.run("render").ok()
    assert (pulled.artifacts / "plan.yaml").is_file()
    print(f"pushed block image: {size} bytes")  # the report reads it with -s
