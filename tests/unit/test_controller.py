"""Invariant: what the block hands to helm - chart ref, pinned version, CRDs skipped (the block owns
them), images, deploy type and pod labels - and credentials only in the in-memory release."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import at, plan

DIGEST = "sha256:" + "0123456789abcdef" * 4
CASES: list[tuple[str, dict[str, Any], str, Any]] = [
    ("chart-ref", {}, "chart_ref", "oci://docker.io/envoyproxy/gateway-helm"),
    ("chart-version", {}, "chart_version", "v1.9.1"),
    ("skip-crds", {}, "skip_crds", True),
    ("crd-subchart-off", {}, "values.crds.enabled", False),
    ("release-namespace", {"namespace": "edge"}, "namespace", "edge"),
    (
        "controller-image",
        {"image": {"controller": {"registry": "r.example", "tag": "v1.9.1"}}},
        "values.global.images.envoyGateway.image",
        "r.example/envoyproxy/gateway:v1.9.1",
    ),
    ("proxy-image", {}, "values.global.images.envoyProxy.image", "docker.io/envoyproxy/envoy:distroless-v1.39.6"),
    (
        "controller-image-by-digest",
        {"image": {"controller": {"digest": DIGEST}}},
        "values.global.images.envoyGateway.image",
        f"docker.io/envoyproxy/gateway:v1.9.1@{DIGEST}",
    ),
    (
        "deploy-type",
        {"deploy_type": "GatewayNamespace", "gatewayclass": {"shared": {"merge_gateways": False}}},
        "values.config.envoyGateway.provider.kubernetes.deploy.type",
        "GatewayNamespace",
    ),
    ("pod-log-label", {}, "values.deployment.pod.labels.polycrate_log_source", "app"),
]


@pytest.mark.parametrize(("config", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_helm_release(config: dict[str, Any], path: str, expected: Any) -> None:
    assert at(plan(config).to_dict()["helm"], path) == expected


def test_credentials_only_with_include_secrets() -> None:
    p = plan({"chart": {"auth": {"username": "robot", "password": "s3cr3t-value"}}})
    assert p.to_dict(include_secrets=True)["helm"]["auth"] == {"username": "robot", "password": "s3cr3t-value"}
    assert "s3cr3t-value" not in repr(p.to_dict(include_secrets=False))
