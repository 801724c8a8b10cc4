"""Polycrate's runtime conventions, emulated so CI and plain ansible-playbook take Polycrate's path.

Polycrate (v0.23 `Block.MergeIn`, vendored mergo without overwrite) merges a workspace block entry
over block.poly like this: maps merge recursively, a non-empty child list wins whole, and a child
scalar that is Go-"empty" (false, 0, "") is REPLACED by the block default. That last rule is the
pitfall block.poly's defaults are designed around.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any


def is_go_empty(value: Any) -> bool:
    # Go's zero values: nil, false, 0, "", empty slice/map. (bool is checked first: False == 0 anyway.)
    return value is None or value is False or value in (0, "", [], {})


def merge_config(block_default: Any, workspace: Any) -> Any:
    """The config Polycrate hands to the playbook: workspace value, filled in from block.poly."""
    if isinstance(workspace, Mapping) and isinstance(block_default, Mapping):
        merged = {k: copy.deepcopy(v) for k, v in workspace.items()}
        for key, default in block_default.items():
            merged[key] = merge_config(default, workspace[key]) if key in workspace else copy.deepcopy(default)
        return merged
    if workspace is None or (is_go_empty(workspace) and not isinstance(workspace, Mapping)):
        return copy.deepcopy(block_default)
    return copy.deepcopy(workspace)


def snapshot(
    block_poly: Mapping[str, Any],
    workspace_block: Mapping[str, Any] | None,
    artifacts_path: str,
    kubeconfig_path: str | None = None,
) -> dict[str, Any]:
    """The extra-vars Polycrate passes to `ansible-playbook -e @snapshot.yml` (the parts the block reads)."""
    workspace_block = workspace_block or {}
    name = str(workspace_block.get("name") or block_poly["name"])
    block: dict[str, Any] = {
        "name": name,
        "version": block_poly.get("version", "0.0.0"),
        "kind": block_poly.get("kind", "k8sapp"),
        "config": merge_config(block_poly.get("config") or {}, workspace_block.get("config") or {}),
        "artifacts": {"path": artifacts_path},
    }
    if kubeconfig_path:
        block["kubeconfig"] = {"path": kubeconfig_path}
    return {"block": block, "workspace": {"name": "local"}, "action": {"name": ""}}


def fold_keys(value: Any, path: str = "config") -> Any:
    """`value` with every mapping key lower-cased at every depth, lists included, as Polycrate (viper) hands the
    config to the block. Two keys that fold to one (Enabled and enabled) raise ValueError naming them: Polycrate
    keeps one of them at random (Go map order)."""
    if isinstance(value, list):
        return [fold_keys(item, f"{path}[{index}]") for index, item in enumerate(value)]
    if not isinstance(value, Mapping):
        return value
    out: dict[Any, Any] = {}
    spelled: dict[Any, Any] = {}
    for key, item in value.items():
        folded = key.lower() if isinstance(key, str) else key
        if folded in out:
            raise ValueError(
                f"{path}: the keys {spelled[folded]!r} and {key!r} are one key to Polycrate, which lower-cases every "
                "key and keeps one of them at random; keep one"
            )
        spelled[folded] = key
        out[folded] = fold_keys(item, f"{path}.{folded}")
    return out


def lowercased_keys(workspace_poly: Mapping[str, Any], block_name: str) -> list[str]:
    """Warnings for the config keys with capitals that workspace.poly sets for the block: Polycrate (viper)
    lower-cases every key of the snapshot it hands to the block, at every depth, so an annotation such as
    example.com/MixedCase reaches the cluster as example.com/mixedcase. The block only sees the snapshot, so it
    reads workspace.poly to say so."""
    found: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, f"{path}[{index}]")
        if not isinstance(node, Mapping):
            return
        for key, value in node.items():
            key_path = f"{path}.{key}"
            if isinstance(key, str) and key != key.lower():
                found.append(
                    f"{key_path}: Polycrate lower-cases every config key, so the block receives {key.lower()!r}, not "
                    f"{key!r}. Kubernetes keys are case-sensitive: use the lower-case key if what reads it accepts "
                    "that, or set it outside the block (README: Running under Polycrate)."
                )
            walk(value, key_path)

    for entry in workspace_poly.get("blocks") or []:
        if isinstance(entry, Mapping) and entry.get("name") == block_name:
            walk(entry.get("config"), "config")
    return found
