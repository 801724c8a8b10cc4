"""Shared fixtures: the block root, and the pure package on the import path (pyproject sets it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import output

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils"


@pytest.fixture
def root() -> Path:
    return ROOT


def pytest_configure(config: pytest.Config) -> None:
    output.remember(config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """pytest-xdist: a worker is done; keep the lines its tests showed (tests/support/output.py)."""
    output.COLLECTED.extend(getattr(node, "workeroutput", {}).get(output.WORKER_KEY, []))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if output.COLLECTED:
        terminalreporter.section("what the tests showed (each worker's)")
        for text in output.COLLECTED:
            terminalreporter.write_line(text)
