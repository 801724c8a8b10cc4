"""The scrapes, alerts and dashboards against the REAL controller (v1.9.1) and a REAL Envoy it feeds over
xDS, on the real control plane.

Install with metrics.vmpodscrape, metrics.rules and metrics.dashboards on, the WAF and PROXY protocol (so the
ext_proc and proxy_protocol filters are in the proxies' configuration), and the VictoriaMetrics CRDs as its
operator installs them. The VMServiceScrape's selector finds the Service helm created for the controller and
that Service has the port it scrapes; the controller, once it has reconciled the default Gateway, serves
/metrics there. The shared fleet's proxy pod (Envoy from the pinned image, on the real node) gets its
configuration from the controller; it is scraped on its pod IP's stats listener at the VMPodScrape's path. Every
name the alerts and panels use is then among the controller's real series (controller names) or the real
Envoy's (envoy_* names, but the ext_proc ones, which Envoy creates with the first request through the
filter: the traffic test checks those); the WAF's are checked in tests/traffic/test_observability.py.
`status` lists the scrapes and the VMRule.

It went red, naming the panel, while the controller was scraped before a proxy had connected
(xds_snapshot_update_total did not exist yet) and while the ext_proc names were expected from an Envoy no
request had gone through; the same comparison's mutation check is in tests/traffic/test_observability.py.
"""

from __future__ import annotations

import time
import urllib.request
from typing import Any

import pytest

from envoy_block.polycrate import merge_config
from tests.cluster.common import GW_API, condition, pod_ips
from tests.cluster.conftest import Kube
from tests.cluster.test_examples import prepare
from tests.harness.node import deployment_ready
from tests.support import metric_names
from tests.support.helpers import objects, with_gateway
from tests.support.output import show

pytestmark = pytest.mark.playbook
NS = "envoy-gateway-system"
OBSERVED: dict[str, Any] = merge_config(
    with_gateway(
        {
            "client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True, "optional": True}},
            # An image of our own: install refuses the never-published default.
            "waf": {
                "enabled": True,
                "default_policy": {"enabled": True},
                "image": {"registry": "registry.example.com", "repository": "platform/envoy-waf"},
            },
        }
    ),
    {"metrics": {"vmpodscrape": {"enabled": True}, "rules": {"enabled": True}, "dashboards": {"enabled": True}}},
)
SHARED_FLEET = "gateway.envoyproxy.io/owning-gatewayclass=eg-shared"
ROUTE: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "observed-tenant"}},
    {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "app", "namespace": "observed-tenant"},
        "spec": {
            "parentRefs": [{"name": "eg-shared", "namespace": NS}],
            "rules": [{"backendRefs": [{"name": "app", "port": 8080}]}],
        },
    },
]


def _scrape(addresses: list[str], port: int) -> str:
    errors = []
    for address in addresses:
        try:
            with urllib.request.urlopen(f"http://{address}:{port}/metrics", timeout=5) as response:
                return str(response.read().decode())
        except OSError as err:
            errors.append(f"{address}: {err}")
    raise AssertionError(f"the controller's /metrics: {errors}")


def test_controller_and_envoy_expose_every_name_the_alerts_and_panels_use(kube: Kube) -> None:
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
    (fleet,) = kube.wait(
        lambda: kube.items(f"/apis/apps/v1/namespaces/{NS}/deployments", labelSelector=SHARED_FLEET), 60, "the fleet"
    )
    # Ready only once it has its listeners from the controller (the readiness listener comes over xDS too).
    kube.wait(lambda: deployment_ready(kube.api, NS, fleet["metadata"]["name"]), 120, "the fleet's proxy pod Ready")
    (proxy_ip, *_) = sorted(pod_ips(kube, NS, SHARED_FLEET))
    try:
        path = next(o for o in rendered if o["kind"] == "VMPodScrape")["spec"]["podMetricsEndpoints"][0]["path"]
        stats = f"http://{proxy_ip}:19001{path}"
        for _ in range(2):  # the first scrape is itself an upstream request: its series exist from then on
            with urllib.request.urlopen(stats, timeout=5) as response:
                envoy = metric_names.exposed(response.read().decode())
        # xds_snapshot_update_total counts snapshots pushed to proxies already connected (Envoy Gateway's
        # snapshotcache.go); a proxy that connects after the last change gets the cached one uncounted. So a
        # tenant's route changes the configuration once the proxy is in, as consumers do all day.
        for obj in ROUTE:
            kube.apply(obj)
        # Through the scraped Service's ClusterIP and port (kube-proxy): the port the VMServiceScrape names.
        addresses = [services[0]["spec"]["clusterIP"]]
        deadline = time.monotonic() + 30
        while True:  # the controller counts its xDS pushes as the proxy takes them
            lacking = metric_names.missing(rendered, "controller", metric_names.exposed(_scrape(addresses, port)))
            if not lacking or time.monotonic() > deadline:
                break
            time.sleep(2)
        assert not lacking, f"queries name metrics the controller does not expose: {lacking}"
        used = {n for e in metric_names.queries(rendered).values() for n in metric_names.names_in_query(e)}
        show(f"OBSERVABILITY controller names used: {sorted(n for n in used if not n.startswith(('envoy_', 'waf_')))}")
    finally:
        for obj in reversed(ROUTE):  # the tenant's objects go, so the fixture's uninstall finds no tenant
            kube.delete(obj)
    lacking = metric_names.missing(rendered, "envoy", envoy, metric_names.ENVOY_AFTER_A_REQUEST)
    assert not lacking, f"queries name metrics the real Envoy does not expose: {lacking}"

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
