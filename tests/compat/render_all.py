"""Print, as JSON, every file the pure core renders for each config named on stdin, and the CRDs it reads
from each folder named there (stdin: JSON {"configs": {name: config}, "crd_folders": [path, ...]}).

Run by tests/compat/test_two_pythons.py under each Python environment (the project's .venv and Polycrate's
image, .venv-image) so their outputs can be compared byte for byte. Uses only the block's own runtime
libraries (PyYAML, jsonschema): no pytest, nothing from the test tools.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils"))

from envoy_block import builder, config, crds, polycrate, render  # noqa: E402


def main() -> int:
    request = json.load(sys.stdin)
    configs = request["configs"]
    block_poly = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    out: dict[str, dict[str, str]] = {}
    for name, cfg in sorted(configs.items()):
        snap = polycrate.snapshot(block_poly, {"config": cfg}, "unused")
        try:
            out[name] = render.files(builder.plan_from_block(snap["block"]))
        except config.ConfigError as exc:  # bad configs must fail alike too
            out[name] = {"error": str(exc)}
    for folder in request["crd_folders"]:  # install reads CRDs with the same loader (libyaml or not)
        out[f"crds: {folder}"] = {"documents.json": json.dumps(crds.folder_documents(folder), sort_keys=True)}
    json.dump(out, sys.stdout, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
