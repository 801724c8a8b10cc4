"""The preview is what Polycrate applies: `make render CONFIG=...` (tools/snapshot.py, the block's one loader with
Polycrate v0.23.3's semantics) and the real `polycrate --local run envoy render` write byte-identical artifacts for
every example and for configs that read differently under YAML 1.1 and go-yaml v3: keys with capitals (Polycrate
lower-cases every key), YAML 1.1 booleans and a float where an integer belongs (go-yaml reads `on` as a string and
writes 3.0 as 3), and a `config:`-wrapped entry. Both runs read the same text: the example's config lines as they
are written, indented under the workspace's blocks entry.

Mutation check (done once): reading CONFIG with the YAML 1.1 loader again (inputs.load_mapping in snapshot.py)
turned the yaml11 and capitals cases red (make render refused `Enabled` and typed `on` as a boolean)."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from envoy_block.render import OWNED
from tests.conftest import ROOT
from tests.polycrate.workspace import POLYCRATE, Workspace, create, environment

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/config.yml"))

# Config texts (the lines under `config:`) that YAML 1.1 and go-yaml v3 read differently.
EXTRA = {
    "capitals": """\
default_gateway:
  Enabled: true
service:
  Annotations:
    service.beta.kubernetes.io/aws-load-balancer-Type: nlb
data_plane:
  Replicas: 3
""",
    "yaml11": """\
default_gateway:
  enabled: true
service:
  annotations:
    example.com/proxied: on
    example.com/legacy: no
data_plane:
  replicas: 3.0
""",
}


def config_text(case: str) -> str:
    """The lines under `config:` of an example (as written) or of an EXTRA case."""
    if case in EXTRA:
        return EXTRA[case]
    text = (ROOT / "examples" / case / "config.yml").read_text(encoding="utf-8")
    _, _, body = text.partition("\nconfig:")
    assert body, case
    return body.strip() + "\n" if not body.startswith("\n") else textwrap.dedent(body[1:])  # `config: {}` or a block


def owned(artifacts: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(artifacts)): p.read_bytes()
        for name in OWNED
        for p in sorted([artifacts / name, *(artifacts / name).rglob("*")])
        if p.is_file()
    }


def make_render(override: Path, artifacts: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    command = ["make", "--no-print-directory", "render", f"CONFIG={override}", f"ARTIFACTS={artifacts}"]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)


@pytest.mark.skipif(not POLYCRATE.is_file(), reason="make tools builds the Polycrate CLI")
@pytest.mark.parametrize("case", [*EXAMPLES, *EXTRA, "wrapped"])
def test_make_render_is_what_polycrate_renders(tmp_path: Path, case: str) -> None:
    body = config_text("capitals" if case == "wrapped" else case)
    ws = Workspace(create(tmp_path / "ws", {}, None), environment(tmp_path / "home", ROOT / ".venv/bin"))
    entry = "name: envoy\nconfig:\n" + textwrap.indent(body, "  ")
    (ws.path / "workspace.poly").write_text(
        "name: envoy-test\nblocks:\n" + textwrap.indent(entry, "    ").replace("    name: envoy", "  - name: envoy", 1),
        encoding="utf-8",
    )
    polycrate = ws.run("render")
    assert polycrate.returncode == 0, polycrate.tail()
    # `wrapped`: the config under `config:` alone; the others: the workspace entry with its name.
    override = tmp_path / "override.yml"
    override.write_text("config:\n" + textwrap.indent(body, "  ") if case == "wrapped" else entry, encoding="utf-8")
    made = make_render(override, tmp_path / "artifacts")
    assert made.returncode == 0, made.stdout + made.stderr
    expected = owned(ws.artifacts)
    assert expected, polycrate.tail()
    assert owned(tmp_path / "artifacts") == expected
    if case in ("capitals", "wrapped"):
        # The same warning as the render action prints under Polycrate, for each key with capitals.
        for key in ("config.default_gateway.Enabled", "config.service.Annotations", "config.data_plane.Replicas"):
            assert f"{key}: Polycrate lower-cases every config key" in made.stderr, made.stderr
