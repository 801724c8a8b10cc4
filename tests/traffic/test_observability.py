"""Every metric the block's alerts (VMRule) and dashboards name is one the real components expose.

A real Envoy on Envoy Gateway's generated configuration (examples/waf with PROXY protocol, optional, so the
PROXY protocol listener filter and the WAF's ext_proc filter are both in the path), the real WAF binary
(waf/bin/envoy-waf) on its rendered settings, and traffic through both: benign requests, an attack the WAF
blocks, a request without a PROXY header. Then both are scraped where the block's scrapes read them (Envoy
Gateway's stats port and path, the WAF's metrics port) and every envoy_* and waf_* name in every alert
expression and panel query must be among the scraped series. The controller's names are checked against the
real controller in tests/cluster/test_observability.py.

Mutation check (done once): a panel query on envoy_http_downstream_rq_5xx (a name Envoy does not emit; it
emits envoy_http_downstream_rq_xx with envoy_response_code_class) turned this red, naming the panel.
"""

from __future__ import annotations

import copy
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from envoy_block.components import monitoring, waf
from envoy_block.polycrate import merge_config
from tests.support import metric_names
from tests.translator import configs

from .deploy import Deployed, deployed
from .stack import http_request

# Envoy Gateway's stats listener (bootstrap.EnvoyStatsPort), container port `metrics`.
ENVOY_STATS_PORT = 19001


def observed_config() -> dict[str, Any]:
    cfg: dict[str, Any] = copy.deepcopy(configs.EXAMPLES["waf"])
    return dict(
        merge_config(
            cfg,
            {
                "client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True, "optional": True}},
                "metrics": {
                    "vmpodscrape": {"enabled": True},
                    "rules": {"enabled": True},
                    "dashboards": {"enabled": True},
                },
            },
        )
    )


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    with deployed(observed_config(), Path(tmp_path_factory.mktemp("observability"))) as running:
        yield running


def _scrape(port: int, path: str) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        assert response.status == 200
        return str(response.read().decode())


def test_alerts_and_panels_name_only_metrics_the_real_envoy_and_waf_expose(edge: Deployed) -> None:
    host, port = edge.host("http"), edge.port("http")
    assert http_request(port, host, f"/benign/{uuid.uuid4()}")[0] == 200
    assert http_request(port, host, "/search?id=1%27%20OR%20%271%27%3D%271")[0] == 403
    objects = [o for o in edge.scenario.inputs if o["kind"] in ("VMRule", "ConfigMap", "VMPodScrape")]
    queries = metric_names.queries(objects)
    assert any(w.startswith("alert ") for w in queries), sorted(queries)
    assert any(".json" in w for w in queries), sorted(queries)

    proxies = edge.scenario.rendered("VMPodScrape", f"{edge.scenario.config.block_name}-proxies")
    envoy_text = _scrape(ENVOY_STATS_PORT, proxies["spec"]["podMetricsEndpoints"][0]["path"])
    assert proxies["spec"]["podMetricsEndpoints"][0]["path"] == monitoring.PROXY_METRICS_PATH
    waf_text = _scrape(waf.METRICS_PORT, "/metrics")
    real = {"envoy": metric_names.exposed(envoy_text), "waf": metric_names.exposed(waf_text)}
    used = {n for expr in queries.values() for n in metric_names.names_in_query(expr)}
    print(f"\nOBSERVABILITY names used: {len(used)}; envoy exposes {len(real['envoy'])}, the WAF {len(real['waf'])}")
    for component, names in real.items():
        lacking = metric_names.missing(objects, component, names)
        assert not lacking, f"{component}: queries name metrics it does not expose: {lacking}"
    assert {metric_names.component(n) for n in used} == {"scraper", "envoy", "waf", "controller"}
