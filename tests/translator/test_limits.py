"""What the translator gate cannot prove, pinned so the day it changes is noticed, and how it fails when
it cannot run at all (never a skip)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envoy_block.components.gatewayclasses import CONTROLLER_NAME
from tests.support.helpers import load, with_gateway

from . import egctl, gate, tenant

pytestmark = pytest.mark.translator


def _gateway(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "gatewayClassName": "eg-shared",
            "listeners": [{"name": "http", "protocol": "HTTP", "port": 80, "allowedRoutes": {"namespaces": {}}}],
        },
    }


def test_egctl_does_not_merge_gateways() -> None:
    """Pins a limit of egctl v1.9.0 (envoyproxy/gateway#3937, open): `x translate` never sets the
    translator's MergeGateways, whatever the EnvoyProxy says, so two Gateways of a mergeGateways class with
    the same listener (which the controller would mark Conflicted) come out as two separate, accepted xDS
    sets. The gate therefore cannot prove eg-shared's merge; only the real controller merges. If this test
    fails, egctl has learned to merge: replace it with the merged-listener assertions."""
    gateway_class = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "GatewayClass",
        "metadata": {"name": "eg-shared"},
        "spec": {
            "controllerName": CONTROLLER_NAME,
            "parametersRef": {"group": "gateway.envoyproxy.io", "kind": "EnvoyProxy", "name": "p", "namespace": "eg"},
        },
    }
    proxy = {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyProxy",
        "metadata": {"name": "p", "namespace": "eg"},
        "spec": {"mergeGateways": True},
    }
    verdict = gate.run([gateway_class, proxy, _gateway("a", "eg"), _gateway("b", "tenant")])
    assert sorted(verdict.xds) == ["eg/a", "tenant/b"]
    conflicted = [c for c in verdict.checks if c.condition == "Conflicted"]
    assert not conflicted, conflicted
    listeners = [c for c in verdict.checks if c.subject.endswith("listener http") and c.condition == "Accepted"]
    assert len(listeners) == 2
    assert all(c.ok for c in listeners)


def test_missing_egctl_fails_with_a_clear_message(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Guards against a silent skip: without egctl the gate raises, naming the path and `make tools`."""
    monkeypatch.setattr(egctl, "EGCTL", tmp_path / "no-egctl")
    egctl.egctl.cache_clear()
    try:
        with pytest.raises(egctl.TranslatorUnavailableError, match=r"no-egctl.*make tools"):
            egctl.translate([])
    finally:
        egctl.egctl.cache_clear()


def test_egctl_refusing_input_is_an_error() -> None:
    """Guards the runner: input egctl refuses (here a Gateway without listeners, against its CRD schema)
    raises with egctl's own message instead of reading as an empty, green translation."""
    broken = _gateway("a", "eg")
    broken["spec"]["listeners"] = []
    with pytest.raises(egctl.TranslatorError, match="local validation error"):
        egctl.translate([broken])


def test_selector_listeners_are_refused_plainly() -> None:
    """egctl's loader keeps only a Namespace's name, so a listener admitting routes by namespace selector
    can never get a route in the gate; the tenant side says so instead of producing a false red."""
    listener = {
        "name": "http",
        "protocol": "HTTP",
        "port": 80,
        "allowed_routes_namespaces": "Selector",
        "allowed_routes_selector": {"match_labels": {"team": "a"}},
    }
    config = load(with_gateway({"default_gateway": {"listeners": [listener]}}))
    with pytest.raises(tenant.TenantError, match="Selector"):
        tenant.objects(config)
