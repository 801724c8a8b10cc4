"""The bootstrap Gateway on the shared class: it brings the shared VIP up before any tenant route. Its checks
hold the listeners to what Envoy Gateway accepts and programs (ports, protocols, TLS, route namespaces)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import advisories, labels, proxy_ports
from ..model import Checked, Config, Problem
from ..plan import Phase, Step


def _listener(spec: dict[str, Any]) -> dict[str, Any]:
    listener: dict[str, Any] = {"name": spec["name"], "protocol": spec["protocol"], "port": spec["port"]}
    if "hostname" in spec:
        listener["hostname"] = spec["hostname"]
    if spec["protocol"] in ("HTTPS", "TLS"):
        tls: dict[str, Any] = {"mode": spec.get("tls_mode", "Terminate")}
        if spec.get("certificate_refs"):
            tls["certificateRefs"] = [
                {"group": "", "kind": "Secret", **{k: ref[k] for k in ("name", "namespace") if k in ref}}
                for ref in spec["certificate_refs"]
            ]
        listener["tls"] = tls
    namespaces: dict[str, Any] = {"from": spec.get("allowed_routes_namespaces", "Same")}
    if namespaces["from"] == "Selector":
        namespaces["selector"] = {"matchLabels": dict(sorted(spec["allowed_routes_selector"]["match_labels"].items()))}
    listener["allowedRoutes"] = {"namespaces": namespaces}
    return listener


def proxy_protocol_scope(config: Config) -> str | None:
    """Where the annotations that make the load balancer send PROXY headers go, so that exactly the
    listeners the ClientTrafficPolicy parses them on receive them (validation ensures that policy targets
    the default Gateway whenever there are such annotations):

    - "class": the shared EnvoyProxy's Service, the one Service of a merged class (an admission policy
      keeps every Gateway of the class on the default Gateway's ports, see traffic_policies.port_guard);
    - "gateway": the default Gateway's spec.infrastructure.annotations, which Envoy Gateway copies onto that
      Gateway's own Service only (an unmerged class gives every Gateway its own Service);
    - None: nothing to render.
    """
    proxy_protocol = config.get("client_traffic.proxy_protocol")
    if not (
        config.get("client_traffic.enabled") and proxy_protocol["enabled"] and proxy_protocol["service_annotations"]
    ):
        return None
    return "class" if config.get("gatewayclass.shared.merge_gateways") else "gateway"


def gateway(config: Config) -> dict[str, Any]:
    annotations = {}
    if config.get("tls.cluster_issuer_name"):
        annotations["cert-manager.io/cluster-issuer"] = config.get("tls.cluster_issuer_name")
    spec: dict[str, Any] = {
        "gatewayClassName": config.get("gatewayclass.shared.name"),
        "listeners": [_listener(spec) for spec in config.get("default_gateway.listeners")],
    }
    if proxy_protocol_scope(config) == "gateway":
        service_annotations = config.get("client_traffic.proxy_protocol.service_annotations")
        spec["infrastructure"] = {"annotations": dict(sorted(service_annotations.items()))}
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": labels.metadata(
            config, config.get("default_gateway.name"), "gateway", config.get("namespace"), annotations
        ),
        "spec": spec,
    }


def target_gateway(config: Config, section: str) -> str:
    """The Gateway a policy section targets: its own target_gateway_name, else the default Gateway."""
    own = config.values.get(section, {}).get("target_gateway_name")
    return str(own or config.get("default_gateway.name"))


def build(config: Config) -> list[Step]:
    if not config.get("default_gateway.enabled"):
        return []
    return [Step(Phase.GATEWAY, gateway(config), wait_condition="Programmed")]


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """The default Gateway's listeners, as Envoy Gateway would accept and program them, and the cert-manager
    issuer that needs one of them."""
    problems: list[Problem] = []
    warnings: list[str] = []
    default = values["default_gateway"]
    if default["enabled"]:
        problems += _listener_problems(default["listeners"])
        tag = str(values["image"]["controller"]["tag"])
        if advisories.fixes(advisories.EMPTY_MATCH_ON_A_SHARED_PORT, tag) is not True:
            problems += _empty_match_problems(default["listeners"], tag)
    elif "listeners" in raw.get("default_gateway", {}):
        # The bootstrap Gateway is opt-in: listeners alone render nothing, and install would prune a
        # Gateway an earlier version (on by default) created.
        problems.append(
            Problem(
                "config.default_gateway.listeners",
                "no Gateway is rendered while config.default_gateway.enabled is false (the default); "
                "set default_gateway.enabled: true, or remove listeners",
            )
        )
    issuer = values["tls"]["cluster_issuer_name"]
    if issuer and not (
        default["enabled"]
        and any(_listener_tls_mode(lst) == "Terminate" and lst.get("hostname") for lst in default["listeners"])
    ):
        warnings.append(
            "config.tls.cluster_issuer_name: cert-manager only issues certificates for Terminate "
            "listeners with a hostname on the default Gateway; none is configured"
        )
    return problems, warnings


def _listener_tls_mode(listener: Mapping[str, Any]) -> str | None:
    """The TLS mode the Gateway will really have (Gateway API defaults HTTPS to Terminate)."""
    protocol = listener["protocol"]
    if protocol == "HTTPS":
        return str(listener.get("tls_mode", "Terminate"))
    if protocol == "TLS":
        mode = listener.get("tls_mode")
        return str(mode) if mode else None
    return None


def _container_port_problems(
    at: str, index: int, listener: Mapping[str, Any], seen: dict[tuple[str, int], tuple[int, int]]
) -> list[Problem]:
    """A listener binds its container port inside every proxy pod: not one of the proxy's own ports, and
    not one another listener reaches through Envoy Gateway's shift of low ports (80 and 10080 collide)."""
    port = listener["port"]
    inside = proxy_ports.container_port(port)
    transport = "UDP" if listener["protocol"] == "UDP" else "TCP"
    if transport == "TCP" and inside in proxy_ports.RESERVED:
        taken = ", ".join(f"{p} {what}" for p, what in proxy_ports.RESERVED.items())
        return [
            Problem(
                f"{at}.port",
                f"port {port} is taken inside the proxy pod by {proxy_ports.RESERVED[inside]} ({taken}); "
                "use another port",
            )
        ]
    first = seen.setdefault((transport, inside), (index, port))
    if first[1] != port:
        return [
            Problem(
                f"{at}.port",
                f"port {port} listens on container port {inside}, like listeners[{first[0]}].port {first[1]} "
                f"(Envoy Gateway adds {proxy_ports.PORT_SHIFT} to ports below {proxy_ports.SHIFTED_BELOW}); "
                "change one of them",
            )
        ]
    return []


