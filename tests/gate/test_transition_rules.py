"""The gate evaluates CEL rules on creates only; rules that read `oldSelf` run on updates, which only the
real API server does. This pins which such rules the kinds the block renders carry, so that each is run for
real: today one, GatewayClass spec.controllerName `self == oldSelf` (both Gateway API channels), run by
tests/cluster/test_lifecycle.py (an update that keeps it admitted, one that changes it refused). A CRD
update that brings another makes this red until a cluster test runs it too (or docs/testing.md lists it as
not covered)."""

from __future__ import annotations

import pytest

from envoy_block.lifecycle import OWNED_KINDS
from tests.support import gate
from tests.support.crdgate import transition_rules

RUN_ON_THE_API_SERVER = {("GatewayClass", "spec.controllerName", "self == oldSelf")}


@pytest.mark.parametrize("channel", ["standard", "experimental"])
def test_the_blocks_transition_rules_are_the_ones_the_cluster_tests_run(channel: str) -> None:
    crds = gate.crd_gate(channel)
    found = set()
    for api_version, kind, _ in OWNED_KINDS:
        group, _, version = api_version.rpartition("/")
        if group in gate.BUILTIN_GROUPS:
            continue  # built-in kinds have no CRD (kubernetes-validate checks them)
        crd = crds.versions[(group, version, kind)]
        found |= {(kind, path, rule) for path, rule in transition_rules(crd.schema)}
    assert found == RUN_ON_THE_API_SERVER
