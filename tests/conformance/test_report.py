"""How a conformance run is judged against Envoy Gateway's v1.9.0 report (tests/conformance/report.py), and
what the run reads from the pinned suite (its namespaces and images): no cluster needed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conformance import report
from tests.conformance.__main__ import suite_namespaces
from tools.oci import OCIError
from tools.oci.conformance import manifest_images, source_of


def _report(**override: tuple[int, int, int]) -> dict[str, Any]:
    """A report with upstream's passes, `override` replacing (passed, failed, skipped) by `PROFILE_class`."""
    profiles = []
    for name in report.PROFILES:
        entry: dict[str, Any] = {"name": name}
        for index, kind in enumerate(("core", "extended")):
            key = f"{name.replace('-', '_')}_{kind}"
            passed, failed, skipped = override.get(key, (report.UPSTREAM_PASSED[name][index], 0, 0))
            section: dict[str, Any] = {"statistics": {"Passed": passed, "Failed": failed, "Skipped": skipped}}
            if failed:
                section["failedTests"] = [f"Broken{i}" for i in range(failed)]
            entry[kind] = section
        profiles.append(entry)
    return {
        "kind": "ConformanceReport",
        "profiles": profiles,
        "succeededProvisionalTests": list(report.UPSTREAM_PROVISIONAL),
    }


@pytest.mark.parametrize(
    ("override", "core_only", "expected"),
    [
        ({}, False, []),
        ({}, True, []),
        # More passes than upstream (a test it skipped) is no shortfall.
        ({"GATEWAY_HTTP_core": (38, 0, 0)}, False, []),
        (
            {"GATEWAY_TLS_extended": (13, 1, 0)},
            False,
            ["GATEWAY-TLS extended: 1 failed: Broken0", "GATEWAY-TLS extended: 13 passed, upstream 14"],
        ),
        ({"GATEWAY_GRPC_core": (14, 0, 1)}, True, ["GATEWAY-GRPC core: 14 passed, upstream 15"]),
        # Core only: the extended classes are not run, so not judged.
        ({"GATEWAY_HTTP_extended": (0, 0, 55)}, True, []),
        ({"GATEWAY_HTTP_extended": (0, 0, 55)}, False, ["GATEWAY-HTTP extended: 0 passed, upstream 55"]),
    ],
)
def test_shortfalls_name_each_profile_class_below_upstream(
    override: dict[str, tuple[int, int, int]], core_only: bool, expected: list[str]
) -> None:
    assert report.shortfalls(_report(**override), core_only=core_only) == expected


def test_a_missing_profile_is_a_shortfall() -> None:
    partial = _report()
    partial["profiles"] = partial["profiles"][:2]
    assert report.shortfalls(partial, core_only=True) == ["GATEWAY-GRPC core: not in the report"]


def test_table_puts_upstream_beside_each_report() -> None:
    text = report.table({"eg-dedicated": _report(), "eg-shared": _report(GATEWAY_HTTP_core=(30, 7, 0))})
    assert "| GATEWAY-HTTP | core | 37 / 0 / 0 | 37 / 0 / 0 | 30 / 7 / 0 |" in text.splitlines()


