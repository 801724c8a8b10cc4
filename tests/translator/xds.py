"""Read the Envoy config dump egctl returns per xDS IR key: listeners, their filters, routes, clusters and
endpoints, in the protojson form (camelCase fields, defaults omitted, durations as "<seconds>s")."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

HCM = "envoy.filters.network.http_connection_manager"
TCP_PROXY = "envoy.filters.network.tcp_proxy"
UDP_PROXY = "envoy.filters.udp_listener.udp_proxy"
PROXY_PROTOCOL = "envoy.filters.listener.proxy_protocol"
EXT_PROC = "envoy.filters.http.ext_proc"
HTTP_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions"
# Envoy Gateway's own listeners (readiness, stats) are not Gateway listeners.
OWN_LISTENER = re.compile(r"^envoy-gateway-proxy-")
_UNITS = {"h": Fraction(3600), "m": Fraction(60), "s": Fraction(1), "ms": Fraction(1, 1000)}


def seconds(duration: str) -> Fraction:
    """A Gateway API / Envoy Gateway duration ("1h30m", "250ms") or a protojson one ("0.250s") in seconds."""
    if re.fullmatch(r"\d+(\.\d+)?s", duration):
        return Fraction(duration[:-1])
    parts = re.findall(r"(\d+)(ms|h|m|s)", duration)
    if not parts or "".join(n + u for n, u in parts) != duration:
        raise ValueError(f"not a duration: {duration!r}")
    return sum((Fraction(int(n)) * _UNITS[u] for n, u in parts), Fraction(0))


@dataclass(frozen=True)
class Dump:
    """One xDS IR key's config dump."""

    key: str
    raw: Mapping[str, Any]

    def _section(self, suffix: str) -> Mapping[str, Any]:
        found = [c for c in self.raw["configs"] if str(c["@type"]).endswith(suffix)]
        return found[0] if found else {}

    def listeners(self) -> list[dict[str, Any]]:
        """The Gateway listeners (Envoy Gateway's readiness/stats listeners left out)."""
        listeners = [
            d["activeState"]["listener"] for d in self._section("ListenersConfigDump").get("dynamicListeners", [])
        ]
        return [x for x in listeners if not OWN_LISTENER.match(str(x["name"]))]

    def route_configs(self) -> list[dict[str, Any]]:
        return [d["routeConfig"] for d in self._section("RoutesConfigDump").get("dynamicRouteConfigs", [])]

    def clusters(self) -> dict[str, dict[str, Any]]:
        dynamic = self._section("ClustersConfigDump").get("dynamicActiveClusters", [])
        return {str(d["cluster"]["name"]): d["cluster"] for d in dynamic}

    def endpoints(self, cluster: str) -> list[tuple[str, int]]:
        """(address, port) of every endpoint EDS gives `cluster`."""
        for entry in self._section("EndpointsConfigDump").get("dynamicEndpointConfigs", []):
            assignment = entry["endpointConfig"]
            if assignment["clusterName"] == cluster:
                return [
                    (
                        str(lb["endpoint"]["address"]["socketAddress"]["address"]),
                        int(lb["endpoint"]["address"]["socketAddress"]["portValue"]),
                    )
                    for locality in assignment.get("endpoints", [])
                    for lb in locality.get("lbEndpoints", [])
                ]
        return []


def filter_chains(listener: Mapping[str, Any]) -> list[dict[str, Any]]:
    chains = list(listener.get("filterChains", []))
    if "defaultFilterChain" in listener:
        chains.append(listener["defaultFilterChain"])
    return chains


def network_filters(listener: Mapping[str, Any], name: str) -> Iterator[dict[str, Any]]:
    """typed configs of the network filters called `name` in every filter chain of `listener`."""
    for chain in filter_chains(listener):
        for network_filter in chain.get("filters", []):
            if network_filter["name"] == name:
                yield network_filter["typedConfig"]


def listener_filters(listener: Mapping[str, Any]) -> list[dict[str, Any]]:
    return list(listener.get("listenerFilters", []))


def is_udp(listener: Mapping[str, Any]) -> bool:
    return bool(listener["address"]["socketAddress"].get("protocol") == "UDP")


def http_filters(hcm: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [f for f in hcm.get("httpFilters", []) if str(f["name"]).startswith(prefix)]


def access_logs(listener: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every access log of a listener: its own, its HCMs' and TCP proxies', and the UDP proxy's."""
    logs = list(listener.get("accessLog", []))
    for name in (HCM, TCP_PROXY):
        for config in network_filters(listener, name):
            logs += config.get("accessLog", [])
    for listener_filter in listener_filters(listener):
        if listener_filter["name"] == UDP_PROXY:
            logs += listener_filter["typedConfig"].get("accessLog", [])
    return logs


def routes(route_config: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for virtual_host in route_config.get("virtualHosts", []):
        yield from virtual_host.get("routes", [])


def upstream_idle_timeout(cluster: Mapping[str, Any]) -> str | None:
    options = cluster.get("typedExtensionProtocolOptions", {}).get(HTTP_OPTIONS, {})
    value = options.get("commonHttpProtocolOptions", {}).get("idleTimeout")
    return str(value) if value is not None else None


def speaks_http2(cluster: Mapping[str, Any]) -> bool:
    options = cluster.get("typedExtensionProtocolOptions", {}).get(HTTP_OPTIONS, {})
    return "http2ProtocolOptions" in options.get("explicitHttpConfig", {})
