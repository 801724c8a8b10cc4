"""Invariant (the cozystack lesson): no rule has a missing or empty peer, and no rule uses a wildcard
entity that would also match the API server or the host - an allow with a missing peer means everything.
The only "anywhere" is the proxies' ingress from 0.0.0.0/0 and ::/0, which is the point of a gateway.

Mutation check (done once): rendering the Cilium API-server peer as toEntities [all] turned this module
red. (An empty api_server_cidrs, which would render `from: []` = everything, is rejected by validation.)
"""

from __future__ import annotations

import pytest

from tests.support.helpers import objects
from tests.support.netpol import DEPLOY_TYPES, NETPOL_KINDS, PROVIDERS, config_for, read

MATRIX = [(p, d) for p in PROVIDERS for d in DEPLOY_TYPES]
WILDCARD_ENTITIES = {"all", "host", "cluster", "world", "remote-node", "unmanaged"}


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_every_rule_names_its_peers(provider: str, deploy_type: str) -> None:
    for role, policy in read(config_for(provider, deploy_type)).items():
        for rule in policy.rules:
            assert rule.peers, (role, rule)
            for peer in rule.peers:
                assert not (peer[0] == "entity" and peer[1] in WILDCARD_ENTITIES), (role, peer)
                if peer[0] == "pods":
                    assert peer[2] or peer[1] != "*", f"{role}: pods of every namespace with no label = everything"
                if peer[0] == "cidr" and peer[1] in ("0.0.0.0/0", "::/0"):
                    assert role == "proxies", (role, rule)
                    assert rule.direction == "ingress", (role, rule)


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_raw_objects_have_no_empty_peer_lists(provider: str, deploy_type: str) -> None:
    """Checked on the raw YAML too, so a reader bug cannot hide an empty `from: []` / `to: []`."""
    for obj in objects(config_for(provider, deploy_type)):
        if obj["kind"] not in NETPOL_KINDS:
            continue
        for direction in ("ingress", "egress"):
            for rule in obj["spec"].get(direction, []):
                peer_keys = [k for k in rule if k not in ("ports", "toPorts", "action", "protocol", "destination")]
                if obj["apiVersion"].startswith("projectcalico"):
                    side = rule.get("source" if direction == "ingress" else "destination", {})
                    assert {"nets", "selector", "services"} & side.keys(), rule
                else:
                    assert peer_keys, rule
                    assert all(rule[k] for k in peer_keys), rule
