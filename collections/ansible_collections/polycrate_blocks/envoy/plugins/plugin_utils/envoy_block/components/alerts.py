"""The VMRule (metrics.rules.enabled): alerts on the controller, the proxy fleets and the WAF.

Every expression reads only series the block's own scrapes collect (selected by their `job` label, see
monitoring.job) and names only metrics the real components expose (tests/traffic/test_observability.py
scrapes a real Envoy, the real WAF and the real controller and compares). Thresholds are config keys
(metrics.rules.*); each alert carries a summary, a description saying what to check, and a runbook_url into
docs/alerts.md (one section per alert, anchored by the alert's name in lower case).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import labels
from ..formats import quantity_bytes, seconds
from ..model import Config
from .proxies import fleet_size

# The labels that tell one proxy fleet from another on the proxies' series (VMPodScrape podTargetLabels of
# Envoy Gateway's owner labels, sanitized by the scraper).
FLEET = (
    "namespace, gateway_envoyproxy_io_owning_gateway_namespace, gateway_envoyproxy_io_owning_gateway_name, "
    "gateway_envoyproxy_io_owning_gatewayclass"
)
# The clusters of tenants' routes (Envoy Gateway names them <kind>route/<ns>/<name>/rule/<n>). Envoy's other
# upstream clusters are the block's own: the WAF's ext_proc cluster (envoyextensionpolicy/...) answers 5xx
# when the WAF is down, which EnvoyWafDown/EnvoyWafStreamsFailing name; counted here it paged as a backend
# failure (tests/traffic/test_alerts.py, the WAF stopped).
# Connections a TLS listener refused because its certificate had not arrived (Envoy's
# listener.<address>.server_ssl_socket_factory.downstream_context_secrets_not_ready).
SECRETS_NOT_READY = "envoy_listener_server_ssl_socket_factory_downstream_context_secrets_not_ready"
ROUTE_CLUSTERS = 'envoy_cluster_name=~"(http|grpc|tls|tcp|udp)route/.+"'
# The rate window of the traffic alerts and the WAF's failures.
WINDOW = "5m"


@dataclass(frozen=True)
class Alert:
    name: str
    expr: str
    severity: str
    summary: str
    description: str
    for_: str | None = None  # None: metrics.rules.for


def _number(value: float) -> str:
    return f"{value:g}"


def alerts(config: Config) -> list[Alert]:
    """The alerts for this config, in a stable order (the VMRule and docs/alerts.md follow it): the controller's
    and the proxies' availability, the traffic through the proxies, the proxies' memory, the WAF."""
    return [*_availability_alerts(config), *_traffic_alerts(config), *_memory_alerts(config), *_waf_alerts(config)]


def _job(config: Config, scrape: str) -> str:
    """The `job` matcher of one of the block's scrapes (proxies, controller, waf: monitoring.job)."""
    return f'job="{config.block_name}-{scrape}"'


def _availability_alerts(config: Config) -> list[Alert]:
    """The controller runs and reconciles; the proxies run, a fleet of two or more at its full size."""
    proxies, controller = _job(config, "proxies"), _job(config, "controller")
    out = [
        Alert(
            "EnvoyGatewayControllerDown",
            f"absent(up{{{controller}}} == 1)",
            "critical",
            "The Envoy Gateway controller is not running (no successful scrape).",
            "No controller answers on its metrics port: new and changed Gateways, routes and policies are not "
            "translated and proxies keep their last configuration. Check the envoy-gateway Deployment in "
            "{{ $labels.namespace }} (pods, events, logs) and that the VMServiceScrape finds its Service.",
            "5m",
        ),
        Alert(
            "EnvoyGatewayReconcileFailing",
            f'sum(increase(watchable_subscribe_total{{{controller},status="failure"}}[10m])) > 0 or '
            f'sum(increase(status_update_total{{{controller},status="failure"}}[10m])) > 0',
            "warning",
            "The Envoy Gateway controller fails to reconcile.",
            "The controller's runners report failures handling updates, or status updates fail: Gateways and "
            "routes may show stale conditions and proxies stale configuration. Check the controller's logs for "
            "errors and its RBAC (status updates need the chart's ClusterRole).",
        ),
        Alert(
            "EnvoyProxiesDown",
            f"absent(up{{{proxies}}} == 1)",
            "critical",
            "No Envoy proxy of the block is running (no successful scrape).",
            "No proxy answers on its stats port: the Gateways serve nothing. Check the proxy Deployments or "
            "DaemonSets (app.kubernetes.io/component=proxy) in their namespaces, their events and the "
            "EnvoyProxy's conditions.",
            "2m",
        ),
    ]
    size = fleet_size(config.get("data_plane"))
    if size >= 2:
        out.append(
            Alert(
                "EnvoyProxyFleetBelowSize",
                f"count by ({FLEET}) (up{{{proxies}}} == 1) < {size}",
                "warning",
                f"A proxy fleet runs fewer than {size} ready proxies.",
                "Fewer proxies than the fleet's size answer: the fleet has no spare for a node drain or rollout. "
                "Check the proxy pods of the Gateway in the labels (Pending: node resources, topology spread, "
                "node_selector/tolerations; CrashLoopBackOff: the envoy container's logs).",
            )
        )
    return out


