"""Invariant: the WAF admits only the block's proxies on its gRPC port (plus metrics from the monitoring
namespace) and has no egress but DNS - a WAF reachable from anywhere could be used to probe the rules,
and one with open egress could leak what it inspects.

Mutation check (tools/mutate.py `waf-fence`): widening the WAF's proxy peer to every pod of every
namespace turns test_waf_ingress_admits_only_proxies red for every provider.
"""

from __future__ import annotations

import pytest

from tests.support.helpers import find
from tests.support.netpol import DEPLOY_TYPES, PROVIDERS, config_for, read

MATRIX = [(p, d) for p in PROVIDERS for d in DEPLOY_TYPES]
PROXY_LABELS = frozenset({("envoy.polycrate.io/role", "proxy"), ("app.kubernetes.io/instance", "envoy")})


def _cfg(provider: str, deploy_type: str) -> dict[str, object]:
    return {**config_for(provider, deploy_type), "waf": {"enabled": True}}


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_waf_ingress_admits_only_proxies(provider: str, deploy_type: str) -> None:
    policy = read(_cfg(provider, deploy_type))["waf"]
    grpc = [r for r in policy.ingress() if ("TCP", 9002) in r.ports]
    assert grpc
    for rule in grpc:
        assert rule.ports == frozenset({("TCP", 9002)})
        assert all(peer[0] == "pods" and peer[2] == PROXY_LABELS for peer in rule.peers), rule.peers
    others = [r for r in policy.ingress() if r not in grpc]
    assert all(r.ports == frozenset({("TCP", 9090)}) for r in others)
    assert all(peer == ("pods", "monitoring", frozenset()) for r in others for peer in r.peers)


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_waf_egress_is_dns_only(provider: str, deploy_type: str) -> None:
    peers = {peer for rule in read(_cfg(provider, deploy_type))["waf"].egress() for peer in rule.peers}
    assert peers == {("pods", "kube-system", frozenset({("k8s-app", "kube-dns")}))}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_waf_policy_selects_the_waf_pods(provider: str) -> None:
    cfg = _cfg(provider, "ControllerNamespace")
    pod_labels = find(cfg, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert read(cfg)["waf"].selector.items() <= pod_labels.items()


def test_no_waf_policy_without_the_waf() -> None:
    assert "waf" not in read(config_for("cilium", "ControllerNamespace"))
