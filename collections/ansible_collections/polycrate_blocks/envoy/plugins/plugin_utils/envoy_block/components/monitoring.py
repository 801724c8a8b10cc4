"""VMPodScrape for the proxies' Prometheus endpoint (container port `metrics`, 19001)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import labels
from ..model import Checked, Config, Problem
from ..plan import Phase, Step


def vm_pod_scrape(config: Config) -> dict[str, Any]:
    scrape = config.get("metrics.vmpodscrape")
    selector = scrape["namespace_selector"]
    namespace_selector: dict[str, Any] = (
        {"any": True} if selector["any"] else {"matchNames": list(selector["match_names"]) or [config.get("namespace")]}
    )
    return {
        "apiVersion": "operator.victoriametrics.com/v1beta1",
        "kind": "VMPodScrape",
        "metadata": labels.metadata(config, f"{config.block_name}-proxies", "monitoring", config.get("namespace")),
        "spec": {
            # Select on the block-owned proxy label, like the network policies do.
            "selector": {
                "matchLabels": {
                    "app.kubernetes.io/instance": config.block_name,
                    labels.PROXY_ROLE_LABEL: labels.PROXY_ROLE,
                }
            },
            "namespaceSelector": namespace_selector,
            "podMetricsEndpoints": [
                {"port": "metrics", "path": "/stats/prometheus", "interval": scrape["interval"]},
            ],
        },
    }


def build(config: Config) -> list[Step]:
    if not config.get("metrics.vmpodscrape.enabled"):
        return []
    return [Step(Phase.MONITORING, vm_pod_scrape(config))]


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """The VMPodScrape's namespace selector says one thing, and finds the proxies where they run."""
    problems: list[Problem] = []
    warnings: list[str] = []
    selector = values["metrics"]["vmpodscrape"]["namespace_selector"]
    if selector["any"] and selector["match_names"]:
        problems.append(
            Problem("config.metrics.vmpodscrape.namespace_selector", "set either any: true or match_names, not both")
        )
    if (
        values["metrics"]["vmpodscrape"]["enabled"]
        and values["deploy_type"] == "GatewayNamespace"
        and not selector["any"]
        and not selector["match_names"]
    ):
        warnings.append(
            "config.metrics.vmpodscrape.namespace_selector: with GatewayNamespace the proxies run in "
            "the Gateways' namespaces; set any: true or list them in match_names"
        )
    return problems, warnings
