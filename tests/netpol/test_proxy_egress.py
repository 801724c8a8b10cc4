"""Invariant: proxy egress is DNS (kube-dns, UDP+TCP 53) and xDS to the controller (TCP 18000) and
nothing else - not 18001/18002, not the API server, not the host, and no backends (user workloads;
until the user allows them the proxy answers 503). User additions appear only as listed.

Mutation check (done once): widening the controller peer in network_policies.policies to every
namespace (namespace=None) turned test_proxy_egress_is_exactly_dns_and_xds red for all providers. In CI
(tools/mutate.py): `proxy-egress-xds-ports` (18001 added) and `proxy-egress-dns-ports` (every TCP port to
kube-dns).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.netpol import DEPLOY_TYPES, PROVIDERS, Rule, config_for, read

MATRIX = [(p, d) for p in PROVIDERS for d in DEPLOY_TYPES]
DNS = ("pods", "kube-system", frozenset({("k8s-app", "kube-dns")}))
CONTROLLER = (
    "pods",
    "envoy-gateway-system",
    frozenset({("control-plane", "envoy-gateway"), ("app.kubernetes.io/instance", "envoy-gateway")}),
)


def _flows(rules: list[Rule]) -> set[tuple[Any, ...]]:
    return {(peer, port) for rule in rules for peer in rule.peers for port in rule.ports}


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_proxy_egress_is_exactly_dns_and_xds(provider: str, deploy_type: str) -> None:
    egress = read(config_for(provider, deploy_type))["proxies"].egress()
    assert all(rule.peers for rule in egress), "a rule without peers allows every destination"
    assert _flows(egress) == {(DNS, ("UDP", 53)), (DNS, ("TCP", 53)), (CONTROLLER, ("TCP", 18000))}


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_user_egress_additions_are_added_as_listed(provider: str, deploy_type: str) -> None:
    cfg = config_for(provider, deploy_type, extra_egress_to=[{"cidr": "10.20.0.0/16", "ports": [8080]}])
    flows = _flows(read(cfg)["proxies"].egress())
    assert (("cidr", "10.20.0.0/16"), ("TCP", 8080)) in flows
    assert len(flows) == 4


@pytest.mark.parametrize("provider", PROVIDERS)
def test_controller_egress_is_apiserver_and_dns_only(provider: str) -> None:
    egress = read(config_for(provider, "ControllerNamespace"))["controller"].egress()
    peers = {peer for rule in egress for peer in rule.peers}
    assert peers == {DNS, ("apiserver",)}


WAF = (
    "pods",
    "envoy-gateway-system",
    frozenset({("envoy.polycrate.io/role", "waf"), ("app.kubernetes.io/instance", "envoy")}),
)


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_proxy_egress_adds_only_the_waf_when_it_is_on(provider: str, deploy_type: str) -> None:
    cfg = {**config_for(provider, deploy_type), "waf": {"enabled": True}}
    egress = read(cfg)["proxies"].egress()
    assert _flows(egress) == {
        (DNS, ("UDP", 53)),
        (DNS, ("TCP", 53)),
        (CONTROLLER, ("TCP", 18000)),
        (WAF, ("TCP", 9002)),
    }
