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


# The tests that run a binary built from Go (envoy-waf from `make waf-build`, helm from `make tools`): marked
# `go_binary` here, in one place, so `make unit` runs everything else on a machine with Python alone and
# `make unit-go` runs these once the builds exist. A whole file, or one test function (all its parameters).
GO_BACKED = (
    "tests/unit/test_waf_contract.py",
    "tests/unit/test_crds.py::test_real_crd_chart_gives_only_crds",
    "tests/unit/test_controller.py::test_the_chart_hands_the_runtime_flag_to_the_controller",
    "tests/unit/test_controller.py::test_the_chart_renders_the_controller_settings",
    "tests/unit/test_crds.py::test_the_gate_judges_the_crds_of_the_release_the_block_installs",
    "tests/unit/test_hostile_input.py::test_good_extra_directives_pass_both_checks",
    "tests/unit/test_hostile_input.py::test_the_binary_judges_what_the_structural_check_cannot",
    "tests/unit/test_waf_component.py::test_settings_are_what_the_service_accepts",
    "tests/unit/test_waf_component.py::test_crs_settings_reach_the_service",
    "tests/unit/test_waf_component.py::test_response_inspection_reaches_the_service",
    "tests/unit/test_waf_component.py::test_workers_reach_the_service",
    "tests/unit/test_waf_component.py::test_hostile_body_bounds_reach_the_service",
    "tests/test_render_playbook.py::test_render_asks_the_waf_compiler_and_removes_stale",
    "tests/unit/test_pull_secrets.py::test_gateway_helm_puts_them_on_the_controller_certgen_and_its_default_proxy",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        function = item.nodeid.split("[", 1)[0]
        if path in GO_BACKED or function in GO_BACKED:
            item.add_marker(pytest.mark.go_binary)


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
