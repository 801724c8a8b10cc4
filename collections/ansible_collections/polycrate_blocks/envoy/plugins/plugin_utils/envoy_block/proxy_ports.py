"""Ports Envoy Gateway fixes inside every proxy pod, shared by validation and the network policies."""

from __future__ import annotations

PORT_SHIFT = 10000  # listener ports below SHIFTED_BELOW listen on port + PORT_SHIFT inside the container
SHIFTED_BELOW = 1024
METRICS_PORT = 19001
READINESS_PORT = 19003
# The proxy pod's own listeners: a Gateway listener on one of these container ports cannot bind.
RESERVED = {
    19000: "Envoy admin",
    METRICS_PORT: "metrics",
    19002: "shutdown manager",
    READINESS_PORT: "readiness",
}


def container_port(listener_port: int) -> int:
    """The port the proxy container really listens on for a Gateway listener port."""
    return listener_port + PORT_SHIFT if listener_port < SHIFTED_BELOW else listener_port
