"""Invariant: the layers stay as docs/architecture.md draws them, so a component's rules stay with it.

- config.py names no config path of its own beyond the whole config and the block's name: every rule about
  a section lives in the component that builds it (or in attachments.py), never back in config.py.
- every component that builds or checks is in registry.COMPONENTS (so builder.py builds it and config.load
  runs its check, registry.CHECKS), with a config section the schema has; the check ranks refuse a
  duplicate, a gap, or a rank without a check.
- arrows point downward: no component imports config (they build from model.Config), the registry imports
  neither config nor builder, and model imports nothing of the block.

Mutation checks (done once, restored): moving the chart.auth rule back into config.py turned
test_config_py_holds_no_section_rule red; dropping namespace from registry.COMPONENTS turned
test_every_component_is_registered red (dropping a component with a check fails the import already: its rank
leaves a gap); importing config in registry.py turned test_registry_imports_neither_config_nor_builder red;
importing config in components/monitoring.py turned test_components_do_not_import_config red.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
from pathlib import Path

import pytest

from envoy_block import config, registry

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
def test_every_component_is_registered(name: str) -> None:
    """A module of components/ with a build or a check is in the registry, so it is built and checked."""
    module = importlib.import_module(f"envoy_block.components.{name}")
    if not hasattr(module, "build") and not hasattr(module, "check"):
        pytest.skip(f"components/{name}.py is a helper of other components (neither build nor check)")
    assert name in registry.SECTIONS, f"add components/{name}.py to registry.COMPONENTS"
    if hasattr(module, "check"):
        assert registry.CHECKS.count(module.check) == 1


def test_every_check_runs_once() -> None:
    """CHECKS holds each registered component's check and each rule's, once, and nothing else."""
    expected = [c.module.check for c in registry.COMPONENTS if hasattr(c.module, "check")]
    expected += [rule.module.check for rule in registry.RULES]
    assert sorted(map(id, registry.CHECKS)) == sorted(map(id, expected))
    assert len(set(registry.CHECKS)) == len(registry.CHECKS)


def test_registered_components_build_from_a_schema_section() -> None:
    sections = config.load_schema()["properties"]
    for component in registry.COMPONENTS:
        assert component.module.__name__ == f"envoy_block.components.{component.name}"
        assert component.section in sections, f"{component.name}: no section {component.section!r} in the schema"
    assert len(registry.SECTIONS) == len(registry.COMPONENTS), "a component is registered twice"
    assert [c.name for c in registry.COMPONENTS if not c.builds] == ["controller"]


@pytest.mark.parametrize(
    ("change", "index"),
    [
        ({"check_rank": 9}, 3),  # proxies takes network_policies' rank: one rank twice, one missing
        ({"check_rank": None}, 3),  # proxies has a check but no rank
        ({"check_rank": 11}, 0),  # namespace has a rank but no check
    ],
)
def test_the_check_ranks_refuse_a_wrong_registry(
    monkeypatch: pytest.MonkeyPatch, change: dict[str, int | None], index: int
) -> None:
    components = list(registry.COMPONENTS)
    components[index] = dataclasses.replace(components[index], **change)  # type: ignore[arg-type]
    monkeypatch.setattr(registry, "COMPONENTS", tuple(components))
    with pytest.raises(RuntimeError, match="registry"):
        registry._checks()


def test_registry_imports_neither_config_nor_builder() -> None:
    assert not {"config", "builder"} & _imports(PACKAGE / "registry.py")


@pytest.mark.parametrize("name", COMPONENTS)
def test_components_do_not_import_config(name: str) -> None:
    assert "config" not in _imports(PACKAGE / "components" / f"{name}.py")


def test_model_depends_on_nothing_of_the_block() -> None:
    assert _imports(PACKAGE / "model.py") == set()
