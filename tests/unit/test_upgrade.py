"""Upgrade decisions, made from install's one read before anything is written (release.py, lifecycle.py,
crds.py): which Envoy Gateway the cluster runs, whether chart.version moves it forward, by a patch, one
minor or more, or back; the controller image belongs to the chart's release; the CRDs a release's bundle
must give; what status and plan say while the controller or the proxies still roll.

Mutation checks (done once each): comparing versions as strings (so "v1.10.0" < "v1.9.0") turned
test_versions_compare_as_numbers red; dropping the downgrade problem from install_state turned
test_a_downgrade_stops_install_before_anything_is_written red; requiring TCPRoute/UDPRoute for every
release turned test_the_v1_8_bundle_needs_no_tcproute_or_udproute red; rolled_out without the `replicas`
test (an old ReplicaSet's pod still there) turned test_half_upgraded_proxies_are_reported_rolling red.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from envoy_block import crds, lifecycle, release
from envoy_block.plan import Plan
from tests.support.helpers import plan, with_gateway
from tests.unit.test_lifecycle import ROLLED_OUT, _read


def _deployment(image: str, generation: int = 1, **status: Any) -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "metadata": {"name": "envoy-gateway", "generation": generation},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "envoy-gateway", "image": image}]}}},
        "status": {**ROLLED_OUT, "conditions": [{"type": "Available", "status": "True"}], **status},
    }


@pytest.mark.parametrize(
    ("installed", "configured", "kind"),
    [
        (None, "v1.9.0", "fresh"),
        ("v1.9.0", "1.9.0", "same"),
        ("v1.9.0", "v1.9.1", "patch"),
        ("v1.8.3", "v1.9.0", "upgrade"),
        ("v1.9.0", "v1.10.0", "upgrade"),
        ("v1.8.3", "v1.10.0", "skip"),
        ("v1.9.0", "v1.8.3", "downgrade"),
        ("v1.9.1", "v1.9.0", "downgrade"),
        ("v1.10.0", "v1.9.0", "downgrade"),
        ("latest", "v1.9.0", "unknown"),
    ],
)
def test_versions_compare_as_numbers(installed: str | None, configured: str, kind: str) -> None:
    assert release.upgrade_step(installed, configured, allow_downgrade=False)["kind"] == kind


def test_a_downgrade_is_refused_with_what_breaks_and_how_to_force_it() -> None:
    step = release.upgrade_step("v1.9.0", "v1.8.3", allow_downgrade=False)
    (problem,) = step["problems"]
    assert "older than the Envoy Gateway v1.9.0" in problem
    assert "CRDs" in problem
    assert "chart.allow_downgrade: true" in problem
    assert "Nothing was changed" in problem
    forced = release.upgrade_step("v1.9.0", "v1.8.3", allow_downgrade=True)
    assert not forced["problems"]
    assert forced["warnings"]


def test_a_skipped_minor_release_warns_with_the_release_notes() -> None:
    step = release.upgrade_step("v1.8.3", "v1.10.0", allow_downgrade=False)
    assert not step["problems"], "Envoy Gateway's notes ask for steps per minor release, they do not forbid skipping"
    assert "skips minor releases" in step["warnings"][0]
    assert any("v1.9 upgrade notes" in w for w in step["warnings"]), "the skipped release's notes are named"
    assert step["summary"].startswith("skip v1.8.3 -> v1.10.0; chart.version v1.10.0 skips")
    one = release.upgrade_step("v1.8.3", "v1.9.0", allow_downgrade=False)
    assert one["summary"].startswith("upgrade v1.8.3 -> v1.9.0; Envoy Gateway v1.9 upgrade notes: ")
    assert not any("skips" in w for w in one["warnings"])


def test_installed_version_is_what_runs() -> None:
    """The controller's image tag wins over helm's record: after a failed upgrade the record names the new
    chart while the old controller still runs."""
    record = {"chart_version": "v1.9.0", "status": "failed"}
    assert release.installed_version(record, _deployment("docker.io/envoyproxy/gateway:v1.8.3")) == "v1.8.3"
    assert release.installed_version(record, None) == "v1.9.0"
    assert release.installed_version(None, _deployment("mirror.example/eg:custom")) is None
    assert release.installed_version(None, _deployment("docker.io/envoyproxy/gateway:v1.9.0@sha256:" + "a" * 64))


def test_the_controller_image_must_be_the_charts_release() -> None:
    assert release.image_problems("v1.9.0", "docker.io/envoyproxy/gateway:v1.9.0") == []
    assert release.image_problems("v1.8.3", "mirror.example/envoyproxy/gateway:custom-build") == []
    (problem,) = release.image_problems("v1.8.3", "docker.io/envoyproxy/gateway:v1.9.0")
    assert "image.controller.tag: v1.8.3" in problem
    assert "distroless-v1.38.3" in problem


def _state(p: Plan, deployment: dict[str, Any] | None, proxies: list[dict[str, Any]] = []) -> Any:  # noqa: B006
    results = _read(p, record=None, deployment=deployment)
    for result in results:
        if result["item"]["purpose"] == "proxies":
            result["resources"] = proxies
    return lifecycle.install_state(results, p, crds_current=True)


def test_a_downgrade_stops_install_before_anything_is_written() -> None:
    old = plan(with_gateway({"chart": {"version": "v1.8.3"}, "image": {"controller": {"tag": "v1.8.3"}}}))
    state = _state(old, _deployment("docker.io/envoyproxy/gateway:v1.9.0"))
    assert any("older than the Envoy Gateway v1.9.0" in p for p in state["problems"]), state["problems"]
    forced = replace(old, controller=replace(old.controller, allow_downgrade=True))
    assert _state(forced, _deployment("docker.io/envoyproxy/gateway:v1.9.0"))["problems"] == []
    assert _state(old, _deployment("docker.io/envoyproxy/gateway:v1.8.3"))["upgrade"]["kind"] == "same"
    unmanaged = plan(with_gateway({"chart": {"version": "v1.8.3"}, "controller": {"install": False}}))
    assert _state(unmanaged, _deployment("docker.io/envoyproxy/gateway:v1.9.0"))["problems"] == [], (
        "a controller the block does not install is not the block's to guard"
    )


def test_a_controller_image_of_another_release_stops_install() -> None:
    p = plan(with_gateway({"chart": {"version": "v1.8.3"}}))  # image.controller stays v1.9.1
    assert any("image.controller.tag v1.9.1 is not chart.version v1.8.3" in m for m in _state(p, None)["problems"])


def _proxy(image: str, **status: Any) -> dict[str, Any]:
    labels = dict(item.split("=", 1) for item in lifecycle.PROXY_SELECTOR)
    return {
        "kind": "Deployment",
        "metadata": {"name": "envoy-eg-shared", "namespace": "envoy-gateway-system", "generation": 2, "labels": labels},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "envoy", "image": image}]}}},
        "status": {**ROLLED_OUT, "observedGeneration": 2, **status},
    }


NEW_ENVOY = "docker.io/envoyproxy/envoy:distroless-v1.39.0"


def test_half_upgraded_proxies_are_reported_rolling() -> None:
    """Controller v1.9.0 running, a proxy Deployment already on v1.9.0's Envoy but its new pod not up and the
    old one still there: status is unhealthy and says so, plan and install say what still rolls."""
    p = plan(with_gateway())
    controller = _deployment("docker.io/envoyproxy/gateway:v1.9.0")
    rolling = _proxy(NEW_ENVOY, updatedReplicas=0, replicas=2)
    rows = lifecycle.status_rows(p, [rolling], controller)
    assert rows[0]["ok"]
    assert "v1.9.0" in rows[0]["detail"]
    (proxy,) = [r for r in rows if r["what"] == "proxies"]
    assert not proxy["ok"]
    assert proxy["detail"] == f"rolling to {NEW_ENVOY}, 0/1 updated"
    assert _state(p, controller, [rolling])["rollout"] == [
        f"proxies/envoy-eg-shared: rolling to {NEW_ENVOY}, 0/1 updated"
    ]
    surge = _proxy(NEW_ENVOY, updatedReplicas=1, availableReplicas=1, replicas=2)  # the old pod terminating
    assert not next(r for r in lifecycle.status_rows(p, [surge], controller) if r["what"] == "proxies")["ok"]
    done = _proxy(NEW_ENVOY)
    assert all(r["ok"] for r in lifecycle.status_rows(p, [done], controller) if r["what"] in ("controller", "proxies"))
    assert _state(p, controller, [done])["rollout"] == []


def test_a_controller_still_rolling_out_is_reported() -> None:
    p = plan(with_gateway())
    rolling = _deployment("docker.io/envoyproxy/gateway:v1.9.0", generation=2)  # spec not yet seen
    assert not lifecycle.status_rows(p, [], rolling)[0]["ok"]
    assert "rolling out" in lifecycle.status_rows(p, [], rolling)[0]["detail"]
    assert _state(p, rolling)["rollout"] == ["controller envoy-gateway rolling out to v1.9.0"]


def test_the_v1_8_bundle_needs_no_tcproute_or_udproute() -> None:
    """Gateway API v1.5.1 (Envoy Gateway v1.8) has TCPRoute/UDPRoute in the experimental channel only; v1.6.1
    (v1.9) in the standard one. Requiring them of v1.8.3's chart stopped install of the real chart."""
    old = crds.required(True, "standard", "v1.8.3")
    new = crds.required(True, "standard", "v1.9.0")
    assert set(new) - set(old) == set(crds.STANDARD_SINCE_1_9)
    assert crds.required(True, "standard") == new, "unknown: the newest release's bundle"
    assert set(crds.STANDARD_SINCE_1_9) <= set(crds.required(True, "experimental", "v1.8.3"))


