"""Rules between the default Gateway and what attaches to it or reaches it from other sections: the traffic
policies and the WAF's policy that target it, the PROXY headers the load balancer sends to its listeners,
and the proxy ingress ports the network policies open for them.

Every other rule belongs to one component and lives beside the objects it builds (`check` in each module
of components/); only rules that need two components' sections at once come here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import loadbalancer
from .model import Checked, Problem


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """What targets or reaches the default Gateway finds one that the block renders, on the ports it opens."""
    problems: list[Problem] = []
    gateway = values["default_gateway"]
    for policy in ("client_traffic", "backend_traffic"):
        section = values[policy]
        if section["enabled"] and not gateway["enabled"] and not section["target_gateway_name"]:
            problems.append(
                Problem(
                    f"config.{policy}.target_gateway_name",
                    "the policy needs a Gateway to target; set "
                    f"config.{policy}.target_gateway_name to your Gateway's name, or "
                    "config.default_gateway.enabled: true to target the bootstrap Gateway",
                )
            )
    problems += _proxy_protocol_scope_problems(values)
    if values["waf"]["default_policy"]["enabled"] and not gateway["enabled"]:
        problems.append(
            Problem(
                "config.waf.default_policy.enabled",
                "attaches to the default Gateway; set config.default_gateway.enabled: true, or attach the WAF "
                "to your own Gateways with your own EnvoyExtensionPolicy",
            )
        )
    problems += _proxy_ingress_port_problems(values)
    return problems, []


def _proxy_ingress_port_problems(values: Mapping[str, Any]) -> list[Problem]:
    """Narrowed proxy ingress (network_policy.proxy_ingress_ports) must open every default listener's port."""
    problems: list[Problem] = []
    narrowed = set(values["network_policy"]["proxy_ingress_ports"])
    if narrowed and values["default_gateway"]["enabled"]:
        for index, listener in enumerate(values["default_gateway"]["listeners"]):
            if listener["port"] not in narrowed:
                problems.append(
                    Problem(
                        f"config.default_gateway.listeners[{index}].port",
                        f"port "
                        f"{listener['port']} is not in network_policy.proxy_ingress_ports; add it "
                        "or leave proxy_ingress_ports empty (all TCP)",
                    )
                )
    return problems


def _proxy_protocol_scope_problems(values: Mapping[str, Any]) -> list[Problem]:
    """What tells the load balancer to send PROXY headers must reach exactly what the ClientTrafficPolicy
    parses them on: the default Gateway's TCP-based listeners (the only Gateway the block renders)."""
    problems: list[Problem] = []
    for key in sorted(values["service"]["annotations"]):
        if loadbalancer.is_proxy_protocol_annotation(key):
            problems.append(
                Problem(
                    f"config.service.annotations.{key}",
                    "service.annotations go on every proxy Service of both classes, but only the Gateway the "
                    "ClientTrafficPolicy targets parses PROXY headers; move it to "
                    "client_traffic.proxy_protocol.service_annotations, which the block puts only there",
                )
            )
    client = values["client_traffic"]
    proxy_protocol = client["proxy_protocol"]
    if not proxy_protocol["service_annotations"]:
        return problems
    at = "config.client_traffic.proxy_protocol.service_annotations"
    gateway = values["default_gateway"]
    if not (client["enabled"] and proxy_protocol["enabled"]):
        problems.append(
            Problem(
                at,
                "the load balancer would send PROXY headers that nothing parses; set "
                "client_traffic.enabled and client_traffic.proxy_protocol.enabled: true, or remove them",
            )
        )
    elif not gateway["enabled"] or client["target_gateway_name"] not in ("", gateway["name"]):
        problems.append(
            Problem(
                at,
                f"the ClientTrafficPolicy targets Gateway '{client['target_gateway_name']}', which the block does "
                "not render, so it cannot put these on that Gateway's Service alone; set them in that Gateway's "
                "spec.infrastructure.annotations (on a class that does not merge Gateways, e.g. the dedicated "
                "class), or target the default Gateway (default_gateway.enabled: true, no target_gateway_name)",
            )
        )
    else:
        for index, listener in enumerate(gateway["listeners"]):
            if listener["protocol"] == "UDP":
                problems.append(
                    Problem(
                        f"config.default_gateway.listeners[{index}].protocol",
                        "the load balancer would send PROXY headers to this UDP port too, but a "
                        "ClientTrafficPolicy parses them on TCP listeners only (HTTP, HTTPS, TLS, TCP); remove "
                        "the listener or client_traffic.proxy_protocol.service_annotations",
                    )
                )
    return problems
