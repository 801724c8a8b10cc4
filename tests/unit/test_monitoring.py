"""Invariant: the VMPodScrape scrapes the proxies' `metrics` port (19001) at /stats/prometheus, selected
by the block-owned proxy label (the same one the EnvoyProxy stamps), only when enabled."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import at, find, kinds

ON = {"metrics": {"vmpodscrape": {"enabled": True}}}

CASES: list[tuple[str, dict[str, Any], str, Any]] = [
    ("endpoint", ON, "spec.podMetricsEndpoints", [{"port": "metrics", "path": "/stats/prometheus", "interval": "30s"}]),
    (
        "interval",
        {"metrics": {"vmpodscrape": {"enabled": True, "interval": "15s"}}},
        "spec.podMetricsEndpoints[0].interval",
        "15s",
    ),
    ("own-namespace", ON, "spec.namespaceSelector", {"matchNames": ["envoy-gateway-system"]}),
    (
        "any-namespace",
        {"metrics": {"vmpodscrape": {"enabled": True, "namespace_selector": {"any": True}}}},
        "spec.namespaceSelector",
        {"any": True},
    ),
    (
        "names",
        {"metrics": {"vmpodscrape": {"enabled": True, "namespace_selector": {"match_names": ["a", "b"]}}}},
        "spec.namespaceSelector",
        {"matchNames": ["a", "b"]},
    ),
]


@pytest.mark.parametrize(("config", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_vm_pod_scrape(config: dict[str, Any], path: str, expected: Any) -> None:
    assert at(find(config, "VMPodScrape"), path) == expected


def test_selector_matches_stamped_proxy_labels() -> None:
    """Every label the scrape selects on is stamped on the proxy pods of both classes."""
    selector = find(ON, "VMPodScrape")["spec"]["selector"]["matchLabels"]
    for name in ("eg-shared", "eg-dedicated"):
        pod_labels = find(ON, "EnvoyProxy", name)["spec"]["provider"]["kubernetes"]["envoyDeployment"]["pod"]["labels"]
        assert selector.items() <= pod_labels.items()


def test_absent_by_default() -> None:
    assert "VMPodScrape" not in kinds({})