def test_proxies_are_read_with_the_rest() -> None:
    p = plan(with_gateway())
    (query,) = [q for q in lifecycle.install_lookups(p) if q["purpose"] == "proxies"]
    assert query["label_selectors"] == lifecycle.PROXY_SELECTOR
    assert not query["metadata_only"]
    assert "namespace" not in query, "GatewayNamespace mode puts proxies beside their Gateways"


@pytest.mark.parametrize(("installed", "configured"), [("v1.9.0", "v1.9.1"), ("v1.9.0", "v1.10.0")])
def test_leaving_v1_9_0_warns_that_running_proxies_lose_their_certificates(installed: str, configured: str) -> None:
    """envoyproxy/gateway#9918: the summary says what the block does about it and what the operator must not do."""
    step = release.upgrade_step(installed, configured, allow_downgrade=False)
    (note,) = [w for w in step["warnings"] if "#9918" in w]
    assert "loses its TLS certificates 15 s after" in note
    assert "maxSurge 100%" in note
    assert "hold no proxy pod back" in note
    assert note in step["summary"]


@pytest.mark.parametrize(("installed", "configured"), [("v1.8.3", "v1.9.1"), ("v1.9.1", "v1.9.1"), (None, "v1.9.0")])
def test_other_steps_do_not_carry_the_v1_9_0_note(installed: str | None, configured: str) -> None:
    step = release.upgrade_step(installed, configured, allow_downgrade=False)
    assert not [w for w in step["warnings"] if "#9918" in w]
