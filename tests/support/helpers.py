"""Small helpers for building configs and plans in tests (no fixtures with hidden state)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from envoy_block import builder, config, polycrate
from envoy_block.plan import Plan
from tests.conftest import ROOT


def block(cfg: dict[str, Any] | None = None, name: str = "envoy") -> dict[str, Any]:
    return {"name": name, "version": "0.1.0", "config": cfg or {}}


def with_gateway(cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    """`cfg` with the opt-in bootstrap Gateway switched on (its other default_gateway keys kept)."""
    cfg = dict(cfg or {})
    cfg["default_gateway"] = {**cfg.get("default_gateway", {}), "enabled": True}
    return cfg


def load(cfg: dict[str, Any] | None = None) -> config.Config:
    return config.load(block(cfg))


def plan(cfg: dict[str, Any] | None = None) -> Plan:
    return builder.plan_from_block(block(cfg))


def objects(cfg: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [step.obj for step in plan(cfg).ordered()]


def find(cfg: dict[str, Any] | None, kind: str, name: str | None = None) -> dict[str, Any]:
    matches = [o for o in objects(cfg) if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(matches) == 1, f"expected one {kind} {name or ''}, found {len(matches)}"
    return matches[0]


def kinds(cfg: dict[str, Any] | None = None) -> list[str]:
    return [o["kind"] for o in objects(cfg)]


def problems(cfg: dict[str, Any]) -> list[str]:
    """The problem strings for an invalid config (fails the test if the config is accepted)."""
    try:
        config.load(block(cfg))
    except config.ConfigError as exc:
        return [str(p) for p in exc.problems]
    raise AssertionError(f"config was accepted: {cfg}")


_MISSING = object()


def at(obj: Any, path: str) -> Any:
    """Dotted path into a manifest; `[n]` indexes lists, keys with dots go in quotes: metadata.labels."a.b/c"."""
    import re

    node = obj
    for key, quoted, index in re.findall(r'([^."\[\]]+)|"([^"]+)"|\[(\d+)\]', path):
        part = quoted or key
        if index:
            node = node[int(index)] if isinstance(node, list) and int(index) < len(node) else _MISSING
        else:
            node = node.get(part, _MISSING) if isinstance(node, dict) else _MISSING
        if node is _MISSING:
            return _MISSING
    return node


MISSING = _MISSING


def walk(node: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in a nested structure of mappings and lists, depth first (the root first)."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def run_action(
    name: str, cfg: dict[str, Any], folder: Path, path: Path, *extra: str, **env: str
) -> subprocess.CompletedProcess[str]:
    """playbooks/<name>.yml on block.poly merged with `cfg` as its Polycrate action runs it (a snapshot in
    `folder`), with `path` first on PATH and `env` added."""
    block_poly = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    snap = folder / "snapshot.yml"
    snap.write_text(yaml.safe_dump(polycrate.snapshot(block_poly, {"config": cfg}, str(folder / "a"))), "utf-8")
    bin_dir = Path(sys.executable).parent
    environment = {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_NOCOLOR": "1",
        "PATH": f"{path}{os.pathsep}{bin_dir}{os.pathsep}{os.environ['PATH']}",
        **env,
    }
    return subprocess.run(
        [str(bin_dir / "ansible-playbook"), "-e", f"@{snap}", f"playbooks/{name}.yml", *extra],
        cwd=ROOT, env=environment, capture_output=True, text=True, check=False,
    )  # fmt: skip
