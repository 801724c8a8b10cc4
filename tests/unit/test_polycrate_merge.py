"""Invariant: a user's choice in workspace.poly survives Polycrate's config merge.

Polycrate replaces a workspace false / 0 / "" with the block.poly default. For every leaf of the config
schema, a workspace override to its Go-empty value must reach the block unchanged - or be invalid anyway
(an empty namespace), in which case the replacement loses nothing. Mutation check (done once): adding
`create_namespace: true` to block.poly turned test_empty_override_survives_merge[create_namespace] red.

The bootstrap Gateway is opt-in: a workspace `default_gateway.enabled: true` must reach the block, and a
workspace that does not mention it gets no Gateway. Mutation checks (done once): `enabled: true` in
block.poly turned test_default_gateway_opt_in_survives_merge[key-missing], [only-name-set] and
[workspace-false] red;
making merge_config treat `true` as Go-empty turned [workspace-true] red.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from envoy_block import builder, config, polycrate
from tests.conftest import ROOT

BLOCK_POLY = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))


def _leaves(node: dict[str, Any], schema: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    node = config._resolve(schema, node)
    out = []
    for name, raw_sub in node.get("properties", {}).items():
        sub = config._resolve(schema, raw_sub)
        if "properties" in sub:
            out += _leaves(sub, schema, (*prefix, name))
        else:
            out.append((*prefix, name))
    return out


def _empty_for(node: dict[str, Any]) -> Any:
    kind = node.get("type")
    if kind == "boolean":
        return False
    if kind == "integer":
        return 0
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return ""


def _nest(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    out: Any = value
    for part in reversed(path):
        out = {part: out}
    return dict(out)


def _schema_leaf(path: tuple[str, ...]) -> dict[str, Any]:
    schema = config.load_schema()
    node = config._resolve(schema, schema)
    for part in path:
        node = config._resolve(schema, node["properties"][part])
    return node


LEAVES = _leaves(config.load_schema(), config.load_schema())


def _valid(cfg: dict[str, Any]) -> bool:
    try:
        config.load({"name": "envoy", "config": cfg})
    except config.ConfigError:
        return False
    return True


@pytest.mark.parametrize("path", LEAVES, ids=[".".join(p) for p in LEAVES])
def test_empty_override_survives_merge(path: tuple[str, ...]) -> None:
    leaf = _schema_leaf(path)
    empty = _empty_for(leaf)
    workspace = _nest(path, empty)
    merged = polycrate.merge_config(BLOCK_POLY["config"], workspace)
    node: Any = merged
    for part in path:
        node = node[part]
    if node != empty:
        # The block default replaced the user's value: acceptable only if the user's value was invalid.
        assert not _valid(workspace), f"workspace {'.'.join(path)}={empty!r} is replaced by {node!r}"


def test_block_poly_defaults_agree_with_schema() -> None:
    """block.poly may only repeat schema defaults, never contradict them, and it must itself be valid."""
    effective_from_schema = config.load({"config": {}}).values
    effective_from_poly = config.load({"config": BLOCK_POLY["config"]}).values
    assert effective_from_poly == effective_from_schema


def test_merge_semantics_match_polycrate() -> None:
    """Pins the emulated rules: deep map merge, non-empty child list wins whole, Go-empty scalar replaced."""
    parent = {"a": {"b": 1, "c": True}, "l": [1, 2], "s": "x", "keep": "p"}
    child = {"a": {"b": 0, "d": 5}, "l": [3], "s": ""}
    assert polycrate.merge_config(parent, child) == {"a": {"b": 1, "c": True, "d": 5}, "l": [3], "s": "x", "keep": "p"}


@pytest.mark.parametrize(
    ("workspace", "enabled"),
    [
        ({"default_gateway": {"enabled": True}}, True),
        ({}, False),
        ({"default_gateway": {"name": "edge"}}, False),
        ({"default_gateway": {"enabled": False}}, False),
    ],
    ids=["workspace-true", "key-missing", "only-name-set", "workspace-false"],
)
def test_default_gateway_opt_in_survives_merge(workspace: dict[str, Any], enabled: bool) -> None:
    merged = polycrate.merge_config(BLOCK_POLY["config"], workspace)
    plan = builder.plan_from_block({"name": "envoy", "config": merged})
    assert config.load({"name": "envoy", "config": merged}).get("default_gateway.enabled") is enabled
    assert ("Gateway" in [step.kind for step in plan.steps]) is enabled
