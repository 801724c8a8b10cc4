"""Shared fixtures: the block root, and the pure package on the import path (pyproject sets it)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils"


@pytest.fixture
def root() -> Path:
    return ROOT
