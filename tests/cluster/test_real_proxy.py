"""The proxies the real Envoy Gateway controller creates for the block's classes, run as real Envoy processes
(tests/cluster/proxy.py plays the kubelet), configured over xDS by the controller itself.

What egctl cannot show (it never merges Gateways, envoyproxy/gateway#3937, and routes to cluster IPs): on
eg-shared (mergeGateways) the default Gateway and a tenant's Gateway share ONE proxy Deployment, whose Envoy
gets both Gateways' listeners; a tenant Gateway on eg-dedicated gets its own proxy with only its listener;
and routes reach a backend through the endpoints the controller read from an EndpointSlice.
"""

from __future__ import annotations

import http.client
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support import apiserver

from .conftest import Kube
from .proxy import EchoHandler, ProxyPod, host_address

NS = "envoy-gateway-system"
TENANT = "tenant-proxies"
GATEWAY_API = "gateway.networking.k8s.io/v1"
# Ports free on this host: the proxies' listeners bind here, beside the controller (which holds 8080).
SHARED_TENANT_PORT, DEDICATED_PORT = 8888, 9080


@pytest.fixture
def backend() -> Iterator[tuple[str, int]]:
    """A tenant's pod: an HTTP server on this host's address (EndpointSlices refuse loopback ones)."""
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), EchoHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield host_address(), int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def _tenant(address: str, port: int) -> list[dict[str, Any]]:
    def gateway(name: str, class_name: str, listener: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": GATEWAY_API,
            "kind": "Gateway",
            "metadata": {"name": name, "namespace": TENANT},
            "spec": {"gatewayClassName": class_name, "listeners": [listener]},
        }

    def route(parent: str, namespace: str, section: str) -> dict[str, Any]:
        return {
            "apiVersion": GATEWAY_API,
            "kind": "HTTPRoute",
            "metadata": {"name": f"to-{parent}", "namespace": TENANT},
            "spec": {
                "parentRefs": [{"name": parent, "namespace": namespace, "sectionName": section}],
                "rules": [{"backendRefs": [{"name": "echo", "port": 80}]}],
            },
        }

    shop = {"name": "shop", "protocol": "HTTP", "port": SHARED_TENANT_PORT, "hostname": "shop.example.com"}
    return [
        gateway("tenant-shared", "eg-shared", shop),
        gateway("tenant-dedicated", "eg-dedicated", {"name": "http", "protocol": "HTTP", "port": DEDICATED_PORT}),
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "echo", "namespace": TENANT},
            "spec": {"ports": [{"name": "http", "port": 80, "targetPort": port}]},
        },
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": "echo-1", "namespace": TENANT, "labels": {"kubernetes.io/service-name": "echo"}},
            "addressType": "IPv4",
            "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
        },
        route("eg-shared", NS, "http"),
        route("tenant-shared", TENANT, "shop"),
        route("tenant-dedicated", TENANT, "http"),
    ]


def _create(kube: Kube, obj: dict[str, Any]) -> None:
    plural = {"EndpointSlice": "endpointslices"}.get(obj["kind"])
    if plural:
        kube.api.post(f"/apis/discovery.k8s.io/v1/namespaces/{TENANT}/{plural}", obj)
    else:
        kube.apply(obj)


def _deployments(kube: Kube, selector: str) -> list[str]:
    found = kube.items(f"/apis/apps/v1/namespaces/{NS}/deployments", labelSelector=selector)
    return [d["metadata"]["name"] for d in found]


def _get(port: int, host: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", "/through-the-controller", headers={"Host": host})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _served(kube: Kube, proxy: ProxyPod, port: int, host: str) -> dict[str, Any]:
    """The backend's answer through the proxy (listeners can come before the routes' endpoints: wait)."""

    def answer() -> dict[str, Any] | None:
        try:
            status, body = _get(port, host)
        except OSError:
            return None
        return dict(json.loads(body)) if status == 200 else None

    found: dict[str, Any] = kube.wait(answer, 60, f"a 200 from the backend through :{port} ({proxy.errors()[-500:]})")
    return found


def test_the_controller_merges_eg_shared_and_serves_routes_from_endpoint_slices(
    kube: Kube, backend: tuple[str, int], tmp_path: Path
) -> None:
    """Mutation: mergeGateways false on eg-shared (components/gatewayclasses.py) -> red (two Deployments for
    eg-shared, and the tenant's listener not in the default Gateway's proxy)."""
    kube.playbook("install", kube.config(default_gateway={"enabled": True})).ok()
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TENANT}})
    try:
        for obj in _tenant(*backend):
            _create(kube, obj)
        shared_selector = "gateway.envoyproxy.io/owning-gatewayclass=eg-shared"
        dedicated_selector = (
            f"gateway.envoyproxy.io/owning-gateway-name=tenant-dedicated,"
            f"gateway.envoyproxy.io/owning-gateway-namespace={TENANT}"
        )
        (shared,) = kube.wait(lambda: _deployments(kube, shared_selector), 60, "eg-shared's merged proxy")
        (dedicated,) = kube.wait(lambda: _deployments(kube, dedicated_selector), 60, "the dedicated Gateway's proxy")

        # One proxy at a time: each binds the readiness port the controller sends it over xDS (19003).
        proxy = ProxyPod(kube.api, NS, shared, tmp_path)
        try:
            # The default Gateway's http (:80) and tls (:443) listeners, shifted by 10000, and the tenant's.
            both = {10080, 10443, SHARED_TENANT_PORT}
            kube.wait(lambda: proxy.gateway_listener_ports() == both, 60, "both Gateways' listeners in one proxy")
            assert _served(kube, proxy, 10080, "app.example.com")["host"] == "app.example.com"
            assert _served(kube, proxy, SHARED_TENANT_PORT, "shop.example.com")["host"] == "shop.example.com"
        finally:
            proxy.stop()
        # By now the controller has handled the tenant's shared Gateway: still one proxy for the class.
        assert _deployments(kube, shared_selector) == [shared]

        proxy = ProxyPod(kube.api, NS, dedicated, tmp_path)
        try:
            only = {DEDICATED_PORT}
            kube.wait(lambda: proxy.gateway_listener_ports() == only, 60, "only the dedicated Gateway's listener")
            assert _served(kube, proxy, DEDICATED_PORT, "any.example.com")["path"] == "/through-the-controller"
        finally:
            proxy.stop()
    finally:
        for name in ("tenant-shared", "tenant-dedicated"):
            kube.delete({"apiVersion": GATEWAY_API, "kind": "Gateway", "metadata": {"name": name, "namespace": TENANT}})
        apiserver.delete_namespace(kube.api, TENANT)
