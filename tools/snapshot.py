#!/usr/bin/env python3
"""Write the extra-vars file Polycrate would pass: block.poly merged with a workspace-style override.

    tools/snapshot.py --override my-config.yml --artifacts artifacts -o snapshot.yml
    ansible-playbook -e @snapshot.yml playbooks/render.yml

The override file holds a workspace.poly `blocks:` entry ({name, config}) or just the config mapping.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils"))

from envoy_block import polycrate  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--override", type=Path, help="workspace block entry or config mapping (YAML)")
    parser.add_argument("--artifacts", default="artifacts", help="block.artifacts.path (default: artifacts)")
    parser.add_argument("--kubeconfig", help="block.kubeconfig.path")
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()

    block_poly = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    workspace: dict[str, object] = {}
    if args.override:
        loaded = yaml.safe_load(args.override.read_text(encoding="utf-8")) or {}
        workspace = loaded if "config" in loaded else {"config": loaded}
    artifacts = str(Path(args.artifacts).resolve())
    data = polycrate.snapshot(block_poly, workspace, artifacts, args.kubeconfig)
    args.output.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
