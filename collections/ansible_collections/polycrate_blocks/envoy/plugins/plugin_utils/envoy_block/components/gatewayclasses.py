"""GatewayClass pair, each pointing at its EnvoyProxy with a fully qualified parametersRef."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import labels
from ..model import Checked, Config, Problem
from ..plan import Phase, Step

CONTROLLER_NAME = "gateway.envoyproxy.io/gatewayclass-controller"

# GatewayClass descriptions are limited to 64 characters by the CRD.
_DESCRIPTIONS = {
    True: "Envoy Gateway: all Gateways share one proxy fleet and one VIP",
    False: "Envoy Gateway: every Gateway gets its own proxies and Service",
}


def gateway_class(config: Config, shared: bool) -> dict[str, Any]:
    name = config.get("gatewayclass.shared.name" if shared else "gatewayclass.dedicated.name")
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": labels.metadata(config, name, "gatewayclass"),
        "spec": {
            "controllerName": CONTROLLER_NAME,
            "description": _DESCRIPTIONS[shared],
            # namespace must be explicit: Envoy Gateway looks in `default` when it is missing.
            "parametersRef": {
                "group": "gateway.envoyproxy.io",
                "kind": "EnvoyProxy",
                "name": name,
                "namespace": config.get("namespace"),
            },
        },
    }


def build(config: Config) -> list[Step]:
    return [
        Step(Phase.GATEWAYCLASS, gateway_class(config, shared=True), wait_condition="Accepted"),
        Step(Phase.GATEWAYCLASS, gateway_class(config, shared=False), wait_condition="Accepted"),
    ]


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """Two distinct classes, and a shared class Envoy Gateway can run with the controller's deploy type."""
    problems: list[Problem] = []
    classes = values["gatewayclass"]
    if classes["shared"]["name"] == classes["dedicated"]["name"]:
        problems.append(
            Problem("config.gatewayclass.dedicated.name", "the shared and the dedicated class need different names")
        )
    if values["deploy_type"] == "GatewayNamespace" and classes["shared"]["merge_gateways"]:
        problems.append(
            Problem(
                "config.deploy_type",
                "GatewayNamespace cannot be combined with mergeGateways on the "
                "shared class (Envoy Gateway does not support it); set "
                "gatewayclass.shared.merge_gateways: false or deploy_type: ControllerNamespace",
            )
        )
    return problems, []
