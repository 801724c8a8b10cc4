"""gateway-helm release: chart reference and values (the controller itself is Helm's to render)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import images, labels
from ..model import Checked, Config, Problem

RELEASE_NAME = "envoy-gateway"


def values(config: Config) -> dict[str, Any]:
    pod_labels = {
        "app.kubernetes.io/part-of": labels.PART_OF,
        labels.LOG_SOURCE_LABEL: labels.LOG_SOURCE,
    }
    return {
        # The block applies every CRD itself, server-side and before the release (Helm never upgrades
        # crds/); the chart's crds subchart would otherwise also render the Gateway API upgrade VAP.
        "crds": {"enabled": False},
        "global": {
            "images": {
                "envoyGateway": {"image": images.reference(config.get("image.controller"))},
                "envoyProxy": {"image": images.reference(config.get("image.proxy"))},
            },
        },
        "deployment": {"pod": {"labels": pod_labels}},
        "config": {
            "envoyGateway": {
                "provider": {
                    "type": "Kubernetes",
                    "kubernetes": {"deploy": {"type": config.get("deploy_type")}},
                },
            },
        },
    }


def release(config: Config) -> dict[str, Any]:
    """What install hands to kubernetes.core.helm. `auth` is stripped before anything is written."""
    auth = config.get("chart.auth")
    release_spec: dict[str, Any] = {
        "name": RELEASE_NAME,
        "namespace": config.get("namespace"),
        "chart_ref": config.get("chart.repo.url"),
        "chart_version": config.get("chart.version"),
        # helm registry login takes the host alone (oci://docker.io/envoyproxy/gateway-helm -> docker.io).
        "registry_host": str(config.get("chart.repo.url")).removeprefix("oci://").split("/", 1)[0],
        "skip_crds": True,
        "values": values(config),
    }
    if auth["username"]:
        release_spec["auth"] = {"username": auth["username"], "password": auth["password"]}
    return release_spec


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """Registry credentials for the chart come as a pair (their values are never echoed)."""
    auth = values["chart"]["auth"]
    if bool(auth["username"]) != bool(auth["password"]):
        return [Problem("config.chart.auth", "set both username and password, or neither")], []
    return [], []
