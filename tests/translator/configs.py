"""The configs the translator gate runs: the default config, every example, every envoy configuration of the
seed README (tests/support/seed.py), and four that together cover every listener protocol and every policy
setting the examples leave out."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import yaml

from envoy_block.config import Config
from tests.conftest import ROOT
from tests.support import seed
from tests.support.helpers import load, objects

from . import egctl, gate, tenant

EXAMPLES = {
    p.parent.name: yaml.safe_load(p.read_text(encoding="utf-8"))["config"]
    for p in sorted((ROOT / "examples").glob("*/config.yml"))
}

# HTTP, HTTPS, TLS Passthrough and Terminate (its Secret in another namespace, behind a ReferenceGrant),
# TCP, UDP; optional PROXY protocol, every client and backend timeout, a fail-open headers-only WAF.
EVERY_PROTOCOL: dict[str, Any] = {
    "default_gateway": {
        "enabled": True,
        "listeners": [
            {"name": "http", "protocol": "HTTP", "port": 80, "allowed_routes_namespaces": "All"},
            {
                "name": "https",
                "protocol": "HTTPS",
                "port": 443,
                "hostname": "app.example.com",
                "tls_mode": "Terminate",
                "certificate_refs": [{"name": "app-example-com-tls"}],
                "allowed_routes_namespaces": "All",
            },
            {
                "name": "tls-passthrough",
                "protocol": "TLS",
                "port": 8443,
                "hostname": "db.example.com",
                "tls_mode": "Passthrough",
                "allowed_routes_namespaces": "All",
            },
            {
                "name": "tls-terminate",
                "protocol": "TLS",
                "port": 9443,
                "hostname": "mq.example.com",
                "tls_mode": "Terminate",
                "certificate_refs": [{"name": "mq-example-com-tls", "namespace": "certs"}],
            },
            {"name": "tcp", "protocol": "TCP", "port": 5432},
            {"name": "udp", "protocol": "UDP", "port": 5353, "allowed_routes_namespaces": "All"},
        ],
    },
    "client_traffic": {
        "enabled": True,
        "proxy_protocol": {"enabled": True, "optional": True},
        "timeouts": {"request_received": "10s", "idle": "30m", "stream_idle": "2m"},
    },
    "backend_traffic": {"enabled": True, "timeouts": {"connect": "3s", "request": "45s", "idle": "20m"}},
    "waf": {
        "enabled": True,
        "fail_open": True,
        "message_timeout": "1s",
        "body": {"enabled": False},
        "default_policy": {"enabled": True},
    },
}

# Policies on a Gateway the block does not render (target_gateway_name, on the dedicated class), no
# default Gateway, and the access log switched off.
TENANT_TARGETS: dict[str, Any] = {
    "client_traffic": {
        "enabled": True,
        "target_gateway_name": "edge",
        "proxy_protocol": {"enabled": True},
        "timeouts": {"idle": "15m"},
    },
    "backend_traffic": {"enabled": True, "target_gateway_name": "edge", "timeouts": {"request": "20s"}},
    "logging": {"access_log": False},
}

# The WAF's body buffer merged into the client traffic policy of its Gateway (one ClientTrafficPolicy with
# PROXY protocol, a timeout and the buffer), with limit_action partial: the proxies hold max_size; and
# response inspection on.
WAF_PARTIAL_MERGED: dict[str, Any] = {
    "default_gateway": {
        "enabled": True,
        "listeners": [
            {"name": "http", "protocol": "HTTP", "port": 80, "allowed_routes_namespaces": "All"},
            {
                "name": "https",
                "protocol": "HTTPS",
                "port": 443,
                "hostname": "app.example.com",
                "certificate_refs": [{"name": "app-example-com-tls"}],
            },
        ],
    },
    "client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True}, "timeouts": {"stream_idle": "1m"}},
    "waf": {
        "enabled": True,
        "default_policy": {"enabled": True},
        "body": {"limit": 65536, "limit_action": "partial", "max_size": 262144},
        "response_inspection": {"enabled": True, "body_limit": 32768},
    },
}

# The WAF's body buffer in a policy of its own beside client_traffic on another Gateway (two policies, each
# on its own Gateway; the other Gateway must keep Envoy Gateway's buffer).
WAF_BESIDE_TENANT_POLICY: dict[str, Any] = {
    "default_gateway": {"enabled": True},
    "client_traffic": {"enabled": True, "target_gateway_name": "edge", "timeouts": {"request_received": "20s"}},
    "waf": {"enabled": True, "default_policy": {"enabled": True}, "body": {"limit": 200000}},
}

# Every proxy availability setting (docs/operations.md#proxy-availability): the translator validates both
# EnvoyProxies before it accepts their GatewayClasses.
PROXY_AVAILABILITY: dict[str, Any] = {
    "default_gateway": {"enabled": True},
    "data_plane": {
        "autoscaling": {"enabled": True, "min_replicas": 3, "max_replicas": 6, "cpu_utilization": 80},
        "disruption_budget": {"max_unavailable": 2},
        "shutdown": {"drain_timeout": "2m", "min_drain_duration": "45s"},
        "topology_spread": {"when_unsatisfiable": "DoNotSchedule"},
        "priority_class_name": "edge-critical",
        "node_selector": {"node-role.example.com/edge": "true"},
        "tolerations": [{"key": "edge", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
    },
}

CONFIGS: dict[str, dict[str, Any]] = {
    **{f"example-{name}": cfg for name, cfg in EXAMPLES.items()},
    **seed.envoy_configs(),
    "every-protocol": EVERY_PROTOCOL,
    "tenant-targets": TENANT_TARGETS,
    "waf-partial-merged": WAF_PARTIAL_MERGED,
    "waf-beside-tenant-policy": WAF_BESIDE_TENANT_POLICY,
    "proxy-availability": PROXY_AVAILABILITY,
}


def gate_input(cfg: dict[str, Any]) -> tuple[Config, list[dict[str, Any]]]:
    """The block's objects for `cfg` followed by the tenant's."""
    config = load(cfg)
    return config, objects(cfg) + tenant.objects(config)


def verdict(cfg: dict[str, Any]) -> tuple[Config, gate.Verdict]:
    config, inputs = gate_input(cfg)
    return config, gate.run(inputs)


def shared_only(inputs: list[dict[str, Any]], config: Config) -> list[dict[str, Any]]:
    """`inputs` without the dedicated class: its GatewayClass and EnvoyProxy, and the tenant's dedicated
    Gateway with its route and Backend (one egctl run instead of two, for tests about the shared class)."""
    dedicated = config.get("gatewayclass.dedicated.name")
    prefix = f"{tenant.DEDICATED_TENANT_GATEWAY}-"
    return [
        o
        for o in inputs
        if not (o["kind"] in ("GatewayClass", "EnvoyProxy") and o["metadata"]["name"] == dedicated)
        and not (o["kind"] == "Gateway" and o["metadata"]["name"] == tenant.DEDICATED_TENANT_GATEWAY)
        and not str(o["metadata"]["name"]).startswith(prefix)
    ]


def _translator_input_digest(cfg: dict[str, Any]) -> str:
    _, inputs = gate_input(cfg)
    fed = [o for o in inputs if o["kind"] in egctl.TRANSLATOR_KINDS]
    return hashlib.sha256(json.dumps(fed, sort_keys=True).encode()).hexdigest()


def groups() -> dict[str, list[str]]:
    """CONFIGS whose translator input is identical (e.g. examples that differ only in network policies,
    which the translator never sees), so each distinct input is translated once: "a+b" -> [a, b]."""
    by_digest: dict[str, list[str]] = {}
    for name in sorted(CONFIGS):
        by_digest.setdefault(_translator_input_digest(CONFIGS[name]), []).append(name)
    return {"+".join(names): names for names in by_digest.values()}