def test_load_refuses_what_is_not_a_report(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("kind: ConfigMap\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not a ConformanceReport"):
        report.load(path)


def _suite(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_namespaces_and_images_come_from_base_and_tests_not_mesh(tmp_path: Path) -> None:
    root = _suite(
        tmp_path,
        {
            "base/manifests.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: infra\n---\n"
            "kind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n"
            "        - image: registry.k8s.io/gateway-api/echo-basic:v1.5.1\n",
            "tests/a.yaml": "kind: Namespace\nmetadata:\n  name: made-by-a-test\n",
            "mesh/manifests.yaml": "kind: Namespace\nmetadata:\n  name: mesh\n"
            "        - image: registry.k8s.io/gateway-api/echo-advanced:v1.5.1\n",
        },
    )
    assert suite_namespaces(root) == ["infra", "made-by-a-test"]
    assert manifest_images(root) == {"registry.k8s.io/gateway-api/echo-basic:v1.5.1"}


def test_an_image_nothing_builds_is_named() -> None:
    with pytest.raises(OCIError, match=re.escape("registry.k8s.io/other:v1")):
        source_of("registry.k8s.io/other:v1")


def test_the_core_run_declares_only_features_upstream_supports() -> None:
    """The core run's extra features are upstream's: declaring one Envoy Gateway lacks would run tests that
    upstream's report never ran."""
    assert set(report.CORE_RUN_FEATURES) - {"Gateway"} <= set(report.UPSTREAM_FEATURES)


def test_failures_after_the_report_are_read_from_the_output() -> None:
    """Parallel tests run after the report is written: the `go test -v` output names them, the report not."""
    log = (
        "--- FAIL: TestConformanceOptions_EmptyYAML (0.00s)\n"
        "    --- PASS: TestConformance/HTTPRouteSimpleSameNamespace (1.00s)\n"
        "    --- FAIL: TestConformance/ListenerSetProtocolConflict (180.00s)\n"
        "        --- FAIL: TestConformance/ListenerSetProtocolConflict/sub (1.00s)\n"
    )
    assert report.failed_in_log(log) == ["ListenerSetProtocolConflict"]


def test_a_provisional_test_upstream_passed_must_pass() -> None:
    missing = _report()
    missing["succeededProvisionalTests"].remove("UDPRoute")
    assert report.shortfalls(missing, core_only=False) == [
        "provisional test upstream passed, not passed here: UDPRoute"
    ]
    assert report.shortfalls(missing, core_only=True) == []


SETUP_LOG = """\
    helpers.go:279: 2026-12-06T00:46:30Z: gateway-conformance-infra/backend-namespaces Gateway not Accepted yet
    suite.go:436:
        \tError Trace:\tsigs.k8s.io/gateway-api/conformance@v1.6.1/utils/kubernetes/helpers.go:312
        \tError:      \tReceived unexpected error:
        \t            \tcontext deadline exceeded
        \tTest:       \tTestConformance
        \tMessages:   \terror waiting for gateway-conformance-infra namespaces to be ready
--- FAIL: TestConformance (322.60s)
"""


def test_a_setup_that_stops_is_reported_with_its_reason() -> None:
    """eg-shared's setup never completes (docs/conformance.md): the run writes upstream's format anyway, every
    profile a failure that passed nothing, with why; judged short of upstream, never as passing."""
    reason = report.setup_error(SETUP_LOG)
    assert reason == (
        "error waiting for gateway-conformance-infra namespaces to be ready (context deadline exceeded); "
        "last seen: gateway-conformance-infra/backend-namespaces Gateway not Accepted yet"
    )
    written = report.setup_failed("eg-shared", "v1.9.1 (block)", reason, "2026-12-06T00:00:00Z", core_only=False)
    assert written["kind"] == "ConformanceReport"
    assert written["mode"] == "eg-shared"
    assert [p["name"] for p in written["profiles"]] == list(report.PROFILES)
    for profile in written["profiles"]:
        assert reason in profile["summary"]
        assert {profile[k]["result"] for k in ("core", "extended")} == {"failure"}
    assert report.outcomes(written)[("GATEWAY-HTTP", "core")] == report.Outcome(0, 0, 0)
    problems = report.shortfalls(written, core_only=False)
    assert "GATEWAY-HTTP core: 0 passed, upstream 37" in problems
    assert "| GATEWAY-TLS | core | 20 / 0 / 0 | 0 / 0 / 0 |" in report.table({"eg-shared": written})
    core = report.setup_failed("eg-shared", "v", reason, "d", core_only=True)
    assert all("extended" not in p for p in core["profiles"])
    assert report.setup_error("nothing useful") == "the suite wrote no report; its output says why"
