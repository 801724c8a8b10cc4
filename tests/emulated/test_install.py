"""install against the emulated API: applies exactly the plan, is idempotent, and plan (check mode)
mutates nothing.

Mutation check (done once): giving every apply in objects.yml a fresh random annotation turned
test_install_applies_the_plan_and_is_idempotent red (the second install reported changes).
"""

from __future__ import annotations

import pytest
import yaml

from tests.emulated.conftest import Emulator, base_config
from tests.support.gate import shared_dir
from tests.support.helpers import plan

pytestmark = pytest.mark.playbook


def _owned(emulator: Emulator) -> set[tuple[str, str | None, str]]:
    return {
        (o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"])
        for o in emulator.objects()
        if (o["metadata"].get("labels") or {}).get("app.kubernetes.io/managed-by") == "polycrate"
    }


def test_install_applies_the_plan_and_is_idempotent(emulator: Emulator) -> None:
    cfg = base_config(client_traffic={"enabled": True, "proxy_protocol": {"enabled": True}})
    first = emulator.playbook("install", cfg)
    assert first.returncode == 0, first.output[-4000:]
    assert first.recap["changed"] > 0
    expected = {(s.kind, s.namespace, s.name) for s in plan(cfg).steps}
    assert _owned(emulator) == expected
    crds = {o["metadata"]["name"] for o in emulator.objects("CustomResourceDefinition")}
    assert {"gateways.gateway.networking.k8s.io", "envoyproxies.gateway.envoyproxy.io"} <= crds

    versions = {o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in emulator.objects()}
    second = emulator.playbook("install", cfg)
    assert second.returncode == 0, second.output[-4000:]
    assert second.recap["changed"] == 0, second.output[-4000:]
    assert {o["metadata"]["uid"]: o["metadata"]["resourceVersion"] for o in emulator.objects()} == versions


def test_plan_is_a_dry_run(emulator: Emulator) -> None:
    """plan (check mode + diff) after a config change reports the change and writes nothing."""
    cfg = base_config()
    assert emulator.playbook("install", cfg).returncode == 0
    before = emulator.state()["objects"]
    writes_before = len(emulator.journal())
    changed_cfg = base_config(data_plane={"replicas": 3}, backend_traffic={"enabled": True})
    run = emulator.playbook("plan", changed_cfg)
    assert run.returncode == 0, run.output[-4000:]
    assert run.recap["changed"] > 0, "plan must show the pending change"
    assert "replicas" in run.output
    assert emulator.state()["objects"] == before
    assert all(entry["dry_run"] for entry in emulator.journal()[writes_before:])


def test_plan_on_a_fresh_cluster_changes_nothing(emulator: Emulator) -> None:
    run = emulator.playbook("plan", base_config())
    assert run.returncode == 0, run.output[-4000:]
    assert "does not exist yet" in run.output
    assert emulator.objects() == []


def test_switching_a_component_off_prunes_it(emulator: Emulator) -> None:
    on = base_config(client_traffic={"enabled": True}, backend_traffic={"enabled": True})
    assert emulator.playbook("install", on).returncode == 0
    assert emulator.objects("ClientTrafficPolicy")
    run = emulator.playbook("install", base_config(backend_traffic={"enabled": True}))
    assert run.returncode == 0, run.output[-4000:]
    assert emulator.objects("ClientTrafficPolicy") == []
    assert emulator.objects("BackendTrafficPolicy"), "only what the config dropped is pruned"


def test_a_kind_whose_crd_is_missing_stops_install_before_any_change(emulator: Emulator) -> None:
    """VMPodScrape needs the VictoriaMetrics operator's CRD, which the block does not install: install says
    so and changes nothing (the emulator answers like a cluster: the kind is not served)."""
    run = emulator.playbook("install", base_config(metrics={"vmpodscrape": {"enabled": True}}))
    assert run.returncode != 0
    assert "needs the VictoriaMetrics operator" in run.output
    assert emulator.objects() == [], "nothing may be applied when a prerequisite is missing"


def test_a_kind_is_usable_once_its_crd_is_served(emulator: Emulator) -> None:
    """With the operator's CRD present (applied here as the operator would), the same config installs."""
    crd = yaml.safe_load(
        (shared_dir() / "crds/victoriametrics/operator.victoriametrics.com_vmpodscrapes.yaml").read_text(
            encoding="utf-8"
        )
    )
    code, body = emulator.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201, body
    run = emulator.playbook("install", base_config(metrics={"vmpodscrape": {"enabled": True}}))
    assert run.returncode == 0, run.output[-4000:]
    assert emulator.objects("VMPodScrape")


def test_objects_of_other_owners_are_never_pruned(emulator: Emulator) -> None:
    assert emulator.playbook("install", base_config()).returncode == 0
    tenant = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "ClientTrafficPolicy",
        "metadata": {"name": "tenant", "namespace": "envoy-gateway-system", "labels": {"team": "a"}},
        "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "x"}]},
    }
    code, body = emulator.request(
        "POST", "/apis/gateway.envoyproxy.io/v1alpha1/namespaces/envoy-gateway-system/clienttrafficpolicies", tenant
    )
    assert code == 201, body
    assert emulator.playbook("install", base_config()).returncode == 0
    assert [o["metadata"]["name"] for o in emulator.objects("ClientTrafficPolicy")] == ["tenant"]
