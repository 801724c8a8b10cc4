"""Where the block's own files are, found from this package's fixed place inside the block."""

from __future__ import annotations

from pathlib import Path

# envoy_block -> plugin_utils -> plugins -> envoy -> polycrate_blocks -> ansible_collections
# -> collections -> block root
BLOCK_ROOT = Path(__file__).resolve().parents[7]
SCHEMA_PATH = BLOCK_ROOT / "schema.json"
BLOCK_POLY_PATH = BLOCK_ROOT / "block.poly"
