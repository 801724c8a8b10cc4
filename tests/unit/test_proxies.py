"""Invariant: the EnvoyProxy pair carries the data plane the config asks for, and the shared VIP only
on the shared class (a dedicated Gateway must never claim the shared IP)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import MISSING, at, find

K = "spec.provider.kubernetes"
CASES: list[tuple[str, dict[str, Any], str, str, Any]] = [
    ("shared-merges", {}, "eg-shared", "spec.mergeGateways", True),
    ("dedicated-does-not-merge", {}, "eg-dedicated", "spec.mergeGateways", False),
    (
        "merge-off-by-config",
        {"gatewayclass": {"shared": {"merge_gateways": False}}},
        "eg-shared",
        "spec.mergeGateways",
        False,
    ),
    ("deployment-replicas", {"data_plane": {"replicas": 3}}, "eg-shared", f"{K}.envoyDeployment.replicas", 3),
    (
        "daemonset-has-no-replicas",
        {"data_plane": {"kind": "DaemonSet"}},
        "eg-shared",
        f"{K}.envoyDaemonSet.replicas",
        MISSING,
    ),
    ("daemonset-not-deployment", {"data_plane": {"kind": "DaemonSet"}}, "eg-shared", f"{K}.envoyDeployment", MISSING),
    (
        "proxy-image",
        {"image": {"proxy": {"registry": "reg.example.com", "tag": "v9"}}},
        "eg-dedicated",
        f"{K}.envoyDeployment.container.image",
        "reg.example.com/envoyproxy/envoy:v9",
    ),
    (
        "proxy-image-by-digest",
        {"image": {"proxy": {"digest": "sha256:" + "f" * 64}}},
        "eg-shared",
        f"{K}.envoyDeployment.container.image",
        "docker.io/envoyproxy/envoy:distroless-v1.39.6@sha256:" + "f" * 64,
    ),
    (
        "resources-merge-defaults",
        {"data_plane": {"resources": {"requests": {"cpu": "1"}}}},
        "eg-shared",
        f"{K}.envoyDeployment.container.resources",
        {"requests": {"cpu": "1", "memory": "256Mi"}, "limits": {"memory": "1Gi"}},
    ),
    ("block-proxy-label", {}, "eg-shared", f'{K}.envoyDeployment.pod.labels."envoy.polycrate.io/role"', "proxy"),
    (
        "log-source-label",
        {"data_plane": {"kind": "DaemonSet"}},
        "eg-dedicated",
        f"{K}.envoyDaemonSet.pod.labels.polycrate_log_source",
        "app",
    ),
    (
        "no-envoy-gateway-owned-labels",
        {},
        "eg-shared",
        f'{K}.envoyDeployment.pod.labels."app.kubernetes.io/name"',
        MISSING,
    ),
    ("service-type", {"service": {"type": "NodePort"}}, "eg-shared", f"{K}.envoyService.type", "NodePort"),
    (
        "etp",
        {"service": {"external_traffic_policy": "Local"}},
        "eg-dedicated",
        f"{K}.envoyService.externalTrafficPolicy",
        "Local",
    ),
    (
        "vip-on-shared-cloud",
        {"service": {"loadbalancer_ip": "192.0.2.1", "loadbalancer_provider": "cloud"}},
        "eg-shared",
        f"{K}.envoyService.loadBalancerIP",
        "192.0.2.1",
    ),
    (
        "vip-cilium-annotation",
        {"service": {"loadbalancer_ip": "192.0.2.1", "loadbalancer_provider": "cilium"}},
        "eg-shared",
        f'{K}.envoyService.annotations."lbipam.cilium.io/ips"',
        "192.0.2.1",
    ),
    (
        "vip-metallb-annotation",
        {"service": {"loadbalancer_ip": "192.0.2.1", "loadbalancer_provider": "metallb"}},
        "eg-shared",
        f'{K}.envoyService.annotations."metallb.io/loadBalancerIPs"',
        "192.0.2.1",
    ),
    (
        "no-vip-on-dedicated",
        {"service": {"loadbalancer_ip": "192.0.2.1", "loadbalancer_provider": "cloud"}},
        "eg-dedicated",
        f"{K}.envoyService.loadBalancerIP",
        MISSING,
    ),
    (
        "no-vip-annotation-on-dedicated",
        {"service": {"loadbalancer_ip": "192.0.2.1", "loadbalancer_provider": "metallb"}},
        "eg-dedicated",
        f"{K}.envoyService.annotations",
        MISSING,
    ),
    (
        "user-annotations-both",
        {"service": {"annotations": {"a.example/x": "1"}}},
        "eg-dedicated",
        f'{K}.envoyService.annotations."a.example/x"',
        "1",
    ),
    ("json-access-log", {}, "eg-shared", "spec.telemetry.accessLog.settings[0].format.type", "JSON"),
    ("access-log-stdout", {}, "eg-shared", "spec.telemetry.accessLog.settings[0].sinks[0].file.path", "/dev/stdout"),
    ("access-log-off", {"logging": {"access_log": False}}, "eg-shared", "spec.telemetry.accessLog.disable", True),
    ("log-level", {"logging": {"level": "debug"}}, "eg-dedicated", "spec.logging.level.default", "debug"),
    ("in-block-namespace", {"namespace": "edge"}, "eg-shared", "metadata.namespace", "edge"),
    # Availability (issue 27): a budget whenever a fleet has 2+ proxies, surge-only rollouts, drain settings.
    ("pdb-by-default", {}, "eg-shared", f"{K}.envoyPDB", {"maxUnavailable": 1}),
    ("pdb-on-dedicated", {}, "eg-dedicated", f"{K}.envoyPDB.maxUnavailable", 1),
    (
        "pdb-max-unavailable",
        {"data_plane": {"disruption_budget": {"max_unavailable": 2}}},
        "eg-shared",
        f"{K}.envoyPDB.maxUnavailable",
        2,
    ),
    ("no-pdb-for-one-replica", {"data_plane": {"replicas": 1}}, "eg-shared", f"{K}.envoyPDB", MISSING),
    ("no-pdb-for-daemonset", {"data_plane": {"kind": "DaemonSet"}}, "eg-shared", f"{K}.envoyPDB", MISSING),
    ("no-hpa-by-default", {}, "eg-shared", f"{K}.envoyHpa", MISSING),
    (
        "rollout-never-below-size",
        {},
        "eg-shared",
        f"{K}.envoyDeployment.strategy",
        {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}},
    ),
    (
        "daemonset-rollout-surges",
        {"data_plane": {"kind": "DaemonSet"}},
        "eg-shared",
        f"{K}.envoyDaemonSet.strategy.rollingUpdate",
        {"maxSurge": "100%", "maxUnavailable": 0},
    ),
    ("drain-defaults", {}, "eg-dedicated", "spec.shutdown", {"drainTimeout": "60s", "minDrainDuration": "30s"}),
    (
        "drain-configured",
        {"data_plane": {"shutdown": {"drain_timeout": "5m", "min_drain_duration": "45s"}}},
        "eg-shared",
        "spec.shutdown",
        {"drainTimeout": "5m", "minDrainDuration": "45s"},
    ),
    (
        "spread-nodes",
        {},
        "eg-shared",
        f"{K}.envoyDeployment.pod.topologySpreadConstraints[0].topologyKey",
        "kubernetes.io/hostname",
    ),
    (
        "spread-nodes-soft",
        {},
        "eg-shared",
        f"{K}.envoyDeployment.pod.topologySpreadConstraints[0].whenUnsatisfiable",
        "ScheduleAnyway",
    ),
    (
        "spread-nodes-hard",
        {"data_plane": {"topology_spread": {"when_unsatisfiable": "DoNotSchedule"}}},
        "eg-shared",
        f"{K}.envoyDeployment.pod.topologySpreadConstraints[0].whenUnsatisfiable",
        "DoNotSchedule",
    ),
    (
        "spread-zones-always-soft",
        {"data_plane": {"topology_spread": {"when_unsatisfiable": "DoNotSchedule"}}},
        "eg-shared",
        f"{K}.envoyDeployment.pod.topologySpreadConstraints[1]",
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {
                "matchLabels": {
                    "app.kubernetes.io/instance": "envoy",
                    "app.kubernetes.io/part-of": "envoy-gateway",
                    "envoy.polycrate.io/gatewayclass": "eg-shared",
                    "envoy.polycrate.io/role": "proxy",
                    "polycrate_log_source": "app",
                }
            },
            "matchLabelKeys": ["pod-template-hash"],
            "nodeTaintsPolicy": "Honor",
        },
    ),
    (
        "spread-off",
        {"data_plane": {"topology_spread": {"enabled": False}}},
        "eg-shared",
        f"{K}.envoyDeployment.pod.topologySpreadConstraints",
        MISSING,
    ),
    (
        "no-spread-for-daemonset",
        {"data_plane": {"kind": "DaemonSet"}},
        "eg-shared",
        f"{K}.envoyDaemonSet.pod.topologySpreadConstraints",
        MISSING,
    ),
    (
        "priority-class",
        {"data_plane": {"priority_class_name": "edge-critical"}},
        "eg-dedicated",
        f"{K}.envoyDeployment.pod.priorityClassName",
        "edge-critical",
    ),
    ("no-priority-class-by-default", {}, "eg-shared", f"{K}.envoyDeployment.pod.priorityClassName", MISSING),
    (
        "node-selector",
        {"data_plane": {"node_selector": {"node-role.example.com/edge": "true"}}},
        "eg-shared",
        f"{K}.envoyDeployment.pod.nodeSelector",
        {"node-role.example.com/edge": "true"},
    ),
    (
        "tolerations",
        {
            "data_plane": {
                "tolerations": [{"key": "edge", "operator": "Exists", "effect": "NoExecute", "toleration_seconds": 30}]
            }
        },
        "eg-shared",
        f"{K}.envoyDeployment.pod.tolerations",
        [{"key": "edge", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}],
    ),
]

AUTOSCALED = {
    "data_plane": {"autoscaling": {"enabled": True, "min_replicas": 3, "max_replicas": 9, "cpu_utilization": 60}}
}
CASES += [
    (
        "hpa",
        AUTOSCALED,
        "eg-shared",
        f"{K}.envoyHpa",
        {
            "minReplicas": 3,
            "maxReplicas": 9,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}},
                }
            ],
        },
    ),
    ("hpa-drops-replicas", AUTOSCALED, "eg-dedicated", f"{K}.envoyDeployment.replicas", MISSING),
    ("hpa-keeps-pdb", AUTOSCALED, "eg-dedicated", f"{K}.envoyPDB.maxUnavailable", 1),
    (
        "hpa-min-one-no-pdb",
        {"data_plane": {"autoscaling": {"enabled": True, "min_replicas": 1}}},
        "eg-shared",
        f"{K}.envoyPDB",
        MISSING,
    ),
]


@pytest.mark.parametrize(("config", "name", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_envoy_proxy(config: dict[str, Any], name: str, path: str, expected: Any) -> None:
    assert at(find(config, "EnvoyProxy", name), path) == expected
