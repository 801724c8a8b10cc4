"""The known-vulnerable releases (advisories.TABLE): which tags each row catches, the warnings render, plan and
install give for the configured controller and proxy and for what the WAF image carries, and what `status`
reports for the images the controller's and proxies' pods run. Mutation: `advisories-fixed-boundary`
(tools/mutate.py) takes the fixed release for affected and turns these red."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from envoy_block import advisories, lifecycle
from envoy_block.components import waf
from tests.support.helpers import load, plan

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("tag", "parsed"),
    [
        ("v1.9.1", (1, 9, 1, False)),
        ("1.39.6", (1, 39, 6, False)),
        ("distroless-v1.39.6", (1, 39, 6, False)),
        ("v1.39.2-rc.1", (1, 39, 2, True)),
        ("distroless-v1.39.1@sha256:" + "f" * 64, (1, 39, 1, False)),
        ("v1.9.1+build.5", (1, 9, 1, False)),
        ("latest", None),
        ("distroless-dev", None),
        ("v1.9", None),
    ],
)
def test_version_of_a_tag(tag: str, parsed: tuple[int, int, int, bool] | None) -> None:
    assert advisories.version(tag) == parsed


# (product, tag, advisories expected, in table order): each row's edges, below, at and above its fix.
CASES = [
    (advisories.ENVOY, "distroless-v1.39.1", ["CVE-2026-35189", "compromised CA certificates in the distroless image"]),
    (
        advisories.ENVOY,
        "distroless-v1.39.2-rc.1",
        ["CVE-2026-35189", "compromised CA certificates in the distroless image"],
    ),
    (advisories.ENVOY, "distroless-v1.39.2", ["compromised CA certificates in the distroless image"]),
    (advisories.ENVOY, "distroless-v1.39.5", ["compromised CA certificates in the distroless image"]),
    (advisories.ENVOY, "distroless-v1.39.6", []),
    (advisories.ENVOY, "distroless-v1.40.0", []),
    # The CA rebuild is the distroless image's: another variant of 1.39.5 is not affected by it.
    (advisories.ENVOY, "v1.39.5", []),
    (advisories.ENVOY, "v1.39.1", ["CVE-2026-35189"]),
    (advisories.ENVOY, "latest", []),
    (advisories.ENVOY_GATEWAY, "v1.9.3", []),
    (advisories.ENVOY_GATEWAY, "v1.9.2", []),
    (advisories.ENVOY_GATEWAY, "v1.9.1", [row.advisory for row in advisories.TABLE if row.fixed == "v1.9.2"]),
    (
        advisories.ENVOY_GATEWAY,
        "v1.9.0",
        [row.advisory for row in advisories.TABLE if row.product == advisories.ENVOY_GATEWAY],
    ),
    (advisories.CORAZA, "v3.8.0", ["Coraza v3.8.1 security release"]),
    (advisories.CORAZA, "v3.8.1", []),
    # CRS: the 4.25 LTS and the two newest minor releases are in the support window, 4.26-4.28 and <4.25 not.
    (advisories.CRS, "v4.24.1", ["out of the CRS support window"]),
    (advisories.CRS, "v4.25.0", []),
    (advisories.CRS, "v4.25.9", []),
    (advisories.CRS, "v4.26.0", ["out of the CRS support window"]),
    (advisories.CRS, "v4.28.0", ["out of the CRS support window"]),
    (advisories.CRS, "v4.29.0", []),
    (advisories.CRS, "v4.30.0", []),
]


@pytest.mark.parametrize(("product", "tag", "expected"), CASES, ids=[f"{p}-{t}" for p, t, _ in CASES])
def test_which_rows_catch_a_tag(product: str, tag: str, expected: list[str]) -> None:
    assert [row.advisory for row in advisories.affecting(product, tag)] == expected


@pytest.mark.parametrize(
    ("tag", "fixed"),
    [
        ("v1.9.1", False),
        ("v1.9.2-rc.1", False),
        ("v1.9.2", True),
        ("v1.9.3", True),
        ("v1.10.0", True),
        ("latest", None),
    ],
)
def test_whether_a_tag_carries_a_rows_fix(tag: str, fixed: bool | None) -> None:
    """advisories.fixes: the one comparison the EnvoyProxy guard's warning and the EnvoyProxyPatch runtime flag
    are derived from (the rows' first fixed version is the only place v1.9.2 is written)."""
    for row in (advisories.ENVOY_PROXY_COLLISIONS, advisories.ENVOY_PROXY_PATCH):
        assert row in advisories.TABLE
        assert advisories.fixes(row, tag) is fixed


def test_every_row_is_well_formed() -> None:
    for row in advisories.TABLE:
        assert advisories.version(row.fixed) is not None, row
        assert not row.introduced or advisories.version(row.introduced) < advisories.version(row.fixed), row  # type: ignore[operator]
        assert row.product in (advisories.ENVOY_GATEWAY, advisories.ENVOY, advisories.CORAZA, advisories.CRS), row
        assert all((row.advisory, row.what, row.source)), row


def test_the_line_names_each_advisory_its_fix_and_the_release_that_fixes_all() -> None:
    line = advisories.findings(advisories.ENVOY, "distroless-v1.39.1")
    assert line == (
        "Envoy distroless-v1.39.1 has known issues: CVE-2026-35189 (first fixed in v1.39.2); compromised CA "
        "certificates in the distroless image (first fixed in v1.39.6). v1.39.6 or newer fixes all of them"
    )
    assert advisories.findings(advisories.ENVOY, "distroless-v1.39.6") is None


def test_the_default_proxy_image_has_no_known_issue() -> None:
    """Both EnvoyProxy objects run distroless-v1.39.6 by default (CVE-2026-35189 and the CA rebuild)."""
    cfg = load()
    assert cfg.get("image.proxy.tag") == "distroless-v1.39.6"
    assert not [w for w in cfg.warnings if w.startswith("config.image.proxy")]
    for step in plan().ordered():
        if step.obj["kind"] == "EnvoyProxy":
            container = next(iter(step.obj["spec"]["provider"]["kubernetes"].values()))["container"]
            assert container["image"] == "docker.io/envoyproxy/envoy:distroless-v1.39.6"


def test_render_warns_about_the_configured_releases() -> None:
    warnings = load({"image": {"proxy": {"tag": "distroless-v1.39.1"}}}).warnings
    proxy = [w for w in warnings if w.startswith("config.image.proxy.tag:")]
    assert len(proxy) == 1
    assert "CVE-2026-35189 (first fixed in v1.39.2)" in proxy[0]
    assert "v1.39.6 or newer" in proxy[0]
    # The default controller (v1.9.1, the newest obtainable and the one the block is tested for) is not warned
    # about on every render: docs/security.md and status name its issues.
    assert not [w for w in warnings if "Envoy Gateway" in w]


def test_an_older_controller_release_is_warned_about() -> None:
    warnings = load({"chart": {"version": "v1.9.0"}, "image": {"controller": {"tag": "v1.9.0"}}}).warnings
    controller = [w for w in warnings if "Envoy Gateway v1.9.0" in w]
    assert len(controller) == 1
    assert controller[0].startswith("config.image.controller.tag:")
    assert "EnvoyProxy collisions with the controller (v1.9.2 security fix) (first fixed in v1.9.2)" in controller[0]
    assert "docs/security.md#known-vulnerable-releases" in controller[0]


def test_a_fixed_release_is_not_warned_about() -> None:
    fixed = {"chart": {"version": "v1.9.3"}, "image": {"controller": {"tag": "v1.9.3"}}}
    assert not [w for w in load(fixed).warnings if "Envoy Gateway" in w]


def test_chart_version_is_named_when_it_differs_from_the_controller_tag() -> None:
    warnings = load({"chart": {"version": "v1.8.3"}, "image": {"controller": {"tag": "v1.9.3"}}}).warnings
    assert [w.split(":", 1)[0] for w in warnings if "Envoy Gateway" in w] == ["config.chart.version"]


def test_the_waf_warns_about_what_its_image_carries() -> None:
    own = {"registry": "registry.example", "repository": "envoy-waf", "tag": "1"}
    warnings = [w for w in load({"waf": {"enabled": True, "image": own}}).warnings if "carries" in w]
    assert warnings == [
        "config.waf.image: an image built from waf/ carries OWASP CRS v4.28.0. OWASP CRS v4.28.0 has known issues: "
        "out of the CRS support window (first fixed in v4.29.0). v4.29.0 or newer fixes all of them; rebuild the "
        "image with such a release (waf/BUILD.md) and set waf.image.tag (docs/security.md#known-vulnerable-releases)"
    ]
    assert not [w for w in load().warnings if "carries" in w]  # no WAF, no warning


def test_what_the_waf_ships_is_what_waf_builds() -> None:
    """waf.SHIPPED names the Coraza of waf/go.mod and the CRS of waf/Dockerfile: a bump of either without
    the table's check goes red here."""
    go_mod = (ROOT / "waf/go.mod").read_text(encoding="utf-8")
    dockerfile = (ROOT / "waf/Dockerfile").read_text(encoding="utf-8")
    coraza = re.search(r"github\.com/corazawaf/coraza/v3 (v\S+)", go_mod)
    crs = re.search(r"ARG CRS_VERSION=(\S+)", dockerfile)
    assert coraza
    assert crs
    assert dict(waf.SHIPPED) == {advisories.CORAZA: coraza.group(1), advisories.CRS: f"v{crs.group(1)}"}


def _pod(container: str, image: str, *, started: str | None = None) -> dict[str, Any]:
    _pod.count += 1  # type: ignore[attr-defined]
    pod: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {"namespace": "envoy", "name": f"pod-{_pod.count}"},  # type: ignore[attr-defined]
        "spec": {"containers": [{"name": container, "image": image}]},
    }
    if started:
        pod["status"] = {"containerStatuses": [{"name": container, "image": started}]}
    return pod


