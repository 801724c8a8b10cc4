#!/usr/bin/env python3
"""Write the extra-vars file Polycrate would pass: block.poly merged with a workspace-style override.

    tools/snapshot.py --override my-config.yml --artifacts artifacts -o snapshot.yml
    ansible-playbook -e @snapshot.yml playbooks/render.yml

The override file holds a workspace.poly `blocks:` entry ({name, config}), just the config mapping, or a whole
workspace.poly. It is read as Polycrate v0.23.3 reads workspace.poly (go-yaml v3's types: `yes` is a string; every
key lower-cased, with the warning the render action gives under Polycrate for each key spelled with capitals), so
the render is the one `polycrate run envoy render` makes; within bounds (envoy_block.inputs: size, alias
expansion, nesting, duplicate keys, plain tags only). A file it refuses gets one line on stderr and exit 2, before
any work, and the previous render in the artifacts folder is removed: it cannot pass for the config that was given
(docs/configuration.md).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils"))

from envoy_block import artifacts, inputs, polycrate, render  # noqa: E402


def read_override(path: Path) -> bytes:
    """The override's bytes; InputError with what to give instead when there is no file to read."""
    wants = (
        "give the path of a YAML file holding the envoy block's workspace.poly entry (name, config) or just its "
        "config mapping, e.g. CONFIG=examples/waf/config.yml"
    )
    if not path.exists():
        raise inputs.InputError(f"{path}: no such file; {wants}")
    if path.is_dir():
        raise inputs.InputError(f"{path}: a folder, not a file; {wants}")
    size = path.stat().st_size
    if size > inputs.MAX_BYTES:  # refused unread: a huge file costs nothing
        raise inputs.InputError(
            f"{path}: {size} bytes, more than the {inputs.MAX_BYTES} this reads; the block's config is a few KiB: "
            "give the block's entry alone"
        )
    return path.read_bytes()


def _from_name(source: object) -> str:
    """The block name a workspace entry's `from:` names (registry.example.com/blocks/envoy:0.14.2 -> envoy)."""
    return str(source or "").rsplit("/", 1)[-1].partition(":")[0]


def _fold_top(mapping: dict[str, object]) -> dict[str, object]:
    return {k.lower() if isinstance(k, str) else k: v for k, v in mapping.items()}


def block_entry(loaded: dict[str, object], block_name: str, what: str) -> tuple[dict[str, object], str]:
    """The workspace block entry ({name, config}) an override stands for, and a note to print (or "").

    A whole workspace.poly (it has `blocks:`) gives its entry for this block: the one named `block_name`, else
    the one whose `from:` names it. Their own keys (blocks, name, from, config) are read lower-cased, as Polycrate
    reads every key."""
    loaded = _fold_top(loaded)
    blocks = loaded.get("blocks")
    if isinstance(blocks, list):
        entries = [_fold_top(e) for e in blocks if isinstance(e, dict)]
        found = [e for e in entries if e.get("name") == block_name] or [
            e for e in entries if _from_name(e.get("from")) == block_name
        ]
        names = ", ".join(str(e.get("name")) for e in entries) or "none"
        if len(found) != 1:
            why = "no entry" if not found else f"{len(found)} entries"
            raise inputs.InputError(
                f"{what}: a whole workspace.poly with {why} for the {block_name} block among its blocks ({names}); "
                f"CONFIG wants the {block_name} block's entry (name, config) or just its config mapping: copy that "
                "entry into a file of its own"
            )
        entry = {k: v for k, v in found[0].items() if k in ("name", "config")}
        note = f"{what} is a whole workspace.poly: rendered its blocks entry {entry.get('name')!r}"
    else:
        entry, note = (loaded if "config" in loaded else {"config": loaded}), ""
    if not entry.get("config"):
        note = f"{what} sets no config: rendered the defaults (block.poly)"
    return entry, note


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--override", type=Path, help="workspace block entry or config mapping (YAML)")
    parser.add_argument("--artifacts", default="artifacts", help="block.artifacts.path (default: artifacts)")
    parser.add_argument("--kubeconfig", help="block.kubeconfig.path")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()

    block_poly = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    workspace: dict[str, object] = {}
    dest = Path(args.artifacts).resolve()
    if args.override:
        try:
            loaded = inputs.load_polycrate(read_override(args.override), str(args.override))
            workspace, note = block_entry(loaded, str(block_poly["name"]), str(args.override))
            name = str(workspace.get("name") or block_poly["name"])
            warnings = polycrate.lowercased_keys({"blocks": [{**workspace, "name": name}]}, name)
            workspace = {**workspace, "config": polycrate.fold_keys(workspace.get("config"))}
        except (inputs.InputError, OSError, ValueError) as exc:  # InputError is a ValueError; OSError: reading
            print(f"snapshot: {exc}", file=sys.stderr)
            if gone := artifacts.remove(dest, render.OWNED):
                print(f"snapshot: removed the previous render ({len(gone)} files in {dest})", file=sys.stderr)
            return 2
        if note:
            print(f"snapshot: {note}", file=sys.stderr)
        for warning in warnings:  # as the render action prints them under Polycrate
            print(f"[WARNING]: {warning}", file=sys.stderr)
    data = polycrate.snapshot(block_poly, workspace, str(dest), args.kubeconfig)
    # It may hold chart credentials: readable by its owner only, from the moment it exists.
    args.output.unlink(missing_ok=True)
    with os.fdopen(os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as out:
        out.write(yaml.safe_dump(data, sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
