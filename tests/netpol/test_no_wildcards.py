"""Invariant (the cozystack lesson): no rule has a missing or empty peer, and no rule uses a wildcard
entity that would also match the API server or the host - an allow with a missing peer means everything.
The only "everyone" is the proxies' ingress, which is the point of a gateway: Cilium `fromEntities:
[world, cluster]`, a NetworkPolicy rule without `from`, Calico `nets: [0.0.0.0/0, ::/0]` (why each, see
test_ingress_from_everyone.py). `all` is never rendered, not even there.

Mutation checks (done once): rendering the Cilium API-server peer as toEntities [all] turned this module
red (in CI: tools/mutate.py `netpol-wildcard-entity`); rendering the Cilium everyone peer as [all] turned
test_every_rule_names_its_peers red for cilium.
(An empty api_server_cidrs, which would render `from: []` = everything, is rejected by validation.)
"""

from __future__ import annotations

import pytest

from tests.support.helpers import objects
from tests.support.netpol import DEPLOY_TYPES, NETPOL_KINDS, PROVIDERS, config_for, read

MATRIX = [(p, d) for p in PROVIDERS for d in DEPLOY_TYPES]
WILDCARD_ENTITIES = {"all", "host", "remote-node", "unmanaged", "init", "health", "ingress"}
EVERYONE_ENTITIES = {"world", "cluster"}


def _everyone(peer: tuple[object, ...]) -> bool:
    return (
        peer == ("anyone",)
        or (peer[0] == "entity" and peer[1] in EVERYONE_ENTITIES)
        or (peer[0] == "cidr" and peer[1] in ("0.0.0.0/0", "::/0"))
    )


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_every_rule_names_its_peers(provider: str, deploy_type: str) -> None:
    cfg = {**config_for(provider, deploy_type), "waf": {"enabled": True}}
    for role, policy in read(cfg).items():
        for rule in policy.rules:
            assert rule.peers, (role, rule)
            for peer in rule.peers:
                assert not (peer[0] == "entity" and peer[1] in WILDCARD_ENTITIES), (role, peer)
                if peer[0] == "pods":
                    assert peer[2] or peer[1] != "*", f"{role}: pods of every namespace with no label = everything"
                if _everyone(peer):
                    assert role == "proxies", (role, rule)
                    assert rule.direction == "ingress", (role, rule)


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_raw_objects_have_no_empty_peer_lists(provider: str, deploy_type: str) -> None:
    """Checked on the raw YAML too, so a reader bug cannot hide an empty `from: []` / `to: []`. The one
    rule without a peer list is the proxies' NetworkPolicy ingress from everyone."""
    for obj in objects({**config_for(provider, deploy_type), "waf": {"enabled": True}}):
        if obj["kind"] not in NETPOL_KINDS:
            continue
        proxies = obj["metadata"]["name"] == "envoy-proxies"
        for direction in ("ingress", "egress"):
            for rule in obj["spec"].get(direction, []):
                peer_keys = [k for k in rule if k not in ("ports", "toPorts", "action", "protocol", "destination")]
                if obj["apiVersion"].startswith("projectcalico"):
                    side = rule.get("source" if direction == "ingress" else "destination", {})
                    assert {"nets", "selector", "services"} & side.keys(), rule
                elif not peer_keys:
                    assert provider == "kubernetes", rule
                    assert proxies, rule
                    assert direction == "ingress", rule
                    assert "from" not in rule, rule
                else:
                    assert all(rule[k] for k in peer_keys), rule
