"""Grafana dashboards (metrics.dashboards.enabled) as ConfigMaps the Grafana sidecar picks up by its label.

Three dashboards, written for the series the block's scrapes collect (their `job` labels) and the labels
those carry: the edge (requests, 5xx, latency per Gateway and listener, connections, PROXY protocol errors),
the controller (reconciles, xDS pushes, errors) and the WAF (decisions per action, rule matches, added
latency, engine errors, bodies over the limit). tests/traffic/test_observability.py checks that every query
names only metrics the real components expose.
"""

from __future__ import annotations

import json
from typing import Any

from .. import labels
from ..model import Config

GATEWAY = "gateway_envoyproxy_io_owning_gateway_name"
RATE = "$__rate_interval"
# Legends: Grafana fills {{label}} from each series.
GW = "{{" + GATEWAY + "}}"
GW_LISTENER = GW + " {{envoy_http_conn_manager_prefix}}"


def _panel(title: str, unit: str, *queries: tuple[str, str]) -> dict[str, Any]:
    return {
        "type": "timeseries",
        "title": title,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "targets": [
            {"refId": chr(ord("A") + i), "expr": expr, "legendFormat": legend}
            for i, (expr, legend) in enumerate(queries)
        ],
    }


def _edge(proxies: str) -> list[dict[str, Any]]:
    listener = f"{GATEWAY}, envoy_http_conn_manager_prefix"
    sel = f'{proxies},{GATEWAY}=~"$gateway"'
    return [
        _panel(
            "Requests per Gateway and listener",
            "reqps",
            (
                f"sum by ({listener}) (rate(envoy_http_downstream_rq_total{{{sel}}}[{RATE}]))",
                GW_LISTENER,
            ),
        ),
        _panel(
            "5xx responses per Gateway and listener",
            "reqps",
            (
                f'sum by ({listener}) (rate(envoy_http_downstream_rq_xx{{{sel},envoy_response_code_class="5"}}'
                f"[{RATE}]))",
                GW_LISTENER,
            ),
        ),
        _panel(
            "Request time p50 / p99 per Gateway and listener",
            "ms",
            *(
                (
                    f"histogram_quantile({q}, sum by ({listener}, le) "
                    f"(rate(envoy_http_downstream_rq_time_bucket{{{sel}}}[{RATE}])))",
                    f"p{int(q * 100)} " + GW_LISTENER,
                )
                for q in (0.5, 0.99)
            ),
        ),
        _panel(
            "Upstream 5xx per backend",
            "reqps",
            (
                f'sum by (envoy_cluster_name) (rate(envoy_cluster_upstream_rq_xx{{{sel},envoy_response_code_class="5"}}'
                f"[{RATE}]))",
                "{{envoy_cluster_name}}",
            ),
        ),
        _panel(
            "Active downstream connections",
            "short",
            (
                f"sum by ({listener}) (envoy_http_downstream_cx_active{{{sel}}})",
                GW_LISTENER,
            ),
        ),
        _panel(
            "PROXY protocol: connections refused (header missing or invalid)",
            "short",
            (
                f"sum by ({GATEWAY}) (rate(envoy_proxy_proto_not_found_disallowed{{{sel}}}[{RATE}]))",
                "header missing " + GW,
            ),
            (f"sum by ({GATEWAY}) (rate(envoy_proxy_proto_error{{{sel}}}[{RATE}]))", "header invalid " + GW),
        ),
        _panel(
            "xDS updates rejected by the proxies",
            "short",
            (
                f"sum by ({GATEWAY}) (increase(envoy_listener_manager_lds_update_rejected{{{sel}}}[{RATE}]))",
                "listeners " + GW,
            ),
            (
                f"sum by ({GATEWAY}) (increase(envoy_cluster_manager_cds_update_rejected{{{sel}}}[{RATE}]))",
                "clusters " + GW,
            ),
        ),
        _panel(
            "Proxy heap",
            "bytes",
            (f"max by ({GATEWAY}, pod) (envoy_server_memory_heap_size{{{sel}}})", "{{pod}}"),
        ),
    ]


