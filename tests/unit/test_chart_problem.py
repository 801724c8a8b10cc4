"""Install stops before touching the release when chart.version is not at chart.repo.url
(components/controller.chart_problem, from `helm show chart REF --version V`). Guards: a version helm cannot find
stops with helm's own words; a local chart (which ignores --version) of another version stops too; the right
version, with or without a leading v, passes. The cluster test test_a_chart_version_that_does_not_exist runs it
with real helm against the real registry."""

from __future__ import annotations

from envoy_block.components.controller import chart_problem

HELM = {"chart_version": "v1.9.1", "chart_ref": "oci://registry.example/envoyproxy/gateway-helm"}


def test_the_version_there_passes() -> None:
    assert chart_problem(HELM, 0, "apiVersion: v2\nname: gateway-helm\nversion: v1.9.1\n", "") == ""
    assert chart_problem(HELM, 0, "name: gateway-helm\nversion: 1.9.1\n", "") == ""


def test_a_version_helm_cannot_find_stops_with_helms_words() -> None:
    got = chart_problem(HELM, 1, "", "Error: oci://registry.example/...: not found\n")
    assert got == (
        "chart.version v1.9.1 of chart.repo.url oci://registry.example/envoyproxy/gateway-helm cannot be installed: "
        "Error: oci://registry.example/...: not found. Set chart.version to a version the repository has. "
        "Nothing was changed."
    )


def test_a_local_chart_of_another_version_stops() -> None:
    got = chart_problem({**HELM, "chart_ref": "/charts/gateway-helm"}, 0, "version: v1.8.3\n", "")
    assert "cannot be installed: the chart there is version v1.8.3." in got


def test_unreadable_output_stops() -> None:
    assert "the chart there is version unknown" in chart_problem(HELM, 0, "{{{", "")
    assert "helm show chart exited with 2" in chart_problem(HELM, 2, "", "")
