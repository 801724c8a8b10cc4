"""A real MetalLB (tests/harness/metallb.py) is the harness's LoadBalancer provider: its controller assigns a
LoadBalancer Service an address from the TEST-NET pool, refuses a Service that asks both by
`metallb.io/loadBalancerIPs` and by spec.loadBalancerIP (it stays Pending, MetalLB's event says why), its speaker
announces the address from the node in L2 mode, and a request from the node's network namespace (this process)
reaches a pod through kube-proxy at that address; its webhook, reached by the API server, judges the pools. What
MetalLB said is printed."""

from __future__ import annotations

import ipaddress
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.harness import metallb
from tests.harness.api import Api, ApiError
from tests.harness.node import NODE_NAME, deployment_ready
from tests.harness.procs import wait_until
from tests.node.test_node import post_deployment
from tools.oci.images import ECHO_REF


@pytest.fixture(scope="module")
def namespace(api: Api) -> Iterator[str]:
    name = f"lb-{uuid.uuid4().hex[:6]}"
    api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    api.delete(f"/api/v1/namespaces/{name}")


def service(namespace: str, name: str, annotations: dict[str, str], ip: str | None = None) -> dict[str, Any]:
    ports = [{"port": 80, "targetPort": 8080}]
    spec: dict[str, Any] = {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": ports}
    if ip:
        spec["loadBalancerIP"] = ip
    meta = {"name": name, "namespace": namespace, "annotations": annotations}
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def ingress(api: Api, namespace: str, name: str) -> list[str]:
    svc = api.get(f"/api/v1/namespaces/{namespace}/services/{name}")
    return [i["ip"] for i in ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []]


def said(api: Api, namespace: str, name: str, reason: str) -> list[tuple[str, str, str]]:
    return [e for e in metallb.events(api, namespace, name) if e[1] == reason]


def test_metallb_assigns_refuses_announces_and_serves(api: Api, namespace: str) -> None:
    container = {
        "name": "web",
        "image": ECHO_REF,
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"containerPort": 8080, "name": "http"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 1},
    }
    post_deployment(api, namespace, container, replicas=1)
    asked = "203.0.113.77"
    api.post(f"/api/v1/namespaces/{namespace}/services", service(namespace, "pool", {}))
    both = service(namespace, "both", {"metallb.io/loadBalancerIPs": asked}, ip=asked)
    api.post(f"/api/v1/namespaces/{namespace}/services", both)

    # The controller assigns from the pool and says so.
    wait_until(lambda: ingress(api, namespace, "pool"), 60, "MetalLB assigns the pool Service an address")
    (vip,) = ingress(api, namespace, "pool")
    assert ipaddress.ip_address(vip) in ipaddress.ip_network(metallb.POOL), vip
    # The event is recorded after the status is written (client-go's broadcaster sends it asynchronously): a
    # read right after the address appeared once found none (a fresh clone's run, 2026-12-08).
    wait_until(lambda: said(api, namespace, "pool", "IPAllocated"), 30, "MetalLB's IPAllocated event")
    allocated = said(api, namespace, "pool", "IPAllocated")
    print(f"\nMetalLB on Service pool: {allocated}")
    assert any(source == "metallb-controller" and vip in message for source, _, message in allocated), allocated

    # The speaker announces it from this node in L2 mode.
    wait_until(lambda: said(api, namespace, "pool", "nodeAssigned"), 60, "the speaker announces the address")
    announced = said(api, namespace, "pool", "nodeAssigned")
    print(f"MetalLB on Service pool: {announced}")
    assert any(f'"{NODE_NAME}"' in m and '"layer2"' in m for _, _, m in announced), announced

    # Annotation and spec.loadBalancerIP together: refused by MetalLB itself, the Service stays Pending.
    wait_until(lambda: said(api, namespace, "both", "AllocationFailed"), 60, "MetalLB refuses the Service asking twice")
    refused = said(api, namespace, "both", "AllocationFailed")
    print(f"MetalLB on Service both: {refused}")
    assert any("can not have both" in m for _, _, m in refused), refused
    assert ingress(api, namespace, "both") == []
    assert not said(api, namespace, "both", "IPAllocated")

    # From the node's network namespace (this process), the address reaches the pod through kube-proxy.
    wait_until(lambda: deployment_ready(api, namespace, "web"), 120, "web Deployment Ready")
    http = requests.Session()
    http.trust_env = False  # never a proxy from the environment: the address exists only here
    wait_until(lambda: http.get(f"http://{vip}/", timeout=5).ok, 30, f"http://{vip}/ served by kube-proxy")
    pods = {p["metadata"]["name"] for p in api.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector="app=web")}
    answer = http.get(f"http://{vip}/", timeout=5).json()
    print(f"GET http://{vip}/ -> pod {answer['pod']}")
    assert answer["pod"] in pods
    # The refused Service's asked address was never given to anyone.
    assert ingress(api, namespace, "both") == []


def test_the_api_server_reaches_metallbs_webhook(api: Api, namespace: str) -> None:
    """MetalLB's validating webhook (failurePolicy Fail, its certificate made by the controller) is reached by
    the API server through kube-proxy and judges a pool: one overlapping the platform's is refused by it."""
    (pool, _) = metallb.pool_objects()
    clash = {**pool, "metadata": {"name": "clash", "namespace": metallb.NAMESPACE}}
    with pytest.raises(ApiError) as refused:
        api.post(f"/apis/metallb.io/v1beta1/namespaces/{metallb.NAMESPACE}/ipaddresspools", clash)
    print(f"\nMetalLB's webhook on an overlapping pool: {str(refused.value)[:300]}")
    assert refused.value.status == 403, refused.value
    assert "ipaddresspoolvalidationwebhook.metallb.io" in str(refused.value)
    assert "overlaps with already defined CIDR" in str(refused.value)
