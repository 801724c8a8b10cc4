"""The proxies the real Envoy Gateway controller creates for the block's classes, as pods on the real node,
configured over xDS by the controller itself and reached through the LoadBalancer addresses kube-proxy serves.

What egctl cannot show (it never merges Gateways, envoyproxy/gateway#3937, and routes to cluster IPs): on
eg-shared (mergeGateways) the default Gateway and a tenant's Gateway share ONE proxy Deployment and ONE
Service (one address), whose pods serve both Gateways' listeners; a tenant Gateway on eg-dedicated gets its
own proxy and address with only its listener; and routes reach a backend pod through the endpoints the
controller read from its Service's EndpointSlice. The backend's echo names the peer that connected to it,
so each answer says which proxy pod carried it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster.common import echo_backend, gateway_address, pod_ips, served
from tests.cluster.conftest import Kube
from tests.support import apiserver
from tests.support.output import show

pytestmark = pytest.mark.playbook
NS = "envoy-gateway-system"
TENANT = "tenant-proxies"
GATEWAY_API = "gateway.networking.k8s.io/v1"
SHARED_TENANT_PORT, DEDICATED_PORT = 8888, 9080
SHARED = "gateway.envoyproxy.io/owning-gatewayclass=eg-shared"
DEDICATED = ",".join(
    (
        "gateway.envoyproxy.io/owning-gateway-name=tenant-dedicated",
        f"gateway.envoyproxy.io/owning-gateway-namespace={TENANT}",
    )
)


def _tenant() -> list[dict[str, Any]]:
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
        route("eg-shared", NS, "http"),
        route("tenant-shared", TENANT, "shop"),
        route("tenant-dedicated", TENANT, "http"),
    ]


def _names(kube: Kube, kind: str, selector: str) -> list[str]:
    group = "/apis/apps/v1" if kind == "deployments" else "/api/v1"
    return [o["metadata"]["name"] for o in kube.items(f"{group}/namespaces/{NS}/{kind}", labelSelector=selector)]


def _service_ports(kube: Kube, selector: str) -> set[int]:
    (svc,) = kube.items(f"/api/v1/namespaces/{NS}/services", labelSelector=selector)
    return {int(p["port"]) for p in svc["spec"]["ports"]}


def test_the_controller_merges_eg_shared_and_serves_routes_from_endpoint_slices(kube: Kube) -> None:
    """Mutation: mergeGateways false on eg-shared (components/gatewayclasses.py) -> red (two Deployments for
    eg-shared, and the tenant's listener not on the default Gateway's proxy)."""
    kube.playbook("install", kube.config(default_gateway={"enabled": True})).ok()
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TENANT}})
    try:
        echo_backend(kube, TENANT)
        for obj in _tenant():
            kube.apply(obj)
        (shared,) = kube.wait(lambda: _names(kube, "deployments", SHARED), 60, "eg-shared's merged proxy")
        kube.wait(lambda: len(_names(kube, "deployments", DEDICATED)) == 1, 60, "the dedicated Gateway's own proxy")
        kube.wait(
            lambda: _service_ports(kube, SHARED) == {80, 443, SHARED_TENANT_PORT},
            60,
            "both Gateways' listeners on the one shared Service",
        )
        vip = gateway_address(kube, NS, "eg-shared")
        assert gateway_address(kube, TENANT, "tenant-shared") == vip, "merged Gateways share one address"

        default = served(kube, vip, 80, "app.example.com", "/through-the-controller")
        tenant = served(kube, vip, SHARED_TENANT_PORT, "shop.example.com", "/through-the-controller")
        assert (default["host"], tenant["host"]) == ("app.example.com", "shop.example.com")
        shared_pods = pod_ips(kube, NS, SHARED)
        peers = {default["peer"].rpartition(":")[0], tenant["peer"].rpartition(":")[0]}
        assert peers <= shared_pods, (peers, shared_pods)
        # By now the controller has handled the tenant's shared Gateway: still one proxy for the class.
        assert _names(kube, "deployments", SHARED) == [shared]

        assert _service_ports(kube, DEDICATED) == {DEDICATED_PORT}, "only the dedicated Gateway's listener"
        own = gateway_address(kube, TENANT, "tenant-dedicated")
        assert own != vip
        answer = served(kube, own, DEDICATED_PORT, "any.example.com", "/through-the-controller")
        assert answer["path"] == "/through-the-controller"
        assert answer["peer"].rpartition(":")[0] in pod_ips(kube, NS, DEDICATED), answer
        assert not pod_ips(kube, NS, DEDICATED) & shared_pods
        show(f"REAL PROXY shared {vip} -> pods {sorted(shared_pods)}; dedicated {own} -> {answer['pod']}")
    finally:
        for name in ("tenant-shared", "tenant-dedicated"):
            kube.delete({"apiVersion": GATEWAY_API, "kind": "Gateway", "metadata": {"name": name, "namespace": TENANT}})
        apiserver.delete_namespace(kube.api, TENANT)
