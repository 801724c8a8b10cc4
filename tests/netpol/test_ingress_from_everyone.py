"""Invariant: the proxies' "from anywhere" ingress really admits everyone - clients outside the cluster,
in-cluster clients (pods), node-local health checks (the host) and load-balancer traffic that a node
SNATs with externalTrafficPolicy: Cluster (remote nodes) - with each provider's semantics, not by
reading 0.0.0.0/0 as "everyone".

Why not a CIDR: in Cilium a CIDR rule selects only identities outside the cluster (reserved:world and
the CIDR identities); pods, the host and remote nodes have cluster-managed identities that no CIDR rule
matches (Cilium docs, security/policy caveats: "CIDR policies ... are used to define policies to and
from endpoints which are not managed by Cilium"). So `fromCIDR: [0.0.0.0/0, ::/0]` silently drops
in-cluster clients, kubelet-side health checks and SNATed LoadBalancer traffic. The same holds for a
plain NetworkPolicy under Cilium: it parses `ipBlock` into the same CIDR selector
(pkg/k8s/network_policy.go ParseNetworkPolicy -> ipBlockToCIDRRule), while a rule with no `from` at all
becomes the wildcard selector that matches every identity. Calico matches `nets` by address, so
0.0.0.0/0 and ::/0 do cover pods and nodes there.

What is rendered instead: Cilium `fromEntities: [cluster, world]` (`cluster` = pods of this cluster,
host, remote-node, health, init, ingress, unmanaged, kube-apiserver; `world` = everything outside) -
never `all`; NetworkPolicy an ingress rule without `from` (the API's own "all sources"); Calico `nets`.

Mutation check (done once): rendering the anyone peer as `fromCIDR: [0.0.0.0/0, ::/0]` (Cilium) and
`ipBlock` 0.0.0.0/0 + ::/0 (NetworkPolicy), as before, turned the cilium and kubernetes cases of
test_proxy_ingress_admits_everyone red; the Cilium half runs in CI (tools/mutate.py
`proxy-ingress-everyone-as-cidr`).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import objects
from tests.support.netpol import DEPLOY_TYPES, PROVIDERS, config_for

MATRIX = [(p, d) for p in PROVIDERS for d in DEPLOY_TYPES]
ANYWHERE_CIDRS = {"0.0.0.0/0", "::/0"}
LISTENERS = [{"name": "http", "protocol": "HTTP", "port": 80}, {"name": "alt", "protocol": "HTTP", "port": 8080}]


def _proxy_policy(cfg: dict[str, Any]) -> dict[str, Any]:
    return next(o for o in objects(cfg) if o["metadata"]["name"] == "envoy-proxies")


def _everyone_rules(provider: str, obj: dict[str, Any]) -> list[dict[str, Any]]:
    """The raw ingress rules of the proxies' policy that admit everyone, in the provider's own terms."""
    rules = obj["spec"]["ingress"]
    if provider == "cilium":
        return [r for r in rules if set(r.get("fromEntities", [])) == {"world", "cluster"}]
    if provider == "kubernetes":
        return [r for r in rules if "from" not in r]
    return [r for r in rules if set(r.get("source", {}).get("nets", [])) == ANYWHERE_CIDRS]


def _cidr_peers(provider: str, rule: dict[str, Any]) -> set[str]:
    if provider == "cilium":
        return set(rule.get("fromCIDR", [])) | {c["cidr"] for c in rule.get("fromCIDRSet", [])}
    return {peer["ipBlock"]["cidr"] for peer in rule.get("from", []) if "ipBlock" in peer}


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_proxy_ingress_admits_everyone(provider: str, deploy_type: str) -> None:
    obj = _proxy_policy(config_for(provider, deploy_type))
    assert len(_everyone_rules(provider, obj)) == 1, obj["spec"]["ingress"]
    if provider in ("cilium", "kubernetes"):
        # Under Cilium a 0.0.0.0/0 CIDR (or ipBlock) is "outside the cluster", never "everyone".
        for rule in obj["spec"]["ingress"]:
            assert not ANYWHERE_CIDRS & _cidr_peers(provider, rule), rule


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_everyone_keeps_the_narrowed_ports(provider: str, deploy_type: str) -> None:
    """Admitting everyone widens the peers, never the ports: proxy_ingress_ports still narrows them."""
    cfg = {
        **config_for(provider, deploy_type, proxy_ingress_ports=[80, 8080]),
        "default_gateway": {"enabled": True, "listeners": LISTENERS},
    }
    (rule,) = _everyone_rules(provider, _proxy_policy(cfg))
    if provider == "cilium":
        ports = {int(p["port"]) for block in rule["toPorts"] for p in block["ports"]}
    elif provider == "kubernetes":
        ports = {p["port"] for p in rule["ports"]}
    else:
        ports = set(rule["destination"]["ports"])
    assert ports == {10080, 8080, 19001, 19003}


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_only_the_proxies_admit_everyone(provider: str, deploy_type: str) -> None:
    """The controller, certgen and WAF policies never carry a peer-less rule or the everyone entities."""
    cfg = {**config_for(provider, deploy_type), "waf": {"enabled": True}}
    for obj in objects(cfg):
        if obj["metadata"]["name"] == "envoy-proxies" or "ingress" not in obj.get("spec", {}):
            continue
        if obj["kind"] in ("Deployment", "Service", "ConfigMap", "PodDisruptionBudget"):
            continue
        assert not _everyone_rules(provider, obj), (obj["metadata"]["name"], obj["spec"]["ingress"])
