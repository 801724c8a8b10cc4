"""Every WAF metric the block's alerts (VMRule) and dashboards name is one the real WAF exposes, and every
Envoy metric one the real Envoy exposes after traffic through the WAF's ext_proc filter.

The real WAF binary (waf/bin/envoy-waf) on its rendered settings behind a real Envoy on Envoy Gateway's
generated configuration (examples/waf with optional PROXY protocol, the scrapes, alerts and dashboards on),
a benign request and an attack it blocks (series such as waf_rule_matches_total appear only once a rule
matched). The WAF is then scraped where the block's VMPodScrape reads it (the pod's `metrics` port,
/metrics), Envoy on its stats port, and every waf_* and envoy_* name in every alert expression and panel
query must be among their series. The xDS subscription series are checked against a real Envoy fed over
xDS by the real controller in tests/cluster/test_observability.py (the testbed's Envoy has static
resources), as are the controller's.

Mutation check (done once): a panel on `waf_blocked_total` (the WAF has waf_decisions_total{action="block"})
turned this red, naming the panel. Before the attack, waf_rule_matches_total was missing: the test went red
until it sent one.
"""

from __future__ import annotations

import copy
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from envoy_block.components.monitoring import PROXY_METRICS_PATH
from envoy_block.polycrate import merge_config
from tests.support import metric_names
from tests.support.output import show
from tests.translator import configs

from .deploy import deployed
from .stack import http_request

# Envoy Gateway's stats listener (bootstrap.EnvoyStatsPort): container port `metrics`, which the VMPodScrape reads.
ENVOY_STATS_PORT = 19001


def observed_config() -> dict[str, Any]:
    return dict(
        merge_config(
            copy.deepcopy(configs.EXAMPLES["waf"]),
            {
                # The PROXY protocol listener filter in the path too (optional: plain requests still served).
                "client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True, "optional": True}},
                "metrics": {
                    "vmpodscrape": {"enabled": True},
                    "rules": {"enabled": True},
                    "dashboards": {"enabled": True},
                },
            },
        )
    )


def test_alerts_and_panels_name_only_metrics_the_real_waf_exposes(tmp_path: Path) -> None:
    with deployed(observed_config(), tmp_path) as edge:
        host, port = edge.host("http"), edge.port("http")
        assert http_request(port, host, f"/benign/{uuid.uuid4()}")[0] == 200
        assert http_request(port, host, "/search?id=1%27%20OR%20%271%27%3D%271")[0] == 403
        rendered = edge.scenario.inputs
        scrape = next(o for o in rendered if o["kind"] == "VMPodScrape" and o["metadata"]["name"].endswith("-waf"))
        (endpoint,) = scrape["spec"]["podMetricsEndpoints"]
        deployment = next(o for o in rendered if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-waf"))
        ports = {
            p["name"]: p["containerPort"] for p in deployment["spec"]["template"]["spec"]["containers"][0]["ports"]
        }
        url = f"http://127.0.0.1:{ports[endpoint['port']]}{endpoint['path']}"
        with urllib.request.urlopen(url, timeout=5) as response:
            real = metric_names.exposed(response.read().decode())
        with urllib.request.urlopen(f"http://127.0.0.1:{ENVOY_STATS_PORT}{PROXY_METRICS_PATH}", timeout=5) as response:
            envoy = metric_names.exposed(response.read().decode())
    queries = metric_names.queries(rendered)
    used = {n for expr in queries.values() for n in metric_names.names_in_query(expr) if n.startswith("waf_")}
    show(f"OBSERVABILITY WAF names used: {sorted(used)}")
    assert used, "the alerts and dashboards use the WAF's metrics"
    lacking = metric_names.missing(rendered, "waf", real)
    assert not lacking, f"queries name metrics the WAF does not expose: {lacking}"
    lacking = metric_names.missing(rendered, "envoy", envoy, metric_names.ENVOY_XDS_ONLY | metric_names.ENVOY_SDS_ONLY)
    assert not lacking, f"queries name metrics the real Envoy does not expose: {lacking}"
