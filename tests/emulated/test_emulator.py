"""The emulator itself behaves like an apiserver where the playbooks depend on it (it is NOT a cluster):
the 256 KiB annotation limit that makes client-side apply of the 1.4 MB EnvoyProxy CRD fail while
server-side apply passes; CRDs registering kinds; CR validation answered with 422; dry runs that do not
mutate; namespaces that must exist."""

from __future__ import annotations

import json
from typing import Any

import yaml

from tests.emulated.conftest import Emulator
from tests.support.gate import shared_dir

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _envoyproxy_crd() -> dict[str, Any]:
    path = shared_dir() / "crds" / "envoy-gateway" / "gateway.envoyproxy.io_envoyproxies.yaml"
    return dict(yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader))


def test_client_side_apply_of_the_big_crd_fails_server_side_passes(emulator: Emulator) -> None:
    crd = _envoyproxy_crd()
    client_side = json.loads(json.dumps(crd))
    client_side["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(crd),
    }
    code, body = emulator.request("POST", CRDS, client_side)
    assert code == 422, body
    assert "Too long" in body["message"]
    code, body = emulator.request(
        "PATCH", f"{CRDS}/{crd['metadata']['name']}?fieldManager=test", crd, "application/apply-patch+yaml"
    )
    assert code == 201, body


def test_crd_registers_kind_and_validates_custom_resources(emulator: Emulator) -> None:
    path = "/apis/gateway.envoyproxy.io/v1alpha1/namespaces/demo/envoyproxies"
    proxy: dict[str, Any] = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyProxy",
        "metadata": {"name": "p", "namespace": "demo"},
        "spec": {
            "provider": {
                "type": "Kubernetes",
                "kubernetes": {"envoyService": {"type": "ClusterIP", "loadBalancerIP": "192.0.2.1"}},
            }
        },
    }
    assert emulator.request("POST", path, proxy)[0] == 404, "no CRD yet: the kind is unknown"
    assert (
        emulator.request(
            "PATCH",
            f"{CRDS}/envoyproxies.gateway.envoyproxy.io?fieldManager=t",
            _envoyproxy_crd(),
            "application/apply-patch+yaml",
        )[0]
        == 201
    )
    assert emulator.request("POST", path, proxy)[0] == 404, "the namespace must exist"
    emulator.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}
    )
    code, body = emulator.request("POST", path, proxy)
    assert code == 422, body
    assert "loadBalancerIP can only be set for LoadBalancer type" in body["message"]
    proxy["spec"]["provider"]["kubernetes"]["envoyService"]["type"] = "LoadBalancer"
    code, body = emulator.request("POST", f"{path}?dryRun=All", proxy)
    assert code == 201, body
    assert emulator.objects("EnvoyProxy") == [], "a dry run stores nothing"
    assert emulator.request("POST", path, proxy)[0] == 201
    assert emulator.request("POST", path, proxy)[0] == 409
