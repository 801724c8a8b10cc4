#!/usr/bin/env python3
"""Write the extra-vars file Polycrate would pass: block.poly merged with a workspace-style override.

    tools/snapshot.py --override my-config.yml --artifacts artifacts -o snapshot.yml
    ansible-playbook -e @snapshot.yml playbooks/render.yml

The override file holds a workspace.poly `blocks:` entry ({name, config}) or just the config mapping. It is
read as Polycrate reads YAML, within bounds (envoy_block.inputs: size, alias expansion, nesting, duplicate
keys, plain tags only); a file it refuses gets one line on stderr and exit 2, before any work.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils"))

from envoy_block import inputs, polycrate  # noqa: E402


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
        try:
            loaded = inputs.load_mapping(args.override.read_bytes(), str(args.override))
        except (inputs.InputError, OSError) as exc:
            print(f"snapshot: {exc}", file=sys.stderr)
            return 2
        workspace = loaded if "config" in loaded else {"config": loaded}
    artifacts = str(Path(args.artifacts).resolve())
    data = polycrate.snapshot(block_poly, workspace, artifacts, args.kubeconfig)
    args.output.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
