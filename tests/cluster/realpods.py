"""A tenant around the block on the real node (tests/cluster/test_real_flows.py, test_proxy_rollout.py): backend
pods from the echo image the node builds (tools/go/echo: HTTP on 8080, TLS on 8443 with a certificate of its
own for $TLS_NAME, every answer a JSON echo naming its pod and what arrived), routes on the block's default
Gateway, pods that only lend their network namespace to probes."""

from __future__ import annotations

import time
from typing import Any

from tests.cluster import common
from tests.cluster.conftest import Kube
from tools.oci.images import ECHO_REF

BLOCK_NS = "envoy-gateway-system"
DEFAULT_GATEWAY = "eg-shared"
RESTRICTED = common.RESTRICTED


def echo_pod_spec(env: dict[str, str] | None = None) -> dict[str, Any]:
    """The echo server, Ready once /healthz answers, within Pod Security `restricted`."""
    container = {
        "name": "echo",
        "image": ECHO_REF,
        "imagePullPolicy": "IfNotPresent",
        "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
        "ports": [{"containerPort": 8080, "name": "http"}, {"containerPort": 8443, "name": "tls"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 1},
        "securityContext": RESTRICTED,
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}},
    }
    # The echo server is PID 1 without a SIGTERM handler, so the signal is ignored: without this, every delete
    # waits the default 30 s for the kill.
    return {"containers": [container], "terminationGracePeriodSeconds": 2}


def backend(kube: Kube, namespace: str, name: str, env: dict[str, str] | None = None) -> None:
    """A one-replica echo Deployment `name` (pods labelled app=name) behind a Service `name` (http 80 -> 8080,
    tls 443 -> 8443)."""
    labels = {"app": name}
    kube.apply(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": echo_pod_spec(env)},
            },
        }
    )
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "selector": labels,
                "ports": [
                    {"name": "http", "port": 80, "targetPort": "http"},
                    {"name": "tls", "port": 443, "targetPort": "tls"},
                ],
            },
        }
    )


def route(kind: str, namespace: str, name: str, section: str, host: str, to: str, port: int) -> dict[str, Any]:
    """An HTTPRoute or TLSRoute on a listener of the block's default Gateway, for one hostname, to Service `to`."""
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "parentRefs": [{"name": DEFAULT_GATEWAY, "namespace": BLOCK_NS, "sectionName": section}],
            "hostnames": [host],
            "rules": [{"backendRefs": [{"name": to, "port": port}]}],
        },
    }


def delete_namespaces(kube: Kube, *namespaces: str, timeout: float = 180) -> None:
    """Delete the namespaces and wait until they are gone; if one stays, say what holds it (the namespace
    controller's conditions and the pods left)."""
    for namespace in namespaces:
        if kube.get(f"/api/v1/namespaces/{namespace}") is not None:
            kube.api.delete(f"/api/v1/namespaces/{namespace}")
    deadline = time.monotonic() + timeout
    for namespace in namespaces:
        while (found := kube.get(f"/api/v1/namespaces/{namespace}")) is not None:
            if time.monotonic() > deadline:
                conditions = [
                    f"{c['type']}: {c.get('message', '')}" for c in (found.get("status") or {}).get("conditions") or []
                ]
                pods = [
                    f"{p['metadata']['name']} ({(p.get('status') or {}).get('phase')})"
                    for p in kube.items(f"/api/v1/namespaces/{namespace}/pods")
                ]
                raise AssertionError(f"namespace {namespace} not gone in {timeout:.0f} s: {conditions}; pods {pods}")
            time.sleep(0.5)


def gateway_address(kube: Kube) -> str:
    """The default Gateway's address as the controller reports it (the proxy Service's LoadBalancer address)."""
    return common.gateway_address(kube, BLOCK_NS, DEFAULT_GATEWAY)
