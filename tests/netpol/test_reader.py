"""The neutral reader reads what each provider enforces, not only the rules: a policy whose rules point in
a direction it does not enforce is ignored there by the CNI (Kubernetes `policyTypes`, Calico `types`) or
allows without denying anything else (Cilium `enableDefaultDeny`), and the reader refuses it.

Mutation check (tools/mutate.py `netpol-policy-types`): leaving `Egress` out of policyTypes in
network_policies.kubernetes() (the egress rules still rendered, so Kubernetes ignores them) turns
test_rendered_policies_enforce_their_rules and every reader-based netpol test red for kubernetes.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import objects
from tests.support.netpol import (
    DEPLOY_TYPES,
    NETPOL_KINDS,
    PROVIDERS,
    PolicyError,
    config_for,
    direction_errors,
    enforced,
    read,
)

MATRIX = [(p, d) for p in PROVIDERS for d in DEPLOY_TYPES]
EGRESS_RULE = {"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}


def k8s(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "p", "namespace": "n"},
        "spec": {"podSelector": {}, **spec},
    }


def calico(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "projectcalico.org/v3", "kind": "NetworkPolicy", "metadata": {"name": "p"}, "spec": spec}


def cilium(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy", "metadata": {"name": "p"}, "spec": spec}


CALICO_EGRESS = {"action": "Allow", "protocol": "TCP", "destination": {"nets": ["10.0.0.0/8"]}}
CILIUM_EGRESS = {"toCIDR": ["10.0.0.0/8"]}


@pytest.mark.parametrize(
    ("obj", "directions"),
    [
        (k8s(), {"ingress"}),  # no policyTypes: Ingress always
        (k8s(egress=[EGRESS_RULE]), {"ingress", "egress"}),  # ... plus Egress with egress rules
        (k8s(policyTypes=["Egress"]), {"egress"}),  # egress denied, no rule needed
        (k8s(policyTypes=["Ingress"], egress=[EGRESS_RULE]), {"ingress"}),
        (calico(egress=[CALICO_EGRESS]), {"egress"}),
        (calico(types=["Ingress"], egress=[CALICO_EGRESS]), {"ingress"}),
        (calico(types=["Ingress", "Egress"]), {"ingress", "egress"}),
        (cilium(egress=[CILIUM_EGRESS]), {"egress"}),
        (cilium(egress=[]), set()),  # an empty section does not apply (Cilium's Rule docs)
        (cilium(egressDeny=[CILIUM_EGRESS]), {"egress"}),
        (cilium(egress=[CILIUM_EGRESS], enableDefaultDeny={"egress": False}), set()),
    ],
    ids=[
        "k8s-default",
        "k8s-default-egress",
        "k8s-egress-only",
        "k8s-egress-ignored",
        "calico-default-egress",
        "calico-egress-ignored",
        "calico-both",
        "cilium-egress",
        "cilium-empty",
        "cilium-deny",
        "cilium-no-default-deny",
    ],
)
def test_enforced_directions(obj: dict[str, Any], directions: set[str]) -> None:
    assert enforced(obj) == directions


@pytest.mark.parametrize(
    "obj",
    [
        k8s(policyTypes=["Ingress"], egress=[EGRESS_RULE]),
        calico(types=["Ingress"], egress=[CALICO_EGRESS]),
        cilium(egress=[CILIUM_EGRESS], enableDefaultDeny={"egress": False}),
    ],
    ids=["kubernetes", "calico", "cilium"],
)
def test_rules_in_a_direction_not_enforced_are_an_error(obj: dict[str, Any]) -> None:
    (error,) = direction_errors(obj)
    assert "egress rules present but egress is not enforced" in error


def test_read_refuses_such_a_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = k8s(policyTypes=["Ingress"], egress=[EGRESS_RULE])
    monkeypatch.setattr("tests.support.netpol.objects", lambda cfg: [bad])
    with pytest.raises(PolicyError, match="egress is not enforced"):
        read({})


@pytest.mark.parametrize(("provider", "deploy_type"), MATRIX)
def test_rendered_policies_enforce_their_rules(provider: str, deploy_type: str) -> None:
    """Every rendered policy enforces each direction it has rules in; the proxies', the controller's and the
    WAF's make their pods default-deny both ways (certgen has egress rules only: nothing may reach it)."""
    cfg = {**config_for(provider, deploy_type), "waf": {"enabled": True}}
    for obj in objects(cfg):
        if obj["kind"] in NETPOL_KINDS:
            assert direction_errors(obj) == [], obj
    policies = read(cfg)
    for role in ("proxies", "controller", "waf"):
        assert policies[role].enforces == {"ingress", "egress"}, (role, policies[role])
    assert policies["certgen"].enforces == {"egress"}