# Protocols that may share a port on one Gateway (Envoy Gateway's validateConflictedProtocolsListeners):
# HTTPS and TLS share by SNI; UDP is another transport and shares with anything.
_PORT_GROUP = {"HTTP": "HTTP", "HTTPS": "HTTPS/TLS", "TLS": "HTTPS/TLS", "TCP": "TCP"}


def _shared_port_problems(
    at: str,
    index: int,
    listener: Mapping[str, Any],
    groups: dict[tuple[int, str], tuple[int, str]],
    tls_hostnames: dict[tuple[int, str], tuple[int, str]],
) -> list[Problem]:
    """Listeners on one port that Envoy Gateway would reject together (both get Conflicted=True): protocols
    that cannot share a port (ProtocolConflict), or an HTTPS and a TLS listener with the same hostname
    (HostnameConflict; the same protocol twice is the (port, protocol, hostname) rule)."""
    protocol, port = listener["protocol"], listener["port"]
    group = _PORT_GROUP.get(protocol)
    if group is None:
        return []
    problems = []
    clash = next((first for (p, g), first in sorted(groups.items()) if p == port and g != group), None)
    if clash is not None:
        problems.append(
            Problem(
                at,
                f"port {port}/{protocol} cannot share the port with listeners[{clash[0]}] ({clash[1]}): Envoy "
                "Gateway rejects both (ProtocolConflict; only HTTPS and TLS share a port, UDP shares with any); "
                "change the port",
            )
        )
    groups.setdefault((port, group), (index, protocol))
    if group == "HTTPS/TLS":
        hostname = str(listener.get("hostname", ""))
        first = tls_hostnames.setdefault((port, hostname), (index, protocol))
        if first[1] != protocol:
            problems.append(
                Problem(
                    at,
                    f"port {port}/{protocol} with hostname '{hostname}' clashes with listeners[{first[0]}] "
                    f"({first[1]}, same port and hostname): Envoy Gateway rejects both (HostnameConflict); "
                    "change the port or the hostname",
                )
            )
    return problems


def _empty_match_problems(listeners: list[Mapping[str, Any]], tag: str) -> list[Problem]:
    """An HTTPS listener without hostname on a port a TLS listener shares: while the TLS listener has no
    TLSRoute, a controller without advisories.EMPTY_MATCH_ON_A_SHARED_PORT's fix gives both the same empty
    filter-chain match, and Envoy rejects the port's listener and every later change to it (the same rule
    the listener guard applies to tenants' Gateways: components/tenant_guards.py)."""
    tls: dict[int, int] = {}
    for index, listener in enumerate(listeners):
        # A TLS listener without hostname is already a HostnameConflict with it (_shared_port_problems).
        if listener["protocol"] == "TLS" and "hostname" in listener:
            tls.setdefault(listener["port"], index)
    return [
        Problem(
            f"config.default_gateway.listeners[{index}].hostname",
            f"an HTTPS listener without hostname shares port {listener['port']} with listeners"
            f"[{tls[listener['port']]}] (TLS): while that has no TLSRoute, Envoy Gateway {tag} gives both the "
            "same empty filter-chain match, and Envoy rejects the port's listener and every later change to it "
            "(envoyproxy/gateway#9341, fixed in v1.9.2); set this listener's hostname, or move one of the two "
            "to another port",
        )
        for index, listener in enumerate(listeners)
        if listener["protocol"] == "HTTPS" and "hostname" not in listener and listener["port"] in tls
    ]


