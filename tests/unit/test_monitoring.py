"""Invariant: the VMPodScrape scrapes the proxies' `metrics` port (19001) at /stats/prometheus, selected
by the block-owned proxy label (the same one the EnvoyProxy stamps), only when enabled; beside it the
controller's VMServiceScrape and the WAF's VMPodScrape, each setting its own job label. The VMRule's alerts
and the dashboards follow their switches and thresholds, and every alert has a summary, a description and a
runbook_url into a section of docs/alerts.md. All of them pass the real VictoriaMetrics CRDs."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from envoy_block.components import waf
from envoy_block.polycrate import merge_config
from tests.conftest import ROOT
from tests.support import metric_names
from tests.support.helpers import at, find, kinds, load, objects, problems, with_gateway

ON = {"metrics": {"vmpodscrape": {"enabled": True}}}

CASES: list[tuple[str, dict[str, Any], str, Any]] = [
    (
        "endpoint",
        ON,
        "spec.podMetricsEndpoints",
        [
            {
                "port": "metrics",
                "path": "/stats/prometheus",
                "interval": "30s",
                "relabelConfigs": [{"action": "replace", "targetLabel": "job", "replacement": "envoy-proxies"}],
            }
        ],
    ),
    (
        "owner-labels-on-series",
        ON,
        "spec.podTargetLabels",
        [
            "gateway.envoyproxy.io/owning-gateway-name",
            "gateway.envoyproxy.io/owning-gateway-namespace",
            "gateway.envoyproxy.io/owning-gatewayclass",
        ],
    ),
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


WAF = {"waf": {"enabled": True}}
RULES = {"metrics": {"vmpodscrape": {"enabled": True}, "rules": {"enabled": True}}}
EVERYTHING = merge_config(
    with_gateway(WAF), {**RULES, "metrics": {**RULES["metrics"], "dashboards": {"enabled": True}}}
)


def test_controller_scrape_selects_the_charts_service() -> None:
    """The chart's Service `envoy-gateway` carries control-plane and the release name as instance (gateway-helm
    eg.labels) and names its 19001 port `metrics`."""
    scrape = find(ON, "VMServiceScrape")
    assert scrape["spec"]["selector"]["matchLabels"] == {
        "control-plane": "envoy-gateway",
        "app.kubernetes.io/instance": "envoy-gateway",
    }
    assert scrape["spec"]["namespaceSelector"] == {"matchNames": ["envoy-gateway-system"]}
    (endpoint,) = scrape["spec"]["endpoints"]
    assert (endpoint["port"], endpoint["path"]) == ("metrics", "/metrics")
    assert endpoint["relabelConfigs"][0]["replacement"] == "envoy-controller"


def test_waf_scrape_selects_the_waf_pods_metrics_port() -> None:
    cfg = merge_config(ON, WAF)
    assert "VMPodScrape" not in [o["kind"] for o in objects(merge_config(WAF, {}))]
    scrape = find(cfg, "VMPodScrape", "envoy-waf")
    deployment = find(cfg, "Deployment", "envoy-waf")
    pod = deployment["spec"]["template"]
    assert scrape["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    ports = {p["name"]: p["containerPort"] for p in pod["spec"]["containers"][0]["ports"]}
    (endpoint,) = scrape["spec"]["podMetricsEndpoints"]
    assert ports[endpoint["port"]] == waf.METRICS_PORT
    assert (endpoint["path"], endpoint["relabelConfigs"][0]["replacement"]) == ("/metrics", "envoy-waf")


def _rules(cfg: dict[str, Any]) -> dict[str, dict[str, Any]]:
    rule = find(cfg, "VMRule")
    return {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"]}


def test_alerts_follow_the_config() -> None:
    assert "VMRule" not in kinds(ON)
    default = _rules(RULES)
    assert set(default) == {
        "EnvoyGatewayControllerDown",
        "EnvoyGatewayReconcileFailing",
        "EnvoyProxiesDown",
        "EnvoyProxyFleetBelowSize",
        "EnvoyDownstream5xxRatioHigh",
        "EnvoyUpstream5xxRatioHigh",
        "EnvoyP99LatencyHigh",
        "EnvoyXdsConfigRejected",
        "EnvoyTlsCertificateMissing",
        "EnvoyProxyMemoryNearLimit",
    }
    assert {"EnvoyWafDown", "EnvoyWafStreamsFailing", "EnvoyWafBlockingAboveBaseline"} <= set(
        _rules(merge_config(RULES, WAF))
    )
    assert default["EnvoyProxyFleetBelowSize"]["expr"].endswith("< 2")
    assert default["EnvoyDownstream5xxRatioHigh"]["expr"].endswith("> 0.05")
    assert default["EnvoyP99LatencyHigh"]["expr"].endswith("> 1000")
    assert default["EnvoyProxyMemoryNearLimit"]["expr"].endswith("> 0.9 * 1073741824")
    assert default["EnvoyUpstream5xxRatioHigh"]["for"] == "5m"
    tuned = _rules(
        merge_config(
            RULES,
            {
                "metrics": {
                    "rules": {"upstream_5xx_ratio": 0.2, "p99_latency": "250ms", "memory_ratio": 0.8, "for": "2m"}
                },
                "data_plane": {"autoscaling": {"enabled": True, "min_replicas": 4, "max_replicas": 8}},
            },
        )
    )
    assert tuned["EnvoyUpstream5xxRatioHigh"]["expr"].endswith("> 0.2")
    assert tuned["EnvoyUpstream5xxRatioHigh"]["for"] == "2m"
    assert tuned["EnvoyP99LatencyHigh"]["expr"].endswith("> 250")
    assert tuned["EnvoyProxyFleetBelowSize"]["expr"].endswith("< 4"), "the autoscaler's minimum is the fleet's size"
    daemonset = _rules(merge_config(RULES, {"data_plane": {"kind": "DaemonSet"}}))
    assert "EnvoyProxyFleetBelowSize" not in daemonset, "a DaemonSet has no fleet size"


PUBLISHED = "https://git.example.com/platform/envoy/-/blob/main/docs/alerts.md"


def test_every_alert_has_its_runbook_section() -> None:
    alerts_doc = (ROOT / "docs/alerts.md").read_text(encoding="utf-8")
    sections = set(re.findall(r"^## (\S+)$", alerts_doc, re.MULTILINE))
    published = {"metrics": {"alerts": {"runbook_base_url": PUBLISHED}}}
    rules = _rules(merge_config(merge_config(RULES, WAF), published))
    for name, rule in rules.items():
        annotations = rule["annotations"]
        assert annotations["summary"], name
        assert len(annotations["description"]) > 80, name
        url, _, anchor = annotations["runbook_url"].partition("#")
        assert url == PUBLISHED, (name, url)
        assert anchor in sections, (name, annotations["runbook_url"])
        assert f"**{name}**" in alerts_doc, name
    assert sections == {name.lower() for name in rules}, "one section per alert, none left over"


def test_dashboards_carry_the_sidecar_label() -> None:
    cms = [o for o in objects(EVERYTHING) if o["kind"] == "ConfigMap" and "-dashboard-" in o["metadata"]["name"]]
    assert sorted(c["metadata"]["name"] for c in cms) == [
        "envoy-dashboard-controller",
        "envoy-dashboard-edge",
        "envoy-dashboard-waf",
    ]
    assert all(c["metadata"]["labels"]["grafana_dashboard"] == "1" for c in cms)
    relabelled = merge_config(
        EVERYTHING, {"metrics": {"dashboards": {"label": {"key": "dash.example.com/x", "value": "yes"}}}}
    )
    for cm in objects(relabelled):
        if "-dashboard-" in cm["metadata"]["name"]:
            assert cm["metadata"]["labels"]["dash.example.com/x"] == "yes"
            assert "grafana_dashboard" not in cm["metadata"]["labels"]
    for cm in cms:
        (content,) = cm["data"].values()
        dashboard = json.loads(content)
        assert dashboard["panels"]
        assert all(p["targets"] for p in dashboard["panels"])


def test_every_query_selects_a_block_scrape_job() -> None:
    """Each metric selector in an alert or panel names the job of one of the block's scrapes, so it reads
    this block's series and no other installation's."""
    queries = metric_names.queries(objects(EVERYTHING))
    assert len(queries) > 30
    for where, expr in queries.items():
        selectors = re.findall(r"\{([^{}]*)\}", expr)
        assert selectors, where
        for selector in selectors:
            assert re.search(r'job="envoy-(proxies|controller|waf)"', selector), (where, selector)


def test_names_in_query() -> None:
    q = metric_names.names_in_query
    assert q('sum by (a, le) (rate(x_total{job="j",b=~"c|d"}[5m] offset 1h)) / ignoring(a) y > 0.5 * 1e3') == {
        "x_total",
        "y",
    }
    assert q('histogram_quantile(0.99, sum by (le) (rate(h_bucket{job="w"}[$__rate_interval])))') == {"h_bucket"}
    assert q('absent(up{job="c"} == 1) or count by (ns) (up{job="p"} == 1) < 2') == {"up"}
    assert metric_names.exposed('# TYPE a counter\na{x="1"} 2\nb 3\n') == {"a", "b"}


def test_monitoring_objects_pass_the_victoriametrics_crds() -> None:
    # Polycrate's image Python (make unit's second pass) cannot have the gate's jsonschema 4 tools.
    pytest.importorskip("kubernetes_validate")
    from tests.support.gate import validate

    for obj in objects(EVERYTHING):
        if obj["kind"] in ("VMPodScrape", "VMServiceScrape", "VMRule", "ConfigMap"):
            result = validate(obj)
            assert not result.errors, (obj["kind"], obj["metadata"]["name"], result.errors)


def test_no_runbook_url_until_the_docs_are_published() -> None:
    """A relative runbook_url (docs/alerts.md) cannot be opened by any alert receiver: without an absolute
    metrics.alerts.runbook_base_url the alerts carry none, and render says so."""
    rules = _rules(merge_config(RULES, WAF))
    assert rules
    assert not [name for name, rule in rules.items() if "runbook_url" in rule["annotations"]]
    assert any(w.startswith("config.metrics.alerts.runbook_base_url: not set") for w in load(RULES).warnings)
    published = merge_config(RULES, {"metrics": {"alerts": {"runbook_base_url": PUBLISHED}}})
    assert not [w for w in load(published).warnings if "runbook_base_url" in w]


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        ("docs/alerts.md", "use an absolute URL"),
        ("ftp://docs.example.com/alerts.md", "use an absolute URL"),
        ("https:///alerts.md", "use an absolute URL"),
        ("https://docs.example.com/alerts.md#top", "leave out the #"),
        ("https://docs.example.com/my alerts.md", "no spaces"),
    ],
)
def test_runbook_base_url_must_be_absolute(value: str, fix: str) -> None:
    found = problems(merge_config(RULES, {"metrics": {"alerts": {"runbook_base_url": value}}}))
    assert [p for p in found if p.startswith("config.metrics.alerts.runbook_base_url:") and fix in p], found


def test_the_old_runbook_key_says_where_it_went() -> None:
    found = problems(merge_config(RULES, {"metrics": {"rules": {"runbook_url": "https://x.example/a.md"}}}))
    assert found == [
        "config.metrics.rules.runbook_url: renamed to metrics.alerts.runbook_base_url, an absolute http(s) URL of "
        "the published docs/alerts.md (a relative path such as docs/alerts.md cannot be opened from an alert); "
        "move the value there"
    ]