def _controller(controller: str) -> list[dict[str, Any]]:
    return [
        _panel(
            "Reconciles (updates handled per runner)",
            "ops",
            (
                f"sum by (runner, status) (rate(watchable_subscribe_total{{{controller}}}[{RATE}]))",
                "{{runner}} {{status}}",
            ),
        ),
        _panel(
            "Reconcile time p99 per runner",
            "s",
            (
                f"histogram_quantile(0.99, sum by (runner, le) "
                f"(rate(watchable_subscribe_duration_seconds_bucket{{{controller}}}[{RATE}])))",
                "{{runner}}",
            ),
        ),
        _panel(
            "xDS pushes (snapshot updates)",
            "ops",
            (f"sum by (status) (rate(xds_snapshot_update_total{{{controller}}}[{RATE}]))", "{{status}}"),
        ),
        _panel(
            "Errors: failed reconciles, status updates, infrastructure applies",
            "ops",
            (f'sum(rate(watchable_subscribe_total{{{controller},status="failure"}}[{RATE}]))', "reconcile"),
            (f'sum(rate(status_update_total{{{controller},status="failure"}}[{RATE}]))', "status update"),
            (f'sum(rate(resource_apply_total{{{controller},status="failure"}}[{RATE}]))', "infrastructure apply"),
        ),
        _panel(
            "Queue depth per runner",
            "short",
            (f"max by (runner) (watchable_depth{{{controller}}})", "{{runner}}"),
        ),
    ]


def _waf(waf: str, proxies: str) -> list[dict[str, Any]]:
    return [
        _panel(
            "Decisions per action",
            "reqps",
            (f"sum by (action) (rate(waf_decisions_total{{{waf}}}[{RATE}]))", "{{action}}"),
        ),
        _panel(
            "Top matched rules",
            "ops",
            (f"topk(10, sum by (rule_id) (rate(waf_rule_matches_total{{{waf}}}[{RATE}])))", "{{rule_id}}"),
        ),
        _panel(
            "Added latency (engine time) p50 / p99",
            "s",
            *(
                (
                    f"histogram_quantile({q}, sum by (le) (rate(waf_evaluation_seconds_bucket{{{waf}}}[{RATE}])))",
                    f"p{int(q * 100)}",
                )
                for q in (0.5, 0.99)
            ),
        ),
        _panel(
            "Engine errors and failed streams",
            "ops",
            (f"sum(rate(waf_errors_total{{{waf}}}[{RATE}]))", "WAF errors"),
            (f"sum(rate(envoy_http_ext_proc_streams_failed{{{proxies}}}[{RATE}]))", "Envoy: streams failed"),
            (f"sum(rate(envoy_http_ext_proc_message_timeouts{{{proxies}}}[{RATE}]))", "Envoy: timeouts"),
        ),
        _panel(
            "Bodies over the limit",
            "reqps",
            (f'sum(rate(waf_decisions_total{{{waf},action="too_large"}}[{RATE}]))', "too large"),
        ),
    ]


def _dashboard(config: Config, key: str, title: str, panels: list[dict[str, Any]], gateway_var: bool) -> dict[str, Any]:
    for i, panel in enumerate(panels):
        panel["id"] = i + 1
        panel["gridPos"] = {"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i // 2) * 8}
    variables: list[dict[str, Any]] = [
        {"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"}
    ]
    if gateway_var:
        proxies_job = f"{config.block_name}-proxies"
        variables.append(
            {
                "name": "gateway",
                "type": "query",
                "label": "Gateway",
                "datasource": {"type": "prometheus", "uid": "${datasource}"},
                "query": f'label_values(envoy_http_downstream_rq_total{{job="{proxies_job}"}}, {GATEWAY})',
                "includeAll": True,
                "allValue": ".*",
                "multi": True,
                "refresh": 2,
            }
        )
    return {
        "uid": f"{config.block_name}-{key}"[:40],
        "title": f"{title} ({config.block_name})",
        "tags": ["envoy-gateway", config.block_name],
        "schemaVersion": 39,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "1m",
        "templating": {"list": variables},
        "panels": panels,
    }


def dashboards(config: Config) -> dict[str, dict[str, Any]]:
    """key -> Grafana dashboard JSON model, for this config."""
    block = config.block_name
    proxies, controller, waf = (f'job="{block}-{c}"' for c in ("proxies", "controller", "waf"))
    out = {
        "edge": _dashboard(config, "edge", "Envoy Gateway edge", _edge(proxies), True),
        "controller": _dashboard(config, "controller", "Envoy Gateway controller", _controller(controller), False),
    }
    if config.get("waf.enabled"):
        out["waf"] = _dashboard(config, "waf", "Envoy Gateway WAF", _waf(waf, proxies), False)
    return out


def config_maps(config: Config) -> list[dict[str, Any]]:
    label = config.get("metrics.dashboards.label")
    out = []
    for key, dashboard in dashboards(config).items():
        meta = labels.metadata(config, f"{config.block_name}-dashboard-{key}", "monitoring", config.get("namespace"))
        meta["labels"] = {**meta["labels"], label["key"]: label["value"]}  # type: ignore[dict-item]
        out.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": meta,
                "data": {f"{config.block_name}-{key}.json": json.dumps(dashboard, indent=1, sort_keys=True)},
            }
        )
    return out
