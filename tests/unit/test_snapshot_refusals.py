"""Invariant: a file-level refusal of `make render CONFIG=...` (tools/snapshot.py, before Ansible runs) removes the
previous render, as every other failed render does (docs/configuration.md): it cannot pass for the config that was
given. Only the paths render owns go; what else the artifacts folder holds (kubeconfig, inventory) stays.

Mutation: snapshot-keeps-render (tools/mutate.py) stops the removal and turns every case red."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from envoy_block import inputs
from tests.conftest import ROOT


def _write(name: str, data: bytes) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        path = tmp / name
        path.write_bytes(data)
        return path

    return make


def _folder(tmp: Path) -> Path:
    (tmp / "conf.d").mkdir()
    return tmp / "conf.d"


KINDS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "yaml-syntax": (_write("bad.yml", b"config:\n  namespace: [unclosed\n"), "not valid YAML: line"),
    "missing-file": (lambda tmp: tmp / "absent.yml", "no such file; give the path of a YAML file"),
    "over-size-cap": (_write("big.yml", b"#" * (inputs.MAX_BYTES + 1)), "more than the 4194304 this reads"),
    "tab": (_write("tab.yml", b"config:\n\tnamespace: edge\n"), "line 2, column 1"),
    "directory": (_folder, "a folder, not a file"),
    "not-utf8": (_write("latin1.yml", b"config:\n  namespace: \xe9\n"), "not UTF-8"),
    "not-a-mapping": (_write("list.yml", b"- namespace: edge\n"), "must be a mapping"),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_refused_file_removes_the_previous_render(tmp_path: Path, kind: str) -> None:
    make, says = KINDS[kind]
    artifacts = tmp_path / "artifacts"
    for rel in ("manifests/01-namespace.yaml", "helm/values.yaml", "helm/release.yaml", "plan.yaml"):
        (artifacts / rel).parent.mkdir(parents=True, exist_ok=True)
        (artifacts / rel).write_text("# a previous render\n", encoding="utf-8")
    (artifacts / "kubeconfig.yml").write_text("not render's\n", encoding="utf-8")
    override, out = make(tmp_path), tmp_path / "snapshot.yml"
    command = ["tools/snapshot.py", "--override", str(override), "--artifacts", str(artifacts), "-o", str(out)]
    result = subprocess.run(
        [sys.executable, *command],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert says in result.stderr
    assert "removed the previous render (4 files" in result.stderr
    assert sorted(p.name for p in artifacts.iterdir()) == ["kubeconfig.yml"]
    assert not out.exists()


def _snapshot(tmp: Path, text: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    override, out = tmp / "override.yml", tmp / "snapshot.yml"
    override.write_text(text, encoding="utf-8")
    command = ["tools/snapshot.py", "--override", str(override), "--artifacts", str(tmp / "artifacts"), "-o", str(out)]
    return subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, check=False), out


WORKSPACE = """\
name: my-workspace
config:
  image:
    reference: cargo.example.com/library/polycrate
blocks:
  - name: cert-manager
    config: {}
  - name: edge
    from: registry.example.com/blocks/envoy:0.14.2
    config:
      namespace: edge-gw
"""


def test_a_whole_workspace_poly_renders_the_envoy_entry(tmp_path: Path) -> None:
    """A whole workspace.poly given as CONFIG: its entry for the block (by name, else by what `from:` names)
    is rendered, and the output says which; the workspace's own config is not read as the block's."""
    result, out = _snapshot(tmp_path, WORKSPACE)
    assert result.returncode == 0, result.stderr
    assert (
        result.stderr
        == f"snapshot: {tmp_path / 'override.yml'} is a whole workspace.poly: rendered its blocks entry 'edge'\n"
    )
    block = yaml.safe_load(out.read_text(encoding="utf-8"))["block"]
    assert block["name"] == "edge"
    assert block["config"]["namespace"] == "edge-gw"
    assert "reference" not in str(block["config"].get("image", {}))


def test_a_workspace_poly_without_the_block_says_what_config_wants(tmp_path: Path) -> None:
    result, out = _snapshot(tmp_path, "name: ws\nblocks:\n  - name: cert-manager\n  - name: harbor\n")
    assert result.returncode == 2
    assert "a whole workspace.poly with no entry for the envoy block among its blocks (cert-manager, harbor)" in (
        result.stderr
    )
    assert "CONFIG wants the envoy block's entry (name, config) or just its config mapping" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("text", ["", "# nothing yet\n", "config:\n", "name: envoy\nconfig: {}\n"])
def test_an_empty_override_says_it_rendered_the_defaults(tmp_path: Path, text: str) -> None:
    result, out = _snapshot(tmp_path, text)
    assert result.returncode == 0, result.stderr
    assert "sets no config: rendered the defaults (block.poly)" in result.stderr
    assert out.exists()


@pytest.mark.parametrize(
    ("text", "fix"),
    [
        (
            "config:\n\tnamespace: edge\n",
            "line 2, column 1: found character '\\t' that cannot start any token; "
            "YAML indents with spaces only: replace the tab with spaces",
        ),
        ("config:\n  namespace: a: b\n", "quote the value"),
        ('config:\n  namespace: "edge\n', "close the quote"),
        ("config:\n  a: 1\n b: 2\n", "line this up with the keys or list items above it"),
    ],
    ids=["tab", "colon-in-value", "open-quote", "indentation"],
)
def test_a_yaml_error_says_what_to_change(tmp_path: Path, text: str, fix: str) -> None:
    result, _ = _snapshot(tmp_path, text)
    assert result.returncode == 2
    assert fix in result.stderr
    assert result.stderr.count("\n") == 1


def test_the_snapshot_is_private(tmp_path: Path) -> None:
    """It may hold chart credentials: mode 0600 from the moment it exists, also over an older 0644 file."""
    out = tmp_path / "snapshot.yml"
    out.write_text("old", encoding="utf-8")
    out.chmod(0o644)
    command = ["tools/snapshot.py", "--artifacts", str(tmp_path / "artifacts"), "-o", str(out)]
    subprocess.run([sys.executable, *command], cwd=ROOT, check=True)
    assert out.stat().st_mode & 0o777 == 0o600
    assert yaml.safe_load(out.read_text(encoding="utf-8"))["block"]["name"] == "envoy"
