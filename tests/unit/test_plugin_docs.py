"""Every plugin's documentation is YAML that ansible-doc can read: DOCUMENTATION, EXAMPLES and RETURN of each
module stub, filter and doc fragment parse, and each action plugin has its module stub with the options it
accepts. ansible-lint only prints "Unable to parse documentation" and still passes: four stubs had gone
unreadable unseen (a colon in a plain description line)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

PLUGINS = ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins"
DOCUMENTED = sorted([*PLUGINS.glob("modules/*.py"), *PLUGINS.glob("filter/*.py")])


def _strings(path: Path) -> dict[str, str]:
    """The module-level string constants (DOCUMENTATION, EXAMPLES, RETURN; a fragment's class attributes)."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in ("DOCUMENTATION", "EXAMPLES", "RETURN"):
                    found[target.id] = node.value.value
    return found


@pytest.mark.parametrize("path", DOCUMENTED, ids=[p.name for p in DOCUMENTED])
def test_the_documentation_parses(path: Path) -> None:
    strings = _strings(path)
    assert "DOCUMENTATION" in strings, f"{path.name} has no DOCUMENTATION"
    for name, text in strings.items():
        try:
            yaml.safe_load(text)
        except yaml.YAMLError as exc:
            pytest.fail(f"{path.name} {name} is not YAML: {exc}")


def test_every_fragment_parses() -> None:
    for path in sorted(PLUGINS.glob("doc_fragments/*.py")):
        text = path.read_text(encoding="utf-8")
        for block in re.findall(r'DOCUMENTATION = r"""(.*?)"""', text, re.S):
            yaml.safe_load(block)


def test_every_action_is_documented_with_the_options_it_accepts() -> None:
    """An action's _VALID_ARGS (but the connection options of kubernetes.core's fragment) are its stub's options."""
    for action in sorted(PLUGINS.glob("action/*.py")):
        stub = PLUGINS / "modules" / action.name
        assert stub.is_file(), f"action {action.stem} has no documentation stub in modules/"
        match = re.search(r"_VALID_ARGS = frozenset\(\{([^}]*)\}\)", action.read_text(encoding="utf-8"))
        if not match:
            continue
        accepted = set(re.findall(r'"(\w+)"', match.group(1)))
        doc = yaml.safe_load(_strings(stub)["DOCUMENTATION"])
        fragments = " ".join(doc.get("extends_documentation_fragment") or [])
        options = set(doc.get("options") or {})
        if "polycrate_blocks.envoy.decision" in fragments:
            options.add("plan")
        if "polycrate_blocks.envoy.block" in fragments:
            options.add("block")
        assert accepted <= options, f"{action.stem}: undocumented options {sorted(accepted - options)}"


def test_a_colon_in_a_plain_line_is_caught() -> None:
    """The check above can fail: the mistake the stubs had."""
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load("description:\n  - A dry run (plan): nothing is sent\n    into it.\n")
