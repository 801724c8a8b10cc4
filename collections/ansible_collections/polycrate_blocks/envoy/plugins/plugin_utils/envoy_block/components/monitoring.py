"""Scrapes for every component (proxies, controller, WAF), the alerts (VMRule) and the Grafana dashboards.

Every scrape sets the `job` label itself, so the alerts and panels select a component by a name the block
chose, never by what a VictoriaMetrics operator version derives from the object's name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import labels
from ..model import Checked, Config, Problem
from ..plan import Phase, Step
from . import alerts, controller, dashboards, waf

PROXY_METRICS_PATH = "/stats/prometheus"
# Pod labels copied onto the proxies' series: which Gateway (or merged class) a proxy serves.
PROXY_TARGET_LABELS = (
    "gateway.envoyproxy.io/owning-gateway-name",
    "gateway.envoyproxy.io/owning-gateway-namespace",
    "gateway.envoyproxy.io/owning-gatewayclass",
)


def job(config: Config, component: str) -> str:
    """The `job` label of a component's series: <block>-proxies, <block>-controller, <block>-waf."""
    return f"{config.block_name}-{component}"


def _job_label(config: Config, component: str) -> list[dict[str, Any]]:
    return [{"action": "replace", "targetLabel": "job", "replacement": job(config, component)}]


def _scrape(
    config: Config,
    component: str,
    selector: dict[str, str],
    namespace_selector: dict[str, Any],
    path: str,
    **extra: Any,
) -> dict[str, Any]:
    """One scrape object: a VMPodScrape, or a VMServiceScrape when `service` (the endpoints key differs)."""
    service = extra.pop("service", False)
    return {
        "apiVersion": "operator.victoriametrics.com/v1beta1",
        "kind": "VMServiceScrape" if service else "VMPodScrape",
        "metadata": labels.metadata(config, job(config, component), "monitoring", config.get("namespace")),
        "spec": {
            "selector": {"matchLabels": selector},
            "namespaceSelector": namespace_selector,
            **extra,
            "endpoints" if service else "podMetricsEndpoints": [
                {
                    "port": "metrics",
                    "path": path,
                    "interval": config.get("metrics.vmpodscrape.interval"),
                    "relabelConfigs": _job_label(config, component),
                }
            ],
        },
    }


def vm_pod_scrape(config: Config) -> dict[str, Any]:
    """The proxies, wherever they run; selected on the block-owned proxy label, like the network policies."""
    selector = config.get("metrics.vmpodscrape.namespace_selector")
    namespace_selector: dict[str, Any] = (
        {"any": True} if selector["any"] else {"matchNames": list(selector["match_names"]) or [config.get("namespace")]}
    )
    proxies = {"app.kubernetes.io/instance": config.block_name, labels.PROXY_ROLE_LABEL: labels.PROXY_ROLE}
    return _scrape(
        config, "proxies", proxies, namespace_selector, PROXY_METRICS_PATH, podTargetLabels=list(PROXY_TARGET_LABELS)
    )


def controller_scrape(config: Config) -> dict[str, Any]:
    """The controller's /metrics through the chart's Service `envoy-gateway` (port `metrics`, 19001), selected
    by the chart's Service labels (gateway-helm eg.labels: control-plane and the release as instance)."""
    chart = {"control-plane": "envoy-gateway", "app.kubernetes.io/instance": controller.RELEASE_NAME}
    return _scrape(config, "controller", chart, {"matchNames": [config.get("namespace")]}, "/metrics", service=True)


def waf_scrape(config: Config) -> dict[str, Any]:
    """The WAF's /metrics (container port `metrics`)."""
    own = {"matchNames": [config.get("namespace")]}
    return _scrape(config, "waf", waf.selector(config), own, "/metrics")


def build(config: Config) -> list[Step]:
    steps: list[Step] = []
    if config.get("metrics.vmpodscrape.enabled"):
        steps.append(Step(Phase.MONITORING, vm_pod_scrape(config)))
        steps.append(Step(Phase.MONITORING, controller_scrape(config)))
        if config.get("waf.enabled"):
            steps.append(Step(Phase.MONITORING, waf_scrape(config)))
    if config.get("metrics.rules.enabled"):
        steps.append(Step(Phase.MONITORING, alerts.vm_rule(config)))
    if config.get("metrics.dashboards.enabled"):
        steps.extend(Step(Phase.MONITORING, cm) for cm in dashboards.config_maps(config))
    return steps


# Renamed keys (config.py refuses each with this instead of "unknown key").
RENAMED = {
    "config.metrics.rules.runbook_url": (
        "renamed to metrics.alerts.runbook_base_url, an absolute http(s) URL of the published docs/alerts.md "
        "(a relative path such as docs/alerts.md cannot be opened from an alert); move the value there"
    ),
}


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """The VMPodScrape's namespace selector says one thing, and finds the proxies where they run; alerts
    without scrapes would watch nothing."""
    problems: list[Problem] = []
    warnings: list[str] = []
    metrics = values["metrics"]
    selector = metrics["vmpodscrape"]["namespace_selector"]
    if selector["any"] and selector["match_names"]:
        problems.append(
            Problem("config.metrics.vmpodscrape.namespace_selector", "set either any: true or match_names, not both")
        )
    if (
        metrics["vmpodscrape"]["enabled"]
        and values["deploy_type"] == "GatewayNamespace"
        and not selector["any"]
        and not selector["match_names"]
    ):
        warnings.append(
            "config.metrics.vmpodscrape.namespace_selector: with GatewayNamespace the proxies run in "
            "the Gateways' namespaces; set any: true or list them in match_names"
        )
    if metrics["rules"]["enabled"] and not metrics["vmpodscrape"]["enabled"]:
        warnings.append(
            "config.metrics.rules.enabled: the alerts read the series the block's scrapes collect (their job "
            "labels); without metrics.vmpodscrape.enabled nothing collects them and the availability alerts "
            "fire; enable metrics.vmpodscrape too"
        )
    if metrics["rules"]["enabled"] and not metrics["alerts"]["runbook_base_url"]:
        warnings.append(
            "config.metrics.alerts.runbook_base_url: not set, so the alerts carry no runbook_url; set it to the "
            "absolute URL where you publish the block's docs/alerts.md (e.g. "
            "https://git.example.com/platform/envoy/-/blob/main/docs/alerts.md)"
        )
    return problems, warnings
