"""Invariant: the Namespace is in the plan exactly when the block owns it (create_namespace)."""

from __future__ import annotations

from tests.support.helpers import find, kinds, plan


def test_created_by_default() -> None:
    assert find({}, "Namespace")["metadata"]["name"] == "envoy-gateway-system"
    assert plan({}).to_dict()["namespace"] == {"name": "envoy-gateway-system", "create": True}


def test_not_owned_when_create_namespace_false() -> None:
    assert "Namespace" not in kinds({"create_namespace": False})
    assert plan({"create_namespace": False}).namespace.create is False
