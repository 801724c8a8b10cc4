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
