"""The proxies' availability settings accepted by the REAL Envoy Gateway controller (v1.9.1) on the real
control plane: install with autoscaling, a disruption budget, drain settings, topology spread and placement;
the controller accepts both GatewayClasses (it validates their EnvoyProxy) and creates, for the default
Gateway's fleet, the HorizontalPodAutoscaler and PodDisruptionBudget with the configured values and a proxy
Deployment that surges (never below its size), spreads, carries the placement and drains as configured, and
whose three pods the real scheduler places and the kubelet runs to Ready.
Then the same with a fixed replica count: the controller removes the autoscaler and the Deployment gets
the count back (no fight between the two).

The rendering side of these invariants is guarded by tools/mutate.py (proxy-hpa-replicas-fight,
proxy-rollout-below-size, proxy-budget-blocks-drains); this test was not mutation-checked on the cluster.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from tests.cluster.common import GW_API, condition
from tests.cluster.conftest import Kube
from tests.harness.node import deployment_ready
from tests.support.helpers import with_gateway

pytestmark = pytest.mark.playbook
NS = "envoy-gateway-system"
FLEET = "gateway.envoyproxy.io/owning-gatewayclass=eg-shared"

AVAILABILITY: dict[str, Any] = {
    "data_plane": {
        "autoscaling": {"enabled": True, "min_replicas": 3, "max_replicas": 5, "cpu_utilization": 60},
        "disruption_budget": {"max_unavailable": 1},
        # Short, so the three real pods' graceful shutdown at uninstall stays short too.
        "shutdown": {"drain_timeout": "20s", "min_drain_duration": "4s"},
        "priority_class_name": "system-cluster-critical",
        "node_selector": {"kubernetes.io/os": "linux"},
        "tolerations": [{"key": "edge.example.com/dedicated", "operator": "Exists", "effect": "NoSchedule"}],
    }
}


def _one(kube: Kube, path: str, what: str) -> dict[str, Any]:
    found = kube.wait(lambda: kube.items(path, labelSelector=FLEET), 90, what)
    assert len(found) == 1, [f["metadata"]["name"] for f in found]
    return dict(found[0])


def test_availability_settings_are_accepted_and_realised_by_the_controller(kube: Kube) -> None:
    cfg = kube.config(**with_gateway(AVAILABILITY))
    kube.playbook("install", cfg).ok()

    def accepted(name: str) -> bool:
        return condition(kube.get(f"{GW_API}/gatewayclasses/{name}"), "Accepted") == "True"

    for cls in ("eg-shared", "eg-dedicated"):
        kube.wait(functools.partial(accepted, cls), 90, f"GatewayClass {cls} Accepted (its EnvoyProxy valid)")

    hpa = _one(kube, f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers", "the fleet's HPA")
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 5)
    assert hpa["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 60}
    pdb = _one(kube, f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets", "the fleet's PDB")
    assert pdb["spec"]["maxUnavailable"] == 1
    assert "minAvailable" not in pdb["spec"]
    deployment = _one(kube, f"/apis/apps/v1/namespaces/{NS}/deployments", "the fleet's Deployment")
    assert hpa["spec"]["scaleTargetRef"]["name"] == deployment["metadata"]["name"]
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": "100%", "maxUnavailable": 0}
    pod = deployment["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "system-cluster-critical"
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert {"key": "edge.example.com/dedicated", "operator": "Exists", "effect": "NoSchedule"} in pod["tolerations"]
    spread = {c["topologyKey"]: c for c in pod["topologySpreadConstraints"]}
    assert set(spread) == {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}
    assert spread["kubernetes.io/hostname"]["matchLabelKeys"] == ["pod-template-hash"]
    # Envoy Gateway turns the drain settings into the shutdown manager's preStop and the grace period.
    containers = {c["name"]: c for c in pod["containers"]}
    pre_stop = " ".join(containers["shutdown-manager"]["lifecycle"]["preStop"]["exec"]["command"])
    assert "--drain-timeout=20s" in pre_stop, pre_stop
    assert "--min-drain-duration=4s" in pre_stop, pre_stop
    assert pod["terminationGracePeriodSeconds"] >= 20
    # On the real node the scheduler places all three with that placement and spread, and they turn Ready.
    name = deployment["metadata"]["name"]
    kube.wait(lambda: deployment_ready(kube.api, NS, name), 180, "the fleet's three proxy pods Ready")

    fixed = kube.config(**with_gateway({"data_plane": {"replicas": 2}}))
    kube.playbook("install", fixed).ok()
    kube.wait(
        lambda: not kube.items(f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers", labelSelector=FLEET),
        90,
        "the controller removes the HPA",
    )
    kube.wait(
        lambda: (
            kube.items(f"/apis/apps/v1/namespaces/{NS}/deployments", labelSelector=FLEET)[0]["spec"]["replicas"] == 2
        ),
        90,
        "the fleet back at its fixed size",
    )