def _listener_problems(listeners: list[Mapping[str, Any]]) -> list[Problem]:
    """Each listener's problems, in listener order: against the listeners before it (names, ports, the ports
    inside the proxy, shared ports), then its own TLS settings and allowed routes."""
    problems: list[Problem] = []
    seen_names: dict[str, int] = {}
    seen_triples: dict[tuple[int, str, str], int] = {}
    seen_inside: dict[tuple[str, int], tuple[int, int]] = {}
    seen_groups: dict[tuple[int, str], tuple[int, str]] = {}
    seen_tls_hostnames: dict[tuple[int, str], tuple[int, str]] = {}
    for index, listener in enumerate(listeners):
        at = f"config.default_gateway.listeners[{index}]"
        problems += _repeat_problems(at, index, listener, seen_names, seen_triples)
        problems += _container_port_problems(at, index, listener, seen_inside)
        problems += _shared_port_problems(at, index, listener, seen_groups, seen_tls_hostnames)
        problems += _tls_setting_problems(at, listener)
        problems += _allowed_routes_problems(at, listener)
    return problems


def _repeat_problems(
    at: str,
    index: int,
    listener: Mapping[str, Any],
    seen_names: dict[str, int],
    seen_triples: dict[tuple[int, str, str], int],
) -> list[Problem]:
    """A listener's name, or its port, protocol and hostname together, already used by an earlier listener."""
    problems: list[Problem] = []
    protocol = listener["protocol"]
    name = listener["name"]
    if name in seen_names:
        problems.append(
            Problem(
                f"{at}.name",
                f"listener name '{name}' is already used by listeners[{seen_names[name]}]; "
                "give every listener a unique name",
            )
        )
    seen_names.setdefault(name, index)
    triple = (listener["port"], protocol, listener.get("hostname", ""))
    if triple in seen_triples:
        problems.append(
            Problem(
                at,
                f"port {triple[0]}/{protocol} with hostname '{triple[2]}' repeats "
                f"listeners[{seen_triples[triple]}]; change the port or the hostname",
            )
        )
    seen_triples.setdefault(triple, index)
    return problems


def _tls_setting_problems(at: str, listener: Mapping[str, Any]) -> list[Problem]:
    """TLS settings that do not fit the listener's protocol or mode (a hostname on TCP/UDP among them)."""
    problems: list[Problem] = []
    protocol = listener["protocol"]
    if protocol in ("HTTP", "TCP", "UDP"):
        for key in ("tls_mode", "certificate_refs"):
            if key in listener:
                problems.append(
                    Problem(
                        f"{at}.{key}",
                        f"{protocol} listeners carry no TLS settings; remove {key} or use protocol HTTPS/TLS",
                    )
                )
    if protocol in ("TCP", "UDP") and "hostname" in listener:
        problems.append(Problem(f"{at}.hostname", f"{protocol} listeners cannot match a hostname; remove it"))
    if protocol == "HTTPS" and listener.get("tls_mode") == "Passthrough":
        problems.append(
            Problem(
                f"{at}.tls_mode",
                "HTTPS listeners terminate TLS; use protocol TLS with tls_mode Passthrough to pass TLS through",
            )
        )
    if protocol == "TLS" and "tls_mode" not in listener:
        problems.append(
            Problem(f"{at}.tls_mode", "TLS listeners must state their mode; set tls_mode to Passthrough or Terminate")
        )
    mode = _listener_tls_mode(listener)
    if mode == "Terminate" and not listener.get("certificate_refs"):
        problems.append(
            Problem(
                f"{at}.certificate_refs",
                "a Terminate listener needs a certificate; add "
                "certificate_refs: [{name: <tls secret>}] or use tls_mode Passthrough",
            )
        )
    if mode == "Passthrough" and listener.get("certificate_refs"):
        problems.append(
            Problem(
                f"{at}.certificate_refs",
                "Passthrough listeners ignore certificates; remove certificate_refs or use tls_mode Terminate",
            )
        )
    return problems


def _allowed_routes_problems(at: str, listener: Mapping[str, Any]) -> list[Problem]:
    """allowed_routes_selector exactly when allowed_routes_namespaces is Selector, with match_labels."""
    problems: list[Problem] = []
    namespaces = listener.get("allowed_routes_namespaces", "Same")
    if namespaces == "Selector" and not listener.get("allowed_routes_selector", {}).get("match_labels"):
        problems.append(
            Problem(
                f"{at}.allowed_routes_selector",
                "allowed_routes_namespaces Selector needs allowed_routes_selector.match_labels",
            )
        )
    if namespaces != "Selector" and "allowed_routes_selector" in listener:
        problems.append(
            Problem(
                f"{at}.allowed_routes_selector",
                "only used with allowed_routes_namespaces "
                "Selector; remove it or set allowed_routes_namespaces: Selector",
            )
        )
    return problems
