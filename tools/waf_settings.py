#!/usr/bin/env python3
"""Print the WAF settings file the block renders for a config (the `<block>-waf` ConfigMap's waf.yaml).

    tools/waf_settings.py [--override my-config.yml] [--set waf.paranoia_level=2 ...]

The same path as `make render CONFIG=`: block.poly merged with the override (a workspace.poly `blocks:` entry
or a config mapping), validated and built into the plan by the block's own builder; `--set` changes a key
of the merged config first (a YAML value). `make waf-demo CONFIG=` and `make waf-efficacy` run the WAF on
this output, so what they measure is what the block deploys. A config that does not enable the WAF
(waf.enabled) has no settings file: exit 2 with one line saying so; a config the block refuses: exit 2 with
its problems.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils"))

from envoy_block import builder, inputs, polycrate  # noqa: E402
from envoy_block.components import waf  # noqa: E402
from envoy_block.model import ConfigError  # noqa: E402


def _set(config: dict[str, Any], assignment: str) -> None:
    key, sep, value = assignment.partition("=")
    if not sep or not key:
        raise ValueError(f"--set {assignment!r}: expected KEY=VALUE, such as waf.paranoia_level=2")
    node = config
    *parents, leaf = key.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = yaml.safe_load(value)


def settings_file(override: Path | None, assignments: list[str]) -> str:
    """The rendered waf.yaml; raises ValueError with the reason when there is none."""
    block_poly = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    workspace: dict[str, Any] = {}
    if override:
        loaded = inputs.load_mapping(override.read_bytes(), str(override))
        workspace = dict(loaded) if "config" in loaded else {"config": dict(loaded)}
    workspace.setdefault("config", {})
    for assignment in assignments:
        _set(workspace["config"], assignment)
    block = polycrate.snapshot(block_poly, workspace, str(ROOT / "artifacts"))["block"]
    try:
        plan = builder.plan_from_block(block)
    except ConfigError as exc:
        raise ValueError(f"the block refuses this config: {exc}") from exc
    for step in plan.steps:
        obj = step.obj
        if obj.get("kind") == "ConfigMap" and obj["metadata"]["name"] == f"{block['name']}-waf":
            return str(obj["data"][waf.CONFIG_FILE])
    raise ValueError("this config does not enable the WAF (waf.enabled: true), so the block renders no settings")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--override", type=Path, help="workspace block entry or config mapping (YAML)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="change a config key")
    args = parser.parse_args()
    try:
        sys.stdout.write(settings_file(args.override, args.set))
    except (ValueError, inputs.InputError, OSError) as exc:
        print(f"waf_settings: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
