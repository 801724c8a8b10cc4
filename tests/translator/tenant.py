"""What a tenant (and the platform operator) adds to the block's objects before traffic can flow.

Built from the config - the contract - never from the rendered objects, so a builder that renders a name,
namespace or port the config did not ask for shows up as a dangling reference in the translator:
- a Gateway on each class besides the block's own (a second one on the shared class, to be merged);
- a Gateway for each `target_gateway_name` that is not the default Gateway (on the dedicated class);
- one route per listener of every Gateway, of the kind the listener's protocol takes (HTTPRoute for
  HTTP/HTTPS, TLSRoute for TLS Passthrough and Terminate, TCPRoute, UDPRoute), in a tenant namespace when
  the listener admits `All` namespaces, else in the Gateway's own;
- a backend per route: a Service (the gate gives Services their cluster IP, as the API server would) or,
  for the dedicated tenant Gateway, an Envoy Gateway Backend;
- the certificate Secrets the config references (kubernetes.io/tls, a fixture certificate for
  *.example.com valid 2020-2120), with a ReferenceGrant when a Secret lives in another namespace.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envoy_block.config import Config

TENANT_NAMESPACE = "tenant-a"
SHARED_TENANT_GATEWAY = "tenant-shared"
DEDICATED_TENANT_GATEWAY = "tenant-dedicated"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
GATEWAY_API = "gateway.networking.k8s.io/v1"
ROUTE_KIND = {"HTTP": "HTTPRoute", "HTTPS": "HTTPRoute", "TLS": "TLSRoute", "TCP": "TCPRoute", "UDP": "UDPRoute"}
BACKEND_PORT = {"HTTP": 8080, "HTTPS": 8080, "TLS": 8443, "TCP": 5432, "UDP": 5353}


class TenantError(ValueError):
    """The config asks for something the gate cannot stand in for (said plainly, never skipped)."""


@dataclass(frozen=True)
class Listener:
    name: str
    protocol: str
    port: int
    hostname: str | None
    allowed_from: str


@dataclass(frozen=True)
class GatewayRef:
    namespace: str
    name: str
    listeners: tuple[Listener, ...]
    backend: str  # "Service" or "Backend"


def _listener(spec: dict[str, Any]) -> Listener:
    allowed = str(spec.get("allowed_routes_namespaces", "Same"))
    if allowed == "Selector":
        # egctl's loader keeps only a Namespace's name (labels are dropped), so no namespace can match.
        raise TenantError(
            f"listener {spec['name']!r} admits routes by namespace Selector: egctl drops Namespace labels, "
            "so the translator gate cannot attach a route to it"
        )
    return Listener(spec["name"], spec["protocol"], int(spec["port"]), spec.get("hostname"), allowed)


def gateways(config: Config) -> list[GatewayRef]:
    """Every Gateway the gate expects routes on: the block's default Gateway plus the tenant's."""
    namespace = config.get("namespace")
    found: list[GatewayRef] = []
    if config.get("default_gateway.enabled"):
        listeners = tuple(_listener(spec) for spec in config.get("default_gateway.listeners"))
        found.append(GatewayRef(namespace, config.get("default_gateway.name"), listeners, "Service"))
    shared = Listener("shop", "HTTP", 8080, "shop.example.com", "Same")
    found.append(GatewayRef(TENANT_NAMESPACE, SHARED_TENANT_GATEWAY, (shared,), "Service"))
    dedicated = Listener("http", "HTTP", 80, None, "Same")
    found.append(GatewayRef(TENANT_NAMESPACE, DEDICATED_TENANT_GATEWAY, (dedicated,), "Backend"))
    for name in sorted(_policy_targets(config)):
        found.append(GatewayRef(namespace, name, (Listener("http", "HTTP", 80, None, "Same"),), "Service"))
    return found


def _policy_targets(config: Config) -> set[str]:
    """Gateways named by a policy's target_gateway_name that the block does not render itself."""
    default = config.get("default_gateway.name") if config.get("default_gateway.enabled") else None
    names = set()
    for section in ("client_traffic", "backend_traffic"):
        name = config.get(section).get("target_gateway_name")
        if config.get(f"{section}.enabled") and name and name != default:
            names.add(str(name))
    return names


def _metadata(name: str, namespace: str | None = None) -> dict[str, Any]:
    return {"name": name} | ({"namespace": namespace} if namespace else {})


