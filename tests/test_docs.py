"""Derived files cannot drift: the config reference in docs/configuration.md, examples.poly and
examples/*/rendered are what tools/sync_docs.py generates from config.schema.json and examples/*/config.yml;
block metadata is well-formed."""

from __future__ import annotations

import subprocess
import sys

import yaml

from tests.conftest import ROOT

DOCS = ROOT / "docs"


def test_generated_files_are_current() -> None:
    result = subprocess.run(
        [sys.executable, "tools/sync_docs.py", "--check"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_config_reference_names_every_schema_leaf() -> None:
    """Belt and braces for the generator: every key path of config.schema.json appears in the reference table
    of docs/configuration.md (the page tools/sync_docs.py writes it into)."""
    from envoy_block import config
    from tools import sync_docs

    assert sync_docs.REFERENCE_PAGE == DOCS / "configuration.md"
    page = sync_docs.REFERENCE_PAGE.read_text(encoding="utf-8")
    schema = config.load_schema()
    for path, *_ in sync_docs._rows(schema, schema, ""):
        assert f"| `{path}` |" in page, path


def test_block_poly_actions_run_their_playbook_from_the_block_folder() -> None:
    """Script actions that change into the block's folder: Polycrate v0.23.3 runs a `playbook:` action in the
    workspace root in --local mode, where the playbook and ansible.cfg are not found."""
    block = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    assert block["name"] == "envoy"
    assert block["kind"] == "k8sapp"
    names = {a["name"] for a in block["actions"]}
    assert names == {"install", "uninstall", "render", "status", "plan"}
    for action in block["actions"]:
        assert "playbook" not in action, action
        # One line: Polycrate runs every script line in the background (`line &`), so a `cd` of its own
        # would not carry over to the next line.
        [line] = action["script"]
        assert line.startswith('cd "{{ .Block.Workdir.Path }}" && '), line
        playbook = f"playbooks/{action['name']}.yml"
        assert line.endswith(f'ansible-playbook -e "@$POLYCRATE_WORKSPACE_SNAPSHOT_YAML" {playbook}'), line
        assert (ROOT / playbook).is_file(), action


def test_no_schema_json_for_polycrate_to_load() -> None:
    """Polycrate v0.23.3 stops before any action when a block has a schema.json (its gojsonschema loader
    cannot marshal the YAML config): the block's schema lives under another name."""
    assert not (ROOT / "schema.json").exists()
    assert (ROOT / "config.schema.json").is_file()


def test_changelog_is_a_polycrate_list() -> None:
    entries = yaml.safe_load((ROOT / "CHANGELOG.poly").read_text(encoding="utf-8"))
    block = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    assert isinstance(entries, list)
    assert entries
    for entry in entries:
        assert {"version", "date", "type"} <= entry.keys()
    assert block["version"] in {e["version"] for e in entries}