def _traffic_alerts(config: Config) -> list[Alert]:
    """What passes through the proxies: 5xx answered or met upstream, latency, configuration the proxies refused,
    TLS served without its certificate."""
    rules = config.get("metrics.rules")
    proxies = _job(config, "proxies")
    return [
        Alert(
            "EnvoyDownstream5xxRatioHigh",
            f'sum by ({FLEET}) (rate(envoy_http_downstream_rq_xx{{{proxies},envoy_response_code_class="5"}}'
            f"[{WINDOW}])) / sum by ({FLEET}) (rate(envoy_http_downstream_rq_total{{{proxies}}}[{WINDOW}])) > "
            f"{_number(rules['downstream_5xx_ratio'])}",
            "warning",
            "More than {{ $value | humanizePercentage }} of a Gateway's responses are 5xx.",
            "Clients get 5xx from this proxy fleet. Compare with EnvoyUpstream5xxRatioHigh: if backends are "
            "healthy the proxy answers itself (no healthy upstream 503, timeouts 504, the WAF failing closed "
            "500); the access log's response_flags say which.",
        ),
        Alert(
            "EnvoyUpstream5xxRatioHigh",
            f"sum by ({FLEET}, envoy_cluster_name) (rate(envoy_cluster_upstream_rq_xx{{{proxies},{ROUTE_CLUSTERS},"
            f'envoy_response_code_class="5"}}[{WINDOW}])) / sum by ({FLEET}, envoy_cluster_name) '
            f"(rate(envoy_cluster_upstream_rq_total{{{proxies},{ROUTE_CLUSTERS}}}[{WINDOW}])) > "
            f"{_number(rules['upstream_5xx_ratio'])}",
            "warning",
            "Backend {{ $labels.envoy_cluster_name }} answers {{ $value | humanizePercentage }} 5xx.",
            "A backend behind the Gateway answers 5xx. The cluster name is the route (httproute/<ns>/<name>/"
            "rule/<n>): check that route's backend Service, its pods and their logs.",
        ),
        Alert(
            "EnvoyP99LatencyHigh",
            f"histogram_quantile(0.99, sum by ({FLEET}, le) (rate(envoy_http_downstream_rq_time_bucket"
            f"{{{proxies}}}[{WINDOW}]))) > {_number(seconds(rules['p99_latency']) * 1000)}",
            "warning",
            f"A Gateway's p99 request time is above {rules['p99_latency']} ({{{{ $value }}}} ms).",
            "Requests through this fleet are slow. Check the backends' latency (envoy_cluster_upstream_rq_time "
            "per cluster), the proxies' CPU (throttling below the limit) and, with the WAF, its evaluation time "
            "(waf_evaluation_seconds).",
        ),
        Alert(
            "EnvoyXdsConfigRejected",
            f"sum by ({FLEET}) (increase(envoy_listener_manager_lds_update_rejected{{{proxies}}}[10m])) > 0 or "
            f"sum by ({FLEET}) (increase(envoy_cluster_manager_cds_update_rejected{{{proxies}}}[10m])) > 0",
            "critical",
            "A proxy rejected the configuration the controller sent it.",
            "Envoy refused a listener or cluster update (NACK) and keeps serving its previous configuration, so "
            "recent changes are not live. The controller logs the rejection; look for the object that changed "
            "last (an EnvoyPatchPolicy, a policy with a value Envoy refuses).",
            "0m",
        ),
        Alert(
            "EnvoyTlsCertificateMissing",
            f"sum by ({FLEET}) (increase(envoy_sds_init_fetch_timeout{{{proxies}}}[10m])) > 0 or "
            f"sum by ({FLEET}) (increase({SECRETS_NOT_READY}{{{proxies}}}[10m])) > 0",
            "critical",
            "A proxy serves TLS without the certificate the controller was to send it.",
            "A certificate (an SDS secret) did not reach the proxy within 15 s, so Envoy put the listener to "
            "work without it: TLS handshakes to that proxy fail while the pod stays Ready. Known after a "
            "v1.9.0 -> v1.9.1 upgrade on proxies that ran across it (envoyproxy/gateway#9918) and after a "
            "controller restart (#9519). Restart the named fleet's proxies (kubectl rollout restart of its "
            "Deployment or DaemonSet); the envoy_xds_resource_name label names the secret.",
            "0m",
        ),
    ]