def _tenant_gateway(gateway: GatewayRef, class_name: str) -> dict[str, Any]:
    listeners = []
    for listener in gateway.listeners:
        spec: dict[str, Any] = {"name": listener.name, "protocol": listener.protocol, "port": listener.port}
        if listener.hostname:
            spec["hostname"] = listener.hostname
        spec["allowedRoutes"] = {"namespaces": {"from": listener.allowed_from}}
        listeners.append(spec)
    return {
        "apiVersion": GATEWAY_API,
        "kind": "Gateway",
        "metadata": _metadata(gateway.name, gateway.namespace),
        "spec": {"gatewayClassName": class_name, "listeners": listeners},
    }


def _backend_objects(name: str, namespace: str, listener: Listener, kind: str) -> list[dict[str, Any]]:
    port = BACKEND_PORT[listener.protocol]
    if kind == "Backend":
        return [
            {
                "apiVersion": "gateway.envoyproxy.io/v1alpha1",
                "kind": "Backend",
                "metadata": _metadata(name, namespace),
                "spec": {"endpoints": [{"ip": {"address": "10.20.0.10", "port": port}}]},
            }
        ]
    protocol = "UDP" if listener.protocol == "UDP" else "TCP"
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": _metadata(name, namespace),
            "spec": {
                "selector": {"app": name},
                "ports": [{"name": "app", "port": port, "targetPort": port, "protocol": protocol}],
            },
        }
    ]


def route_objects(gateway: GatewayRef, listener: Listener) -> list[dict[str, Any]]:
    kind = ROUTE_KIND[listener.protocol]
    namespace = TENANT_NAMESPACE if listener.allowed_from == "All" else gateway.namespace
    name = f"{gateway.name}-{listener.name}"
    backend_ref: dict[str, Any] = {"name": f"{name}-backend", "port": BACKEND_PORT[listener.protocol]}
    if gateway.backend == "Backend":
        backend_ref = {"group": "gateway.envoyproxy.io", "kind": "Backend", "name": f"{name}-backend"}
    spec: dict[str, Any] = {
        "parentRefs": [
            {
                "group": "gateway.networking.k8s.io",
                "kind": "Gateway",
                "name": gateway.name,
                "namespace": gateway.namespace,
                "sectionName": listener.name,
            }
        ],
        "rules": [{"backendRefs": [backend_ref]}],
    }
    if listener.protocol in ("HTTP", "HTTPS", "TLS"):
        spec["hostnames"] = [listener.hostname or f"{name}.example.com"]
    route = {"apiVersion": GATEWAY_API, "kind": kind, "metadata": _metadata(name, namespace), "spec": spec}
    return [route, *_backend_objects(f"{name}-backend", namespace, listener, gateway.backend)]


def certificate_secret(name: str, namespace: str) -> dict[str, Any]:
    def encoded(file: str) -> str:
        return base64.b64encode((FIXTURES / file).read_bytes()).decode()

    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": _metadata(name, namespace),
        "type": "kubernetes.io/tls",
        "data": {"tls.crt": encoded("tls.crt"), "tls.key": encoded("tls.key")},
    }


def certificates(config: Config) -> list[dict[str, Any]]:
    if not config.get("default_gateway.enabled"):
        return []
    namespace = config.get("namespace")
    objects: list[dict[str, Any]] = []
    for spec in config.get("default_gateway.listeners"):
        for ref in spec.get("certificate_refs", []):
            secret_namespace = ref.get("namespace", namespace)
            objects.append(certificate_secret(ref["name"], secret_namespace))
            if secret_namespace != namespace:
                objects.append(
                    {
                        "apiVersion": "gateway.networking.k8s.io/v1beta1",
                        "kind": "ReferenceGrant",
                        "metadata": _metadata(f"{ref['name']}-from-gateways", secret_namespace),
                        "spec": {
                            "from": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "namespace": namespace}],
                            "to": [{"group": "", "kind": "Secret", "name": ref["name"]}],
                        },
                    }
                )
    return objects


def objects(config: Config) -> list[dict[str, Any]]:
    """The tenant's and operator's objects for `config` (the block's own objects are not repeated)."""
    shared, dedicated = config.get("gatewayclass.shared.name"), config.get("gatewayclass.dedicated.name")
    result: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TENANT_NAMESPACE}}]
    for gateway in gateways(config):
        if gateway.name == SHARED_TENANT_GATEWAY:
            result.append(_tenant_gateway(gateway, shared))
        elif gateway.namespace == TENANT_NAMESPACE or gateway.name in _policy_targets(config):
            result.append(_tenant_gateway(gateway, dedicated))
        for listener in gateway.listeners:
            result += route_objects(gateway, listener)
    return result + certificates(config)
