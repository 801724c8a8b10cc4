"""GatewayClass pair, each pointing at its EnvoyProxy with a fully qualified parametersRef."""

from __future__ import annotations

from typing import Any

from .. import labels
from ..config import Config
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
