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


def gateway(config: Config) -> dict[str, Any]:
    annotations = {}
    if config.get("tls.cluster_issuer_name"):
        annotations["cert-manager.io/cluster-issuer"] = config.get("tls.cluster_issuer_name")
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": labels.metadata(
            config, config.get("default_gateway.name"), "gateway", config.get("namespace"), annotations
        ),
        "spec": {
            "gatewayClassName": config.get("gatewayclass.shared.name"),
            "listeners": [_listener(spec) for spec in config.get("default_gateway.listeners")],
        },
    }


def target_gateway(config: Config, section: str) -> str:
    """The Gateway a policy section targets: its own target_gateway_name, else the default Gateway."""
    own = config.values.get(section, {}).get("target_gateway_name")
    return str(own or config.get("default_gateway.name"))


def build(config: Config) -> list[Step]:
    if not config.get("default_gateway.enabled"):
        return []
    return [Step(Phase.GATEWAY, gateway(config), wait_condition="Programmed")]
