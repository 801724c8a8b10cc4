"""docs/architecture.md's layer table names every module of envoy_block: a module added without a place in the
layers fails here (issue 41: five modules, 687 lines, had gone missing from it). A component is placed by the
table's `components/<name>.py` row, a package's `__init__.py` by its folder."""

from __future__ import annotations

import re

from tests.conftest import ROOT

PACKAGE = ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils/envoy_block"


def layer_table() -> str:
    text = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    return "\n".join(line for line in section.splitlines() if line.startswith("|"))


def test_every_module_has_a_layer() -> None:
    table = layer_table()
    named = set(re.findall(r"`([\w/]+\.py)`", table))
    folders = {name.split("/")[0] for name in re.findall(r"`(\w+)/`", table)}
    missing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        folder, _, name = relative.rpartition("/")
        if name == "__init__.py" or (folder == "components" and "components/<name>.py" in table):
            continue
        if relative not in named and name not in named and folder not in folders:
            missing.append(relative)
    assert not missing, f"modules docs/architecture.md's layer table does not place: {missing}"


def test_the_check_reads_the_table() -> None:
    """The check sees the table it is meant to: it names the layers and the decisions' folder."""
    table = layer_table()
    assert "| decisions |" in table
    assert "`lifecycle/`" in table
