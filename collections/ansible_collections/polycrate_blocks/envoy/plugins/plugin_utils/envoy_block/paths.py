"""Where the block's own files are, found from this package's fixed place inside the block."""

from __future__ import annotations

from pathlib import Path

# envoy_block -> plugin_utils -> plugins -> envoy -> polycrate_blocks -> ansible_collections
# -> collections -> block root
BLOCK_ROOT = Path(__file__).resolve().parents[7]
# Not `schema.json`: Polycrate validates a file of that name itself, and v0.23.3 cannot (docs/polycrate.md,
# "The schema is config.schema.json"). The block validates its config against this file in every action.
SCHEMA_PATH = BLOCK_ROOT / "config.schema.json"
BLOCK_POLY_PATH = BLOCK_ROOT / "block.poly"
# The WAF image's build context (waf/Dockerfile), shipped with the block for the waf-image action.
WAF_CONTEXT = BLOCK_ROOT / "waf"
