"""Config -> Plan. The only place that knows which components exist."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import GATEWAY_API_VERSION, labels
from .components import (
    controller,
    gateway,
    gatewayclasses,
    monitoring,
    namespace,
    network_policies,
    proxies,
    traffic_policies,
    waf,
)
from .config import Config, load
from .plan import Plan, Step

COMPONENTS = (namespace, network_policies, proxies, gatewayclasses, waf, gateway, traffic_policies, monitoring)


def build_plan(config: Config) -> Plan:
    steps: list[Step] = []
    for component in COMPONENTS:
        steps.extend(component.build(config))
    return Plan(
        steps=tuple(steps),
        helm=controller.release(config),
        crds={
            "gateway_api": {
                "install": config.get("gateway_api_crds.install"),
                "channel": config.get("gateway_api_crds.channel"),
                "version": GATEWAY_API_VERSION,
            },
            "envoy_gateway": {"version": config.get("chart.version")},
            "directory": config.get("crds.directory"),
            "chart_url": config.get("crds.chart_url"),
            "chart_values": {
                "crds": {
                    "gatewayAPI": {
                        "enabled": config.get("gateway_api_crds.install"),
                        "channel": config.get("gateway_api_crds.channel"),
                    },
                    "envoyGateway": {"enabled": True},
                }
            },
            "remove_on_uninstall": config.get("uninstall.remove_crds"),
        },
        namespace={"name": config.get("namespace"), "create": config.get("create_namespace")},
        controller={
            "install": config.get("controller.install"),
            "deployment": "envoy-gateway",
            "allow_downgrade": config.get("chart.allow_downgrade"),
        },
        wait={"enabled": config.get("wait.enabled"), "timeout": config.get("wait.timeout")},
        ownership_labels=labels.ownership_selector(config),
        warnings=config.warnings,
    )


def plan_from_block(block: Mapping[str, Any]) -> Plan:
    """Validate Polycrate's `block` variable and build its plan (raises ConfigError on bad input)."""
    return build_plan(load(block))
