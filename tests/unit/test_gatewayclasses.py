"""Invariant: each GatewayClass points at its own EnvoyProxy with group, kind, name AND namespace
(Envoy Gateway looks in `default` when the namespace is missing, and the class is never accepted)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.helpers import MISSING, at, find

CASES: list[tuple[str, dict[str, Any], str, str, Any]] = [
    ("controller", {}, "eg-shared", "spec.controllerName", "gateway.envoyproxy.io/gatewayclass-controller"),
    ("ref-group", {}, "eg-shared", "spec.parametersRef.group", "gateway.envoyproxy.io"),
    ("ref-kind", {}, "eg-dedicated", "spec.parametersRef.kind", "EnvoyProxy"),
    ("ref-name-shared", {}, "eg-shared", "spec.parametersRef.name", "eg-shared"),
    ("ref-name-dedicated", {}, "eg-dedicated", "spec.parametersRef.name", "eg-dedicated"),
    ("ref-namespace", {"namespace": "edge"}, "eg-dedicated", "spec.parametersRef.namespace", "edge"),
    ("renamed", {"gatewayclass": {"shared": {"name": "public"}}}, "public", "spec.parametersRef.name", "public"),
    ("cluster-scoped", {}, "eg-shared", "metadata.namespace", MISSING),
]


@pytest.mark.parametrize(("config", "name", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_gateway_class(config: dict[str, Any], name: str, path: str, expected: Any) -> None:
    assert at(find(config, "GatewayClass", name), path) == expected
