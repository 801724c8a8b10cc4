"""Metric names in the block's alert expressions and dashboard queries, and in a real component's
Prometheus exposition: the tests compare the two, so an alert or panel never waits for a series that the
real Envoy, controller or WAF does not have."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

# PromQL words that look like names: aggregation and binary operators, modifiers.
KEYWORDS = frozenset(
    {"by", "without", "and", "or", "unless", "on", "ignoring", "group_left", "group_right", "offset", "bool", "le"}
)
# Series the scraper itself writes for every target (not the component's own).
SCRAPER = frozenset({"up"})
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"')
_MATCHERS = re.compile(r"\{[^{}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_IDENT = re.compile(r"(?<![\w$.])([A-Za-z_:][A-Za-z0-9_:]*)\b(?!\s*\()")


def names_in_query(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (functions, label names, grouping labels, strings,
    durations and numbers left out)."""
    text = _STRINGS.sub('""', expr)
    text = _MATCHERS.sub("", text)
    text = _RANGES.sub("", text)
    text = _GROUPING.sub("", text)
    text = re.sub(r"\b\d+(\.\d+)?(e[+-]?\d+)?\b", " ", text)
    return {name for name in _IDENT.findall(text) if name not in KEYWORDS}


def exposed(exposition: str) -> set[str]:
    """The series names in a Prometheus text exposition (histograms as their _bucket/_sum/_count)."""
    out = set()
    for line in exposition.splitlines():
        if line and not line.startswith("#"):
            out.add(re.split(r"[{\s]", line, maxsplit=1)[0])
    return out


def queries(objects: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Where -> expression, for every alert of every VMRule and every target of every dashboard ConfigMap
    among rendered `objects`."""
    out: dict[str, str] = {}
    for obj in objects:
        if obj["kind"] == "VMRule":
            for group in obj["spec"]["groups"]:
                for rule in group["rules"]:
                    out[f"alert {rule['alert']}"] = rule["expr"]
        elif obj["kind"] == "ConfigMap" and obj["metadata"]["name"].rpartition("-dashboard-")[1]:
            for file, content in obj["data"].items():
                dashboard = json.loads(content)
                for panel in dashboard["panels"]:
                    for target in panel["targets"]:
                        out[f"{file} {panel['title']!r} {target['refId']}"] = target["expr"]
                for variable in dashboard["templating"]["list"]:
                    if variable["type"] == "query":
                        inner = re.search(r"label_values\((.*),[^,]*\)$", variable["query"])
                        assert inner, variable["query"]
                        out[f"{file} variable {variable['name']}"] = inner.group(1)
    return out


def component(name: str) -> str:
    """Which real component a metric name belongs to: Envoy's are envoy_*, the WAF's waf_* (and the Go
    runtime's of its process), every other one the controller's."""
    if name in SCRAPER:
        return "scraper"
    if name.startswith("envoy_"):
        return "envoy"
    if name.startswith("waf_"):
        return "waf"
    return "controller"


# Envoy series that exist only where Envoy subscribes to xDS (the traffic testbed's Envoy has static
# resources): checked against the cluster suite's xDS-fed Envoy.
ENVOY_XDS_ONLY = frozenset({"envoy_listener_manager_lds_update_rejected", "envoy_cluster_manager_cds_update_rejected"})
# Envoy series an HTTP filter creates when the first request runs through it (the cluster suite's Envoy
# carries no request through a Gateway listener): checked against the traffic testbed's Envoy.
ENVOY_AFTER_A_REQUEST = frozenset({"envoy_http_ext_proc_streams_failed", "envoy_http_ext_proc_message_timeouts"})
# Envoy series that exist only where a TLS listener takes its certificate over SDS (neither the traffic
# testbed's static Envoy nor the cluster suite's plain-HTTP Gateway has one): checked against the probe Envoy
# whose SDS never answers (tests/traffic/test_alerts.py, EnvoyTlsCertificateMissing's fault).
ENVOY_SDS_ONLY = frozenset(
    {"envoy_sds_init_fetch_timeout", "envoy_listener_server_ssl_socket_factory_downstream_context_secrets_not_ready"}
)


def missing(
    objects: Iterable[Mapping[str, Any]], which: str, real: set[str], elsewhere: frozenset[str] = frozenset()
) -> dict[str, set[str]]:
    """Per query, the names of component `which` it uses that `real` (a real exposition's names) lacks,
    leaving out the names `elsewhere` (another test checks those)."""
    out = {}
    for where, expr in queries(objects).items():
        lacking = {n for n in names_in_query(expr) if component(n) == which} - real - elsewhere
        if lacking:
            out[where] = lacking
    return out
