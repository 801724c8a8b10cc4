"""The block's rules for listeners that share a port agree with Envoy Gateway's translator: a pair the
config validation rejects is one the translator rejects (both listeners Conflicted), and a pair it
accepts is one the translator accepts. All pairs are translated in one egctl run, one Gateway each.

Found by this gate: before config._shared_port_problems the block accepted HTTP and TCP on one port, HTTP
and HTTPS on one port, and an HTTPS and a TLS listener with the same hostname on one port; the translator
rejects both listeners of each pair. Mutation check (done once, restored): removing the call to
_shared_port_problems turned this test red for those three pairs.
"""

from __future__ import annotations

from typing import Any

import pytest

from envoy_block.config import ConfigError
from tests.support.helpers import load, objects, with_gateway

from . import gate, tenant

pytestmark = pytest.mark.translator

CERT = {"certificate_refs": [{"name": "pair-tls"}]}
PAIRS: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("http-tcp", {"protocol": "HTTP", "port": 8080}, {"protocol": "TCP", "port": 8080}),
    ("http-https", {"protocol": "HTTP", "port": 8443}, {"protocol": "HTTPS", "port": 8443, **CERT}),
    (
        "https-tls-same-hostname",
        {"protocol": "HTTPS", "port": 443, "hostname": "a.example.com", **CERT},
        {"protocol": "TLS", "port": 443, "hostname": "a.example.com", "tls_mode": "Passthrough"},
    ),
    (
        "https-tls-other-hostname",
        {"protocol": "HTTPS", "port": 443, "hostname": "a.example.com", **CERT},
        {"protocol": "TLS", "port": 443, "hostname": "b.example.com", "tls_mode": "Passthrough"},
    ),
    ("tcp-udp", {"protocol": "TCP", "port": 53}, {"protocol": "UDP", "port": 53}),
    ("http-udp", {"protocol": "HTTP", "port": 80}, {"protocol": "UDP", "port": 80}),
]
NAMESPACE = "pairs"


def _gateway_listener(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    listener: dict[str, Any] = {"name": name, "protocol": spec["protocol"], "port": spec["port"]}
    if "hostname" in spec:
        listener["hostname"] = spec["hostname"]
    if spec["protocol"] in ("HTTPS", "TLS"):
        listener["tls"] = {"mode": spec.get("tls_mode", "Terminate")}
        if spec.get("certificate_refs"):
            listener["tls"]["certificateRefs"] = [{"kind": "Secret", "name": "pair-tls"}]
    listener["allowedRoutes"] = {"namespaces": {"from": "Same"}}
    return listener


def _pair_objects(pair: str, first: dict[str, Any], second: dict[str, Any]) -> list[dict[str, Any]]:
    listeners = [_gateway_listener("a", first), _gateway_listener("b", second)]
    gateway = {
        "apiVersion": tenant.GATEWAY_API,
        "kind": "Gateway",
        "metadata": {"name": pair, "namespace": NAMESPACE},
        "spec": {"gatewayClassName": "eg-shared", "listeners": listeners},
    }
    ref = tenant.GatewayRef(
        NAMESPACE,
        pair,
        tuple(tenant.Listener(x["name"], x["protocol"], x["port"], x.get("hostname"), "Same") for x in listeners),
        "Service",
    )
    routes = [o for listener in ref.listeners for o in tenant.route_objects(ref, listener)]
    return [gateway, *routes]


def test_shared_port_rules_match_the_translator() -> None:
    """Guards the listener rules against drifting from Envoy Gateway: for every pair, the block accepts it
    exactly when the translator accepts both listeners (and their routes)."""
    shared = [o for o in objects(with_gateway()) if o["kind"] in ("GatewayClass", "EnvoyProxy")]
    shared = [o for o in shared if o["metadata"]["name"] == "eg-shared"]
    inputs = [*shared, tenant.certificate_secret("pair-tls", NAMESPACE)]
    for pair, first, second in PAIRS:
        inputs += _pair_objects(pair, first, second)
    verdict = gate.run(inputs)

    disagree = []
    for pair, first, second in PAIRS:
        listeners = [{"name": "a", **first}, {"name": "b", **second}]
        block_accepts = _block_accepts(listeners)
        failures = [str(c) for c in verdict.failures if f" {NAMESPACE}/{pair}" in c.subject]
        if block_accepts != (not failures):
            disagree.append(f"{pair}: block accepts={block_accepts}, translator: {failures or 'accepts'}")
    assert not disagree, "\n".join(disagree)
    assert not [c for c in verdict.failures if f" {NAMESPACE}/" not in c.subject], verdict.report()


def _block_accepts(listeners: list[dict[str, Any]]) -> bool:
    try:
        load({"default_gateway": {"enabled": True, "listeners": listeners}})
    except ConfigError:
        return False
    return True
