"""examples/daemonset-client-ip with its backend request timeout shortened to 1s: the BackendTrafficPolicy
the block renders gives a slow backend's request 504; the JSON access log carries exactly the configured
fields; and the proxy serves /stats/prometheus on the port and path the rendered VMPodScrape scrapes."""

from __future__ import annotations

import copy
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.translator import configs

from .deploy import Deployed, deployed
from .stack import http_request

# Envoy Gateway names the proxy container's stats port "metrics" and gives it bootstrap.EnvoyStatsPort
# (internal/infrastructure/kubernetes/proxy/resource.go, v1.9.0): the port of the bootstrap's stats listener.
CONTAINER_PORT_NAMES = {"metrics": 19001}


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    cfg = copy.deepcopy(configs.EXAMPLES["daemonset-client-ip"])
    cfg["backend_traffic"]["timeouts"]["request"] = "1s"
    with deployed(cfg, Path(tmp_path_factory.mktemp("timeouts"))) as running:
        yield running


def _get(edge: Deployed, path: str) -> int:
    return http_request(edge.port("http"), edge.host("http"), path)[0]


def test_backend_request_timeout_gives_504(edge: Deployed) -> None:
    """Mutation: the request timeout rendered as connectionIdleTimeout (components/traffic_policies.py)
    -> red (200 after 3 s)."""
    fast, slow = f"/slow/0/{uuid.uuid4()}", f"/slow/3/{uuid.uuid4()}"
    assert _get(edge, fast) == 200
    assert _get(edge, slow) == 504
    logged = edge.envoy.log_entry(slow)
    assert logged["response_code"] == 504
    assert "UT" in str(logged["response_flags"]), logged  # upstream request timeout


def test_access_log_lines_are_json_with_the_configured_fields(edge: Deployed) -> None:
    path = f"/logged/{uuid.uuid4()}"
    assert _get(edge, path) == 200
    entry = edge.envoy.log_entry(path)
    proxy = edge.scenario.rendered("EnvoyProxy", edge.scenario.config.get("gatewayclass.shared.name"))
    configured = proxy["spec"]["telemetry"]["accessLog"]["settings"][0]["format"]["json"]
    for line in edge.envoy.access_log():  # every line parsed as JSON (access_log() fails otherwise)
        assert set(line) == set(configured), sorted(set(line) ^ set(configured))
    assert (entry["method"], entry["response_code"], entry["authority"]) == ("GET", 200, edge.host("http"))
    assert entry["upstream_cluster"].startswith("httproute/"), entry


def test_stats_on_the_port_and_path_the_vmpodscrape_scrapes(edge: Deployed) -> None:
    assert _get(edge, f"/counted/{uuid.uuid4()}") == 200
    scrape = edge.scenario.rendered("VMPodScrape")
    endpoints = scrape["spec"]["podMetricsEndpoints"]
    assert len(endpoints) == 1
    port, path = CONTAINER_PORT_NAMES[endpoints[0]["port"]], endpoints[0]["path"]
    stats = [
        x
        for x in edge.scenario.bootstrap["staticResources"]["listeners"]
        if x["address"]["socketAddress"]["portValue"] == port
    ]
    assert stats, f"Envoy Gateway's bootstrap has no listener on the scraped port {port}"
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
        assert response.status == 200
        text = response.read().decode()
    assert "# TYPE envoy_http_downstream_rq_total counter" in text
    listener = f'envoy_http_conn_manager_prefix="http-{edge.port("http")}"'
    served = [
        line for line in text.splitlines() if line.startswith("envoy_http_downstream_rq_total{") and listener in line
    ]
    assert len(served) == 1, served
    assert int(float(served[0].rsplit(" ", 1)[1])) >= 1, served
