"""Every rendered network policy, for each provider and deploy type, passes the real CRDs (Cilium,
Calico projectcalico.org/v3) or kubernetes-validate strict (NetworkPolicy), and enforces every direction
it has rules in (netpol.direction_errors: rules the CNI would ignore are an error here too)."""

from __future__ import annotations

import pytest

from tests.support import gate
from tests.support.helpers import objects
from tests.support.netpol import DEPLOY_TYPES, NETPOL_KINDS, PROVIDERS, config_for, direction_errors


@pytest.mark.parametrize(("provider", "deploy_type"), [(p, d) for p in PROVIDERS for d in DEPLOY_TYPES])
def test_policies_pass_the_gate(provider: str, deploy_type: str) -> None:
    cfg = config_for(
        provider,
        deploy_type,
        extra_ingress_from=[{"cidr": "192.0.2.0/24"}],
        extra_egress_to=[{"cidr": "10.20.0.0/16", "ports": [8080, 8443]}],
    )
    rendered = [o for o in objects(cfg) if o["kind"] in NETPOL_KINDS]
    assert len(rendered) == 3
    for obj in rendered:
        result = gate.validate(obj)
        errors = result.errors + direction_errors(obj)
        assert not errors, (obj["kind"], obj["metadata"]["name"], errors)
