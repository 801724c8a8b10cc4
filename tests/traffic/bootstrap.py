"""Turn what Envoy Gateway generated for one proxy into a bootstrap a real Envoy runs without a controller.

`egctl x translate --to xds` returns, per xDS IR key, an admin config dump: the bootstrap Envoy Gateway
renders for its proxies (admin on 127.0.0.1:19000, the stats listener on :19001, the readiness listener,
an ADS client to the controller) and the listeners, routes, clusters and endpoints the controller would
serve over ADS. This module moves the served part into `static_resources` unchanged and removes the ADS
client, so the proxy runs exactly the generated listeners, filters, routes and clusters:

- dynamic listeners become static listeners; an HCM's `rds` becomes the named route config, inline;
- an EDS cluster becomes a STATIC cluster whose load assignment is the endpoints dump's entry for it;
- the controller's xDS cluster and the EDS-fed `local_cluster` (zone-aware routing) go away with ADS;
- SDS secrets (egctl's dump leaves them out): a static secret under the name the listener asks for,
  holding the certificate and key of the Secret it names ("<namespace>/<name>"), as the controller sends.

Anything left that still points at ADS fails the conversion: nothing is dropped silently.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from tests.support.helpers import walk

# Bootstrap clusters that exist only to talk to the controller.
CONTROLLER_CLUSTERS = ("xds_cluster", "local_cluster")


class ConversionError(ValueError):
    """The dump holds something a static bootstrap cannot carry (said, never dropped)."""


def _section(dump: Mapping[str, Any], suffix: str) -> dict[str, Any]:
    found = [c for c in dump["configs"] if str(c["@type"]).endswith(suffix)]
    return dict(found[0]) if found else {}


def _plain(resource: Mapping[str, Any]) -> dict[str, Any]:
    """A dumped resource without its Any wrapper's `@type` (a static resource is not an Any)."""
    return {k: copy.deepcopy(v) for k, v in resource.items() if k != "@type"}


def _inline_routes(listener: dict[str, Any], route_configs: Mapping[str, dict[str, Any]]) -> None:
    for node in walk(listener):
        rds = node.get("rds")
        if isinstance(rds, dict) and "routeConfigName" in rds:
            name = str(rds["routeConfigName"])
            if name not in route_configs:
                raise ConversionError(f"listener {listener['name']}: route config {name!r} is not in the dump")
            del node["rds"]
            node["routeConfig"] = copy.deepcopy(route_configs[name])


def _static_secret_refs(listener: dict[str, Any]) -> set[str]:
    """Drop each SDS config (ADS) of the listener's TLS contexts: the secret then comes from the bootstrap."""
    names = set()
    for node in walk(listener):
        for key in ("tlsCertificateSdsSecretConfigs",):
            for ref in node.get(key, []):
                ref.pop("sdsConfig", None)
                names.add(str(ref["name"]))
        ref = node.get("validationContextSdsSecretConfig")
        if isinstance(ref, dict):
            ref.pop("sdsConfig", None)
            names.add(str(ref["name"]))
    return names


def _secret(name: str, secrets: Mapping[tuple[str, str], Mapping[str, Any]]) -> dict[str, Any]:
    namespace, _, secret_name = name.partition("/")
    found = secrets.get((namespace, secret_name))
    if found is None:
        raise ConversionError(f"a listener asks for secret {name!r}, which is not among the input Secrets")
    data = found.get("data", {})

    def inline(key: str) -> dict[str, str]:
        if key not in data:
            raise ConversionError(f"Secret {name} has no {key}")
        return {"inlineBytes": str(data[key])}  # protojson bytes are base64, as Secret data is

    return {"name": name, "tlsCertificate": {"certificateChain": inline("tls.crt"), "privateKey": inline("tls.key")}}


def static_bootstrap(dump: Mapping[str, Any], secrets: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The bootstrap (protojson, as Envoy reads it) of one xDS IR key's dump; `secrets` are the input Secrets."""
    bootstrap: dict[str, Any] = copy.deepcopy(_section(dump, "BootstrapConfigDump")["bootstrap"])
    bootstrap.pop("dynamicResources", None)
    bootstrap.get("clusterManager", {}).pop("localClusterName", None)
    static = bootstrap.setdefault("staticResources", {})
    static["clusters"] = [c for c in static.get("clusters", []) if c["name"] not in CONTROLLER_CLUSTERS]

    assignments = {
        str(e["endpointConfig"]["clusterName"]): _plain(e["endpointConfig"])
        for e in _section(dump, "EndpointsConfigDump").get("dynamicEndpointConfigs", [])
    }
    for entry in _section(dump, "ClustersConfigDump").get("dynamicActiveClusters", []):
        cluster = _plain(entry["cluster"])
        if cluster.get("type") == "EDS":
            service = str(cluster.pop("edsClusterConfig", {}).get("serviceName") or cluster["name"])
            cluster["type"] = "STATIC"
            cluster["loadAssignment"] = assignments.get(service, {"clusterName": service})
        static["clusters"].append(cluster)

    route_configs = {
        str(r["routeConfig"]["name"]): _plain(r["routeConfig"])
        for r in _section(dump, "RoutesConfigDump").get("dynamicRouteConfigs", [])
    }
    by_name = {
        (str(s["metadata"].get("namespace", "")), str(s["metadata"]["name"])): s
        for s in secrets
        if s.get("kind") == "Secret"
    }
    wanted: set[str] = set()
    for entry in _section(dump, "ListenersConfigDump").get("dynamicListeners", []):
        listener = _plain(entry["activeState"]["listener"])
        _inline_routes(listener, route_configs)
        wanted |= _static_secret_refs(listener)
        static.setdefault("listeners", []).append(listener)
    if wanted:
        static["secrets"] = [_secret(name, by_name) for name in sorted(wanted)]

    leftovers = [n for n in walk(static) if "ads" in n or "edsClusterConfig" in n or "rds" in n]
    if leftovers:
        raise ConversionError(f"still fed by the controller after conversion: {leftovers[:3]}")
    return bootstrap
