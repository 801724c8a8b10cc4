"""What the traffic tests feed Envoy Gateway's translator: the block's rendered objects for one config,
plus a tenant's routes on the block's default Gateway (tests/translator/tenant.py, one route and backend
Service per listener) and the certificate Secrets the config references.

There is no kube-proxy or CNI here: each Service gets a cluster IP on the loopback range (127.0.32.0/20)
before translation, the translator routes to it (egctl has no EndpointSlices), and the test binds the
stand-in (the WAF, a backend) on that address inside the test's own network namespace.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from envoy_block.config import Config
from tests.support.helpers import load, objects
from tests.translator import gate, tenant

from . import bootstrap

SERVICE_CIDR = ipaddress.ip_network("127.0.32.0/20")


class GateError(AssertionError):
    """The translator did not accept every object: there is no point sending traffic."""


@dataclass
class Scenario:
    config: Config
    inputs: list[dict[str, Any]]
    bootstrap: dict[str, Any]
    # "<namespace>/<name>" of every Service -> (cluster IP, [(port name, port)]).
    services: dict[str, tuple[str, list[tuple[str, int]]]] = field(default_factory=dict)

    def rendered(self, kind: str, name: str | None = None) -> dict[str, Any]:
        found = [o for o in self.inputs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
        if len(found) != 1:
            raise LookupError(f"expected one {kind} {name or ''} among the objects, found {len(found)}")
        return found[0]


def _with_loopback_ips(objs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    hosts = SERVICE_CIDR.hosts()
    result = []
    for obj in objs:
        is_service = obj["kind"] == "Service"
        result.append({**obj, "spec": {**obj["spec"], "clusterIP": str(next(hosts))}} if is_service else obj)
    return result


def tenant_objects(config: Config) -> list[dict[str, Any]]:
    """A route (and backend Service) per listener of the default Gateway, and the referenced Secrets."""
    name, namespace = config.get("default_gateway.name"), config.get("namespace")
    result: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": tenant.TENANT_NAMESPACE}}
    ]
    for gateway in tenant.gateways(config):
        if (gateway.namespace, gateway.name) == (namespace, name):
            for listener in gateway.listeners:
                result += tenant.route_objects(gateway, listener)
    return result + tenant.certificates(config)


def build(cfg: Mapping[str, Any]) -> Scenario:
    """Render `cfg`, translate it with egctl, require every status Accepted, and convert its xDS."""
    config = load(dict(cfg))
    if not config.get("default_gateway.enabled"):
        raise ValueError("the traffic tests send traffic through the default Gateway: enable it")
    inputs = _with_loopback_ips(objects(dict(cfg)) + tenant_objects(config))
    verdict = gate.run(inputs)
    if verdict.failures:
        raise GateError(f"the translator did not accept the traffic test's objects:\n{verdict.report()}")
    dumps = [d for d in verdict.xds.values() if _section_listeners(d)]
    if len(dumps) != 1:
        raise GateError(f"expected the xDS of one proxy (the default Gateway's), found keys {sorted(verdict.xds)}")
    secrets = [o for o in inputs if o["kind"] == "Secret"]
    scenario = Scenario(config, inputs, bootstrap.static_bootstrap(dumps[0], secrets))
    for obj in inputs:
        if obj["kind"] == "Service":
            key = f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"
            ports = [(str(p.get("name", "")), int(p["port"])) for p in obj["spec"]["ports"]]
            scenario.services[key] = (str(obj["spec"]["clusterIP"]), ports)
    return scenario


def _section_listeners(dump: Mapping[str, Any]) -> list[Any]:
    for config in dump["configs"]:
        if str(config["@type"]).endswith("ListenersConfigDump"):
            return list(config.get("dynamicListeners", []))
    return []


def listener_port(scenario: Scenario, listener: str) -> int:
    """The port Envoy binds for the default Gateway's `listener`, read from the generated listeners and
    checked against the container port the block's network policies open for it (proxy_ports)."""
    from envoy_block.proxy_ports import container_port

    specs = {str(s["name"]): int(s["port"]) for s in scenario.config.get("default_gateway.listeners")}
    bound = {
        int(x["address"]["socketAddress"]["portValue"])
        for x in scenario.bootstrap["staticResources"]["listeners"]
        if not str(x["name"]).startswith("envoy-gateway-proxy-")
    }
    want = container_port(specs[listener])
    if want not in bound:
        raise GateError(f"listener {listener}: Envoy binds {sorted(bound)}, the block expects {want}")
    return want
