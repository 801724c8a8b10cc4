"""uninstall against the emulated API: removes exactly what install created, Gateways first and in the
plan's delete order, keeps CRDs (users' routes) unless asked, keeps a namespace it did not create, refuses
while tenant Gateways use its classes, and a second run changes nothing.

Mutation check (done once): giving Phase.PROXY_CONFIG a delete rank after GATEWAYCLASS turned
test_uninstall_removes_everything_in_order red (the recorded DELETE sequence changed). Gateways-first is
structural (a task of its own before the rest), so the Gateway rank alone does not move it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.emulated.conftest import Emulator, base_config

pytestmark = pytest.mark.playbook

FULL = {
    "client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True}},
    "backend_traffic": {"enabled": True},
    "network_policy": {"provider": "kubernetes", "api_server_cidrs": ["10.96.0.1/32"]},
    "waf": {"enabled": True, "default_policy": {"enabled": True}},
}


def _owned(emulator: Emulator) -> list[dict[str, Any]]:
    return [
        o
        for o in emulator.objects()
        if (o["metadata"].get("labels") or {}).get("app.kubernetes.io/instance") == "envoy"
    ]


def test_uninstall_removes_everything_in_order(emulator: Emulator) -> None:
    cfg = base_config(**FULL)
    assert emulator.playbook("install", cfg).returncode == 0
    created = {(o["kind"], o["metadata"]["name"]) for o in _owned(emulator)}
    assert len(created) >= 10
    mark = len(emulator.journal())

    run = emulator.playbook("uninstall", cfg)
    assert run.returncode == 0, run.output[-4000:]
    assert _owned(emulator) == []
    deletes = [(e["kind"], e["name"]) for e in emulator.journal()[mark:] if e["verb"] == "delete" and not e["dry_run"]]
    assert set(deletes) == created, "uninstall removes exactly what install created"
    kinds = [kind for kind, _ in deletes]
    assert kinds[0] == "Gateway"
    assert max(kinds.index(k) for k in ("ClientTrafficPolicy", "BackendTrafficPolicy")) < kinds.index("EnvoyProxy")
    assert kinds.index("EnvoyExtensionPolicy") < kinds.index("EnvoyProxy")
    assert kinds.index("EnvoyProxy") < kinds.index("GatewayClass") < kinds.index("Deployment")
    assert kinds.index("Deployment") < kinds.index("NetworkPolicy")
    assert kinds[-1] == "Namespace"
    assert emulator.objects("CustomResourceDefinition"), "CRDs stay by default: they hold users' routes"

    again = emulator.playbook("uninstall", cfg)
    assert again.returncode == 0, again.output[-4000:]
    assert again.recap["changed"] == 0, again.output[-4000:]


def test_uninstall_removes_crds_only_when_asked(emulator: Emulator) -> None:
    cfg = base_config(uninstall={"remove_crds": True})
    assert emulator.playbook("install", cfg).returncode == 0
    run = emulator.playbook("uninstall", cfg)
    assert run.returncode == 0, run.output[-4000:]
    assert emulator.objects("CustomResourceDefinition") == []


def test_a_namespace_the_block_did_not_create_is_kept(emulator: Emulator) -> None:
    code, _ = emulator.request(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "envoy-gateway-system"}},
    )
    assert code == 201
    cfg = base_config()
    assert emulator.playbook("install", cfg).returncode == 0
    assert emulator.playbook("uninstall", cfg).returncode == 0
    assert [o["metadata"]["name"] for o in emulator.objects("Namespace")] == ["envoy-gateway-system"]
    assert emulator.objects("Gateway") == []


def test_tenant_gateways_block_uninstall(emulator: Emulator) -> None:
    cfg = base_config()
    assert emulator.playbook("install", cfg).returncode == 0
    emulator.request(
        "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}
    )
    tenant = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "team-a", "namespace": "team-a"},
        "spec": {"gatewayClassName": "eg-dedicated", "listeners": [{"name": "http", "protocol": "HTTP", "port": 8080}]},
    }
    code, body = emulator.request("POST", "/apis/gateway.networking.k8s.io/v1/namespaces/team-a/gateways", tenant)
    assert code == 201, body
    before = emulator.state()["objects"]
    run = emulator.playbook("uninstall", cfg)
    assert run.returncode != 0
    assert "team-a" in run.output
    assert "Nothing was removed" in run.output
    assert emulator.state()["objects"] == before