_pod.count = 0  # type: ignore[attr-defined]


def test_status_reports_known_issues_of_what_the_pods_run() -> None:
    p = plan()
    queries = lifecycle.status_lookups(p)
    pod_queries = [q for q in queries if q["purpose"] == "pods"]
    assert {q["kind"] for q in pod_queries} == {"Pod"}
    assert len(pod_queries) == 2
    pods = [
        _pod("envoy-gateway", "docker.io/envoyproxy/gateway:v1.9.1"),
        # What the runtime reports wins over the spec (a pod started before a spec change shows what it runs).
        _pod(
            "envoy",
            "docker.io/envoyproxy/envoy:distroless-v1.39.6",
            started="docker.io/envoyproxy/envoy:distroless-v1.39.1",
        ),
        _pod("envoy", "docker.io/envoyproxy/envoy:distroless-v1.39.1"),
        _pod("envoy", "docker.io/envoyproxy/envoy:distroless-v1.39.6"),
        _pod("shutdown-manager", "docker.io/envoyproxy/gateway:v1.9.1"),  # not a RUNNING container
    ]
    results = [{"item": q, "resources": pods if q["purpose"] == "pods" else []} for q in queries]
    report = lifecycle.status(p, results).to_dict()
    # Every query returned every pod here: each pod still counts once.
    assert report["advisories"] == [
        "2 pod(s) run docker.io/envoyproxy/envoy:distroless-v1.39.1: "
        + str(advisories.findings(advisories.ENVOY, "distroless-v1.39.1")),
        "1 pod(s) run docker.io/envoyproxy/gateway:v1.9.1: "
        + str(advisories.findings(advisories.ENVOY_GATEWAY, "v1.9.1")),
    ]
    assert report["lines"][-3] == "Known issues of what runs (docs/security.md#known-vulnerable-releases):"
    # Reported, never unhealthy by itself: the controller's row is what makes this report unhealthy.
    assert [r["what"] for r in report["rows"] if not r["ok"]][:1] == ["controller"]


def test_status_without_known_issues_adds_no_lines() -> None:
    p = plan()
    queries = lifecycle.status_lookups(p)
    pods = [_pod("envoy", "docker.io/envoyproxy/envoy:distroless-v1.39.6")]
    results = [{"item": q, "resources": pods if q["purpose"] == "pods" else []} for q in queries]
    report = lifecycle.status(p, results).to_dict()
    assert report["advisories"] == []
    assert not any("Known issues" in line for line in report["lines"])