def _memory_alerts(config: Config) -> list[Alert]:
    """A proxy's heap near its memory limit, when data_plane.resources sets one."""
    limit = ((config.get("data_plane.resources").get("limits")) or {}).get("memory")
    if not limit:
        return []
    rules = config.get("metrics.rules")
    proxies = _job(config, "proxies")
    limit_bytes = int(quantity_bytes(str(limit)))
    return [
        Alert(
            "EnvoyProxyMemoryNearLimit",
            f"max by ({FLEET}, pod) (envoy_server_memory_heap_size{{{proxies}}}) > "
            f"{_number(rules['memory_ratio'])} * {limit_bytes}",
            "warning",
            f"A proxy's heap is above {_number(rules['memory_ratio'] * 100)}% of its {limit} memory limit.",
            "The proxy will be OOM-killed when it reaches data_plane.resources.limits.memory. Check active "
            "connections and buffered bodies (the WAF's body buffer is held per request); raise the limit or "
            "add proxies.",
        )
    ]


def _waf_alerts(config: Config) -> list[Alert]:
    """With waf.enabled: the WAF runs, the proxies' streams to it succeed, it blocks no more than it usually does."""
    if not config.get("waf.enabled"):
        return []
    rules = config.get("metrics.rules")
    proxies, waf = _job(config, "proxies"), _job(config, "waf")
    return [
        Alert(
            "EnvoyWafDown",
            f"absent(up{{{waf}}} == 1)",
            "critical",
            "The WAF is not running (no successful scrape).",
            "No WAF pod answers. With waf.fail_open false (the default) every request the WAF's policy "
            "covers gets 500 from Envoy. Check the WAF Deployment's pods, events and logs in the block's "
            "namespace.",
            "2m",
        ),
        Alert(
            "EnvoyWafStreamsFailing",
            f"sum by ({FLEET}) (increase(envoy_http_ext_proc_streams_failed{{{proxies}}}[{WINDOW}])) > 0 or "
            f"sum by ({FLEET}) (increase(envoy_http_ext_proc_message_timeouts{{{proxies}}}[{WINDOW}])) > 0 or "
            f"sum(increase(waf_errors_total{{{waf}}}[{WINDOW}])) > 0",
            "warning",
            "Requests to the WAF fail or time out.",
            "Envoy's ext_proc streams to the WAF fail or time out, or the WAF reports internal errors: those "
            "requests got 500 (fail closed) or passed unchecked (fail open). Check the WAF's logs and "
            "resources (CPU throttling, memory) and waf_evaluation_seconds against waf.message_timeout.",
        ),
        Alert(
            "EnvoyWafBlockingAboveBaseline",
            f'sum(rate(waf_decisions_total{{{waf},action="block"}}[10m])) > '
            f"{_number(rules['waf_block_factor'])} * "
            f'sum(rate(waf_decisions_total{{{waf},action="block"}}[1d] offset 10m)) and '
            f'sum(rate(waf_decisions_total{{{waf},action="block"}}[10m])) > '
            f"{_number(rules['waf_block_min_rate'])}",
            "warning",
            "The WAF blocks {{ $value | humanize }}/s, far above its usual rate.",
            "Either an attack is under way or a change (an application release, a new route, a CRS or "
            "paranoia-level change) makes legitimate traffic match rules. The WAF's audit log names the "
            "rules; waf_rule_matches_total shows which rule ids rose.",
        ),
    ]


def anchor(name: str) -> str:
    return name.lower()


def vm_rule(config: Config) -> dict[str, Any]:
    rules = config.get("metrics.rules")
    runbook = config.get("metrics.alerts.runbook_base_url")
    meta = labels.metadata(config, f"{config.block_name}-alerts", "monitoring", config.get("namespace"))
    meta["labels"] = {**meta["labels"], **dict(sorted(rules["labels"].items()))}  # type: ignore[dict-item]
    return {
        "apiVersion": "operator.victoriametrics.com/v1beta1",
        "kind": "VMRule",
        "metadata": meta,
        "spec": {
            "groups": [
                {
                    "name": f"{config.block_name}.envoy-gateway",
                    "rules": [
                        {
                            "alert": a.name,
                            "expr": a.expr,
                            "for": a.for_ if a.for_ is not None else rules["for"],
                            "labels": {"severity": a.severity},
                            "annotations": {
                                "summary": a.summary,
                                "description": a.description,
                                **({"runbook_url": f"{runbook}#{anchor(a.name)}"} if runbook else {}),
                            },
                        }
                        for a in alerts(config)
                    ],
                }
            ]
        },
    }
