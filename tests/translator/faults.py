"""Configuration Envoy Gateway v1.9.1 itself produces for listeners Envoy rejects, translated by its own egctl:
what the alerts' probe Envoy is fed when the test needs the real fault rather than a hand-written one.

egctl never merges Gateways (tests/cluster/test_merged_listeners.py shows the merged cases on the real node),
so the fault here is the one inside a single Gateway: an HTTPS listener without hostname beside a TLS listener
without routes on one port (envoyproxy/gateway#9341). The translator gives both filter chains the same empty
match; Envoy refuses the listener ("... has the same matching rules defined as ...").
"""

from __future__ import annotations

from typing import Any

from tests.support.helpers import objects
from tests.support.tenant_objects import LISTENER_CERT, https_listener, listener_gateway, tls_listener

from . import gate, tenant, xds

FAULT_GATEWAY = "empty-match"


def empty_match_listener() -> dict[str, Any]:
    """The one xDS listener v1.9.1 builds for that Gateway on eg-dedicated (protojson, as the controller
    sends it: RDS and SDS over ADS)."""
    own = [o for o in objects({}) if o["kind"] in ("GatewayClass", "EnvoyProxy")]
    own = [o for o in own if o["metadata"]["name"] == "eg-dedicated"]
    gateway = listener_gateway(
        FAULT_GATEWAY, "eg-dedicated", https_listener("https"), tls_listener("tls", hostname="*.example.com")
    )
    namespace = gateway["metadata"]["namespace"]
    route = {
        "apiVersion": f"{tenant.GATEWAY_API}",
        "kind": "HTTPRoute",
        "metadata": {"name": "shop", "namespace": namespace},
        "spec": {
            "parentRefs": [{"name": FAULT_GATEWAY, "sectionName": "https"}],
            "rules": [{"backendRefs": [{"name": "shop", "port": 8080}]}],
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "shop", "namespace": namespace},
        "spec": {"ports": [{"name": "http", "port": 8080}]},
    }
    verdict = gate.run([*own, gateway, route, service, tenant.certificate_secret(LISTENER_CERT, namespace)])
    listeners = [
        listener
        for key, dump in verdict.xds.items()
        for listener in xds.Dump(key, dump).listeners()
        if len(xds.filter_chains(listener)) == 2
    ]
    assert len(listeners) == 1, f"expected the one listener of both filter chains, got {listeners}"
    (listener,) = listeners
    matches = [chain.get("filterChainMatch", {}) for chain in xds.filter_chains(listener)]
    assert matches == [{}, {}], f"v1.9.1 no longer gives both chains the empty match: {matches}"
    return {"@type": "type.googleapis.com/envoy.config.listener.v3.Listener", **listener}
