"""The bootstrap Gateway on the shared class: it brings the shared VIP up before any tenant route."""

from __future__ import annotations

from typing import Any

from .. import labels
from ..config import Config
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
