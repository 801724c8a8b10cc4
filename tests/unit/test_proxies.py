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
        "docker.io/envoyproxy/envoy:distroless-v1.39.1@sha256:" + "f" * 64,
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
]


@pytest.mark.parametrize(("config", "name", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_envoy_proxy(config: dict[str, Any], name: str, path: str, expected: Any) -> None:
    assert at(find(config, "EnvoyProxy", name), path) == expected
