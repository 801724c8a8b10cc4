"""ClientTrafficPolicy (PROXY protocol, client timeouts) and BackendTrafficPolicy (backend timeouts)."""

from __future__ import annotations

from typing import Any

from .. import labels
from ..config import Config
from ..plan import Phase, Step
from .gateway import target_gateway

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


def _policy(
    config: Config, kind: str, section: str, timeouts: dict[str, tuple[str, str]], extra: dict[str, Any]
) -> dict[str, Any]:
    """A Gateway-targeted policy with the timeouts the user set (and only those)."""
    target = target_gateway(config, section)
    spec: dict[str, Any] = {
        "targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": target}],
        **extra,
    }
    timeout: dict[str, dict[str, str]] = {}
    for key, (group, field) in timeouts.items():
        if key in config.get(f"{section}.timeouts"):
            timeout.setdefault(group, {})[field] = config.get(f"{section}.timeouts")[key]
    if timeout:
        spec["timeout"] = timeout
    name = f"{target}-{section.replace('_', '-')}"
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": kind,
        "metadata": labels.metadata(config, name, "policy", config.get("namespace")),
        "spec": spec,
    }


def client_traffic_policy(config: Config) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    proxy_protocol = config.get("client_traffic.proxy_protocol")
    if proxy_protocol["enabled"]:
        # proxyProtocol replaces the deprecated enableProxyProtocol; {} means the header is required.
        extra["proxyProtocol"] = {"optional": True} if proxy_protocol["optional"] else {}
    return _policy(config, "ClientTrafficPolicy", "client_traffic", CLIENT_TIMEOUTS, extra)


def backend_traffic_policy(config: Config) -> dict[str, Any]:
    return _policy(config, "BackendTrafficPolicy", "backend_traffic", BACKEND_TIMEOUTS, {})


def build(config: Config) -> list[Step]:
    steps = []
    if config.get("client_traffic.enabled"):
        steps.append(Step(Phase.POLICY, client_traffic_policy(config), wait_condition="Accepted"))
    if config.get("backend_traffic.enabled"):
        steps.append(Step(Phase.POLICY, backend_traffic_policy(config), wait_condition="Accepted"))
    return steps
