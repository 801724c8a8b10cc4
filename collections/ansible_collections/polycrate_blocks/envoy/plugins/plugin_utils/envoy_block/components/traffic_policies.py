"""ClientTrafficPolicy (PROXY protocol, client timeouts, the WAF's body buffer) and BackendTrafficPolicy
(backend timeouts)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import body_buffer, labels
from ..model import Checked, Config, Problem
from ..plan import Phase, Step
from . import admission
from .gateway import proxy_protocol_scope, target_gateway

# config timeout key -> (timeout group, CRD field), per policy section.
CLIENT_TIMEOUTS = {
    "request_received": ("http", "requestReceivedTimeout"),
    "idle": ("http", "idleTimeout"),
    "stream_idle": ("http", "streamIdleTimeout"),
}
BACKEND_TIMEOUTS = {
    "connect": ("tcp", "connectTimeout"),
    "request": ("http", "requestTimeout"),
    "idle": ("http", "connectionIdleTimeout"),
}


def _policy(config: Config, kind: str, section: str, target: str, spec: dict[str, Any]) -> dict[str, Any]:
    """A policy on the Gateway `target`, named after it and the config section it comes from."""
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": kind,
        "metadata": labels.metadata(config, f"{target}-{section.replace('_', '-')}", "policy", config.get("namespace")),
        "spec": {"targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": target}], **spec},
    }


def _timeouts(config: Config, section: str, timeouts: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """`timeout` with the timeouts the user set (and only those), or nothing."""
    timeout: dict[str, dict[str, str]] = {}
    for key, (group, field) in timeouts.items():
        if key in config.get(f"{section}.timeouts"):
            timeout.setdefault(group, {})[field] = config.get(f"{section}.timeouts")[key]
    return {"timeout": timeout} if timeout else {}


def client_traffic_policies(config: Config) -> list[dict[str, Any]]:
    """At most one ClientTrafficPolicy per Gateway, named `<gateway>-client-traffic`: Envoy Gateway applies
    only the oldest Gateway-wide policy of a Gateway and marks the others Conflicted.

    - client_traffic: PROXY protocol and client timeouts on its target Gateway;
    - the WAF's body buffer (body_buffer.needed) on the WAF's Gateway: merged into that policy when it
      targets the same Gateway, else a policy of its own with nothing else in it.
    """
    by_gateway: dict[str, dict[str, Any]] = {}
    if config.get("client_traffic.enabled"):
        spec: dict[str, Any] = {}
        proxy_protocol = config.get("client_traffic.proxy_protocol")
        if proxy_protocol["enabled"]:
            # proxyProtocol replaces the deprecated enableProxyProtocol; {} means the header is required.
            spec["proxyProtocol"] = {"optional": True} if proxy_protocol["optional"] else {}
        spec.update(_timeouts(config, "client_traffic", CLIENT_TIMEOUTS))
        by_gateway[target_gateway(config, "client_traffic")] = spec
    size = body_buffer.needed(config.values)
    if size is not None:
        by_gateway.setdefault(target_gateway(config, "waf"), {}).update(body_buffer.client_traffic_settings(size))
    return [_policy(config, "ClientTrafficPolicy", "client_traffic", gw, spec) for gw, spec in by_gateway.items()]


def backend_traffic_policy(config: Config) -> dict[str, Any]:
    target = target_gateway(config, "backend_traffic")
    return _policy(
        config,
        "BackendTrafficPolicy",
        "backend_traffic",
        target,
        _timeouts(config, "backend_traffic", BACKEND_TIMEOUTS),
    )


def proxy_ports(config: Config) -> list[int]:
    """The ports whose Envoy listeners parse the PROXY header: the default Gateway's TCP-based listeners
    (a ClientTrafficPolicy never applies to UDP listeners)."""
    return sorted({lst["port"] for lst in config.get("default_gateway.listeners") if lst["protocol"] != "UDP"})


def port_guard(config: Config) -> tuple[dict[str, Any], dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding: every Gateway of the merged shared class stays on the ports
    that parse PROXY headers, since the class's one Service sends them on every port it has.

    Merged Gateways' listeners on the same port share one Envoy listener and so its PROXY listener filter
    (internal/xds/translator/proxy_protocol.go); a listener on any other port - or from a ListenerSet the
    Gateway admits - would receive headers nothing parses.

    The block's own default Gateway defines those ports and is exempt: a guard left from the previous
    install must never refuse it (say, a port added while the PROXY annotations go, before prune removes
    the old guard).
    """
    shared = config.get("gatewayclass.shared.name")
    dedicated = config.get("gatewayclass.dedicated.name")
    ports = proxy_ports(config)
    shown = ", ".join(str(p) for p in ports)
    owner = f"{config.get('namespace')}/{config.get('default_gateway.name')}"
    rules = (
        admission.Rule(
            "object.spec.listeners.all(l, l.protocol != 'UDP' && l.port in variables.proxyPorts)",
            f"Gateways of class {shared} share one load balancer that sends the PROXY protocol header on every "
            f"port, and only ports {shown} (the listeners of {owner}, whose ClientTrafficPolicy parses it) "
            f"expect it: use one of these ports with a TCP-based protocol, or the {dedicated} class.",
        ),
        admission.Rule(
            "!has(object.spec.allowedListeners) || !has(object.spec.allowedListeners.namespaces) || "
            "!has(object.spec.allowedListeners.namespaces.from) || "
            "object.spec.allowedListeners.namespaces.from == 'None'",
            f"Gateways of class {shared} cannot admit ListenerSets while the load balancer sends the PROXY "
            f"protocol header: their listeners could use ports that do not parse it. Remove "
            f"spec.allowedListeners, or use the {dedicated} class.",
        ),
    )
    return admission.objects(
        config,
        f"{config.block_name}-proxy-protocol-ports",
        admission.Resource("gateway.networking.k8s.io", "v1", "gateways"),
        rules,
        variables=(("proxyPorts", f"[{', '.join(str(p) for p in ports)}]"),),
        match_conditions=(
            ("sharedClass", f"object.spec.gatewayClassName == {admission.cel_string(shared)}"),
            (
                "notTheDefaultGateway",
                f"object.metadata.namespace != {admission.cel_string(config.get('namespace'))} || "
                f"object.metadata.name != {admission.cel_string(config.get('default_gateway.name'))}",
            ),
        ),
    )


def build(config: Config) -> list[Step]:
    steps = []
    if proxy_protocol_scope(config) == "class":
        # Before the Gateways: a port added to the default Gateway must pass the guard it is added to.
        steps += admission.steps(port_guard(config), Phase.GATEWAYCLASS)
    steps += [Step(Phase.POLICY, policy, wait_condition="Accepted") for policy in client_traffic_policies(config)]
    if config.get("backend_traffic.enabled"):
        steps.append(Step(Phase.POLICY, backend_traffic_policy(config), wait_condition="Accepted"))
    return steps


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """PROXY protocol is a setting of the ClientTrafficPolicy: it needs the policy, and `optional` needs it on."""
    problems: list[Problem] = []
    proxy_protocol = values["client_traffic"]["proxy_protocol"]
    if proxy_protocol["enabled"] and not values["client_traffic"]["enabled"]:
        problems.append(
            Problem(
                "config.client_traffic.enabled",
                "proxy_protocol is rendered in the ClientTrafficPolicy; set client_traffic.enabled: true",
            )
        )
    if proxy_protocol["optional"] and not proxy_protocol["enabled"]:
        problems.append(
            Problem(
                "config.client_traffic.proxy_protocol.optional", "only meaningful with proxy_protocol.enabled: true"
            )
        )
    return problems, []
