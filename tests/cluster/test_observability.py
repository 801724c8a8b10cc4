"""The scrapes, alerts and dashboards against the REAL controller (v1.9.1) on the real control plane.

Install with metrics.vmpodscrape, metrics.rules and metrics.dashboards on (and the VictoriaMetrics CRDs, as
its operator installs them): the VMServiceScrape's selector finds the Service helm created for the controller
and that Service has the port it scrapes; the controller, once it has reconciled the default Gateway, serves
/metrics on that port, and every name the alerts and panels use that is not Envoy's or the WAF's is among
the controller's real series (tests/traffic/test_observability.py checks Envoy's and the WAF's). `status`
lists the scrapes and the VMRule.

Mutation check (done once): an alert on `watchable_subscribe_failures_total` (not a controller series)
turned this red, naming the alert.
"""

from __future__ import annotations

import urllib.request
from typing import Any

import pytest

from envoy_block.polycrate import merge_config
from tests.cluster.common import GW_API, condition
from tests.cluster.conftest import Kube
from tests.cluster.test_examples import prepare
from tests.support import metric_names
from tests.support.helpers import objects, with_gateway

pytestmark = pytest.mark.playbook
NS = "envoy-gateway-system"
OBSERVED: dict[str, Any] = merge_config(
    with_gateway({}),
    {"metrics": {"vmpodscrape": {"enabled": True}, "rules": {"enabled": True}, "dashboards": {"enabled": True}}},
)


def _scrape(addresses: list[str], port: int) -> str:
    errors = []
    for address in addresses:
        try:
            with urllib.request.urlopen(f"http://{address}:{port}/metrics", timeout=5) as response:
                return str(response.read().decode())
        except OSError as err:
            errors.append(f"{address}: {err}")
    raise AssertionError(f"the controller's /metrics: {errors}")


def test_controller_is_scraped_where_the_block_looks_and_exposes_every_name_used(kube: Kube) -> None:
    cfg = kube.config(**OBSERVED)
    prepare(kube, cfg)
    kube.playbook("install", cfg).ok()
    kube.wait(
        lambda: condition(kube.get(f"{GW_API}/namespaces/{NS}/gateways/eg-shared"), "Programmed") == "True",
        120,
        "the default Gateway Programmed (the controller has reconciled)",
    )
    rendered = objects(OBSERVED)
    scrape = next(o for o in rendered if o["kind"] == "VMServiceScrape")
    services = kube.items(
        f"/api/v1/namespaces/{NS}/services",
        labelSelector=",".join(f"{k}={v}" for k, v in scrape["spec"]["selector"]["matchLabels"].items()),
    )
    assert [s["metadata"]["name"] for s in services] == ["envoy-gateway"], "the scrape selects the chart's Service"
    ports = {p["name"]: p["port"] for p in services[0]["spec"]["ports"]}
    port = ports[scrape["spec"]["endpoints"][0]["port"]]
    pods = kube.items(f"/api/v1/namespaces/{NS}/pods", labelSelector="control-plane=envoy-gateway")
    addresses = [p["status"]["podIP"] for p in pods if (p.get("status") or {}).get("podIP")] + ["127.0.0.1"]
    real = metric_names.exposed(_scrape(addresses, port))
    lacking = metric_names.missing(rendered, "controller", real)
    assert not lacking, f"queries name metrics the controller does not expose: {lacking}"
    used = {n for e in metric_names.queries(rendered).values() for n in metric_names.names_in_query(e)}
    print(
        f"\nOBSERVABILITY controller names used: {sorted(n for n in used if metric_names.component(n) == 'controller')}"
    )

    for kind, plural in (
        ("VMServiceScrape", "vmservicescrapes"),
        ("VMPodScrape", "vmpodscrapes"),
        ("VMRule", "vmrules"),
    ):
        for obj in (o for o in rendered if o["kind"] == kind):
            path = f"/apis/operator.victoriametrics.com/v1beta1/namespaces/{NS}/{plural}/{obj['metadata']['name']}"
            assert kube.get(path), f"{kind} {obj['metadata']['name']} applied"
    status = kube.playbook("status", cfg).ok()
    for kind in ("VMServiceScrape", "VMPodScrape", "VMRule"):
        assert f"{kind}/envoy-" in status.output, status.output[-3000:]
