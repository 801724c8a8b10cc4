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

The WAF's image comes from a registry that requires a login (the session's, TLS and htpasswd), pulled by the
kubelet with the Secret named in image.pull_secrets (issue 40): the WAF turns Ready from the pulled image, and
every pod the block causes (certgen's, the controller's, the proxies', the WAF's) carries the Secret, as the
chart and the real controller rendered them. The other images are imported, so only the WAF's is pulled.

It went red, naming the panel, while the controller was scraped before a proxy had connected
(xds_snapshot_update_total did not exist yet) and while the ext_proc names were expected from an Envoy no
request had gone through; the same comparison's mutation check is in tests/traffic/test_observability.py.
"""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from envoy_block.polycrate import merge_config
from tests.cluster.common import GW_API, condition, pod_ips
from tests.cluster.conftest import Kube
from tests.cluster.test_examples import prepare
from tests.harness.node import deployment_ready
from tests.harness.registry import PASSWORD, USER
from tests.support import metric_names
from tests.support.helpers import objects, with_gateway
from tests.support.output import show
from tools.oci import Store
from tools.oci.images import WAF_REF

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


PULLED = "platform/envoy-waf:behind-a-login"
PULL_SECRET = "regcred"


def _waf_image_behind_a_login(kube: Kube) -> dict[str, Any]:
    """The WAF image pushed to the session's registry under a name the node has not imported, the node trusting
    that registry's CA, and the pull Secret in the block's namespace: the config that pulls it with the Secret."""
    host = kube.registry.host
    certs = kube.workdir / "registry-certs"
    certs.mkdir()
    shutil.copy(kube.registry.pki.ca_crt, certs / "ca.crt")
    store = Store(offline=True)
    # An image of its own, the WAF's with one label more: from Kubernetes 1.35 the kubelet records an image it
    # pulled with a Secret by its ID and then verifies credentials for every pod of that ID
    # (KubeletEnsureSecretPulledImages), so the imported WAF image, of the same ID, was pulled again for the
    # next test's pods without a Secret on this node, and failed (no network; seen 2026-12-07).
    local = f"localhost/envoy-waf:pulled-{host.rpartition(':')[2]}"
    container = store.buildah("from", "--pull=never", "--quiet", WAF_REF, what="start from the WAF image").strip()
    try:
        store.buildah("config", "--label", "envoy.polycrate.io/test=pulled-with-a-secret", container, what="label it")
        store.buildah("commit", "--quiet", container, local, what="commit the WAF image of its own")
    finally:
        store.buildah("rm", container, what="remove the working container")
    try:
        store.buildah(
            "push", "--quiet", "--cert-dir", str(certs), "--creds", f"{USER}:{PASSWORD}", local, f"docker://{host}/{PULLED}",
            what="push the WAF image to the registry",
        )  # fmt: skip
    finally:
        store.buildah("rmi", local, what="remove the local copy")
    anonymous = urllib.request.Request(f"https://{host}/v2/{PULLED.replace(':', '/manifests/')}")
    context = ssl.create_default_context(cafile=str(certs / "ca.crt"))
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(anonymous, context=context, timeout=10)
    assert refused.value.code == 401, "the registry requires the login"
    kube.cluster.pull_from(host, kube.registry.pki.ca_crt)
    docker_config = {"auths": {host: {"auth": base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()}}}
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/dockerconfigjson",
            "metadata": {"name": PULL_SECRET, "namespace": NS},
            "data": {".dockerconfigjson": base64.b64encode(json.dumps(docker_config).encode()).decode()},
        }
    )
    repository, tag = PULLED.split(":")
    return {
        "image": {"pull_secrets": [PULL_SECRET]},
        "waf": {"image": {"registry": host, "repository": repository, "tag": tag}},
    }


def _pulled_with_the_secret(kube: Kube) -> None:
    """The WAF runs from the pulled image; every pod the block causes carries the Secret."""
    kube.wait(lambda: deployment_ready(kube.api, NS, "envoy-waf"), 180, "the WAF Ready from the pulled image")
    assert [line for line in kube.cluster.pulls(unexpected=False) if PULLED in line], "the kubelet pulled it"
    pods = kube.items(f"/api/v1/namespaces/{NS}/pods")
    # certgen's Job pod is gone after its TTL (30 s); its template's Secret: tests/unit/test_pull_secrets.py.
    for what, selector in (
        ("the controller", "control-plane=envoy-gateway"),
        ("the shared fleet's proxies", SHARED_FLEET),
        ("the WAF", "app.kubernetes.io/instance=envoy,envoy.polycrate.io/role=waf"),
    ):
        assert kube.items(f"/api/v1/namespaces/{NS}/pods", labelSelector=selector), f"no pod of {what}"
    for pod in pods:
        assert pod["spec"].get("imagePullSecrets") == [{"name": PULL_SECRET}], pod["metadata"]["name"]
    show(f"PULL SECRET {len(pods)} pods carry {PULL_SECRET}; the WAF pulled {PULLED} from {kube.registry.host}")


def test_controller_and_envoy_expose_every_name_the_alerts_and_panels_use(kube: Kube) -> None:
    cfg = kube.config(**merge_config(OBSERVED, _waf_image_behind_a_login(kube)))
    prepare(kube, cfg)
    kube.playbook("install", cfg).ok()
    _pulled_with_the_secret(kube)
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
    lacking = metric_names.missing(
        rendered, "envoy", envoy, metric_names.ENVOY_AFTER_A_REQUEST | metric_names.ENVOY_SDS_ONLY
    )
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
