"""Invariant: the layers stay as docs/architecture.md draws them, so a component's rules stay with it.

- config.py names no config path of its own beyond the whole config and the block's name: every rule about
  a section lives in the component that builds it (or in attachments.py), never back in config.py.
- every component's `check` is called by config.load (config.CHECKS), so a new one cannot be forgotten.
- arrows point downward: no component imports config (they build from model.Config), and model imports
  nothing of the block.

Mutation checks (done once, restored): moving the chart.auth rule back into config.py turned
test_config_py_holds_no_section_rule red; dropping monitoring.check from config.CHECKS turned
test_every_component_check_is_called red; importing config in components/monitoring.py turned
test_components_do_not_import_config red.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from envoy_block import attachments, config

PACKAGE = Path(config.__file__).parent
COMPONENTS = sorted(p.stem for p in (PACKAGE / "components").glob("*.py") if p.stem != "__init__")


def _imports(path: Path) -> set[str]:
    """The package-relative modules a file imports (`from ..config import X` -> "config")."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.module:
                found.add(node.module)
            found.update(alias.name for alias in node.names)
    return found


def test_config_py_holds_no_section_rule() -> None:
    source = (PACKAGE / "config.py").read_text(encoding="utf-8")
    paths = [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("config.")
    ]
    assert paths == [], f"config.py names config paths {paths}: put the rule in the component that builds them"


@pytest.mark.parametrize("name", COMPONENTS)
def test_every_component_check_is_called(name: str) -> None:
    module = importlib.import_module(f"envoy_block.components.{name}")
    check = getattr(module, "check", None)
    if check is None:
        pytest.skip(f"components/{name}.py has no rules beyond the schema")
    assert check in config.CHECKS, f"add {name}.check to config.CHECKS"


def test_attachments_are_checked() -> None:
    assert attachments.check in config.CHECKS


@pytest.mark.parametrize("name", COMPONENTS)
def test_components_do_not_import_config(name: str) -> None:
    assert "config" not in _imports(PACKAGE / "components" / f"{name}.py")


def test_model_depends_on_nothing_of_the_block() -> None:
    assert _imports(PACKAGE / "model.py") == set()
