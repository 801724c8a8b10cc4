"""Invariant: with tenant_guards.envoy_proxy (on by default) the API server refuses every EnvoyProxy a tenant
could escalate through (outside the block's namespace, with patch fields, or reusing the controller's names,
service accounts, Secrets or ConfigMap: Envoy Gateway v1.9.2's security fixes, which v1.9.1 lacks), and
admits the block's own EnvoyProxies and the platform's typed ones.

The rendered policy is evaluated with a CEL engine (tests/support/admission.py) on the shared cases
(tests/support/tenant_objects.py ENVOY_PROXY_CASES); tests/cluster/test_tenant_guards.py sends the same cases
to the real API server. Mutation: tenant-guard-envoyproxy-patch (tools/mutate.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from envoy_block import builder, proxy_ports
from envoy_block.components import controller
from tests.support import gate
from tests.support.admission import denials, judged
from tests.support.helpers import block, find, kinds, load, objects
from tests.support.tenant_objects import BACKEND_CASES, ENVOY_PROXY_CASES, NAMESPACE_HINT, PATCH_HINT

# Judged with the gate's tools (kubernetes-validate, CEL: jsonschema 4), which Polycrate's image Python cannot
# have: not in make unit-image.
pytestmark = pytest.mark.not_in_image

NAME = "envoy-envoyproxy-guard"


def _policy(cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    return find(cfg or {}, "ValidatingAdmissionPolicy", NAME)


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in ENVOY_PROXY_CASES], ids=[c[0] for c in ENVOY_PROXY_CASES])
def test_admission(obj: dict[str, Any], expected: str | None) -> None:
    judged(_policy(), obj, expected)


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in ENVOY_PROXY_CASES], ids=[c[0] for c in ENVOY_PROXY_CASES])
def test_cases_are_objects_the_crd_accepts(obj: dict[str, Any], expected: str | None) -> None:
    """A denial must be the admission policy's doing, never a schema error in the test input."""
    result = gate.validate(obj)
    assert result.ok, result.errors


@pytest.mark.parametrize(
    "cfg",
    [
        {},
        {"data_plane": {"kind": "DaemonSet"}},
        {
            "data_plane": {
                "replicas": 3,
                "autoscaling": {"enabled": True, "min_replicas": 2, "max_replicas": 4},
                "resources": {"requests": {"cpu": "100m"}},
            }
        },
        {"namespace": "edge"},
        {"waf": {"enabled": True}, "default_gateway": {"enabled": True}},
    ],
    ids=["default", "daemonset", "autoscaled", "other-namespace", "waf"],
)
def test_the_blocks_own_envoy_proxies_pass(cfg: dict[str, Any]) -> None:
    """No exemption exists, so the block's objects must obey every rule, in whatever namespace it runs."""
    own = [o for o in objects(cfg) if o["kind"] == "EnvoyProxy"]
    assert len(own) == 2
    for obj in own:
        assert denials(_policy(cfg), obj) == [], obj["metadata"]["name"]


def test_a_moved_namespace_moves_the_rule() -> None:
    policy = _policy({"namespace": "edge"})
    tenant = {**ENVOY_PROXY_CASES[0][1], "metadata": {"name": "x", "namespace": "envoy-gateway-system"}}
    (message,) = denials(policy, tenant)
    assert "only the platform's namespace edge may hold them" in message


def test_on_by_default_and_switchable() -> None:
    assert "ValidatingAdmissionPolicy" in kinds({})
    off = {"tenant_guards": {"envoy_proxy": False}}
    assert not [o for o in objects(off) if o["metadata"]["name"] == NAME]


def test_the_guard_comes_before_the_blocks_envoy_proxies() -> None:
    order = [(o["kind"], o["metadata"]["name"]) for o in objects({})]
    assert order.index(("ValidatingAdmissionPolicyBinding", NAME)) < order.index(("EnvoyProxy", "eg-shared"))


def test_updates_are_judged_only_when_the_spec_changes() -> None:
    """A patch added later is refused; a label written to an EnvoyProxy that predates the guard passes."""
    old = ENVOY_PROXY_CASES[0][1]
    patched = {
        **old,
        "spec": {"provider": {"type": "Kubernetes", "kubernetes": {"envoyService": {"patch": {"value": {}}}}}},
    }
    assert [PATCH_HINT in m for m in denials(_policy(), patched, old)] == [True]
    legacy = {**old, "metadata": {**old["metadata"], "namespace": "tenant-waf"}}
    labelled = {**legacy, "metadata": {**legacy["metadata"], "labels": {"team": "a"}}}
    assert denials(_policy(), labelled, legacy) == []
    assert [NAMESPACE_HINT in m for m in denials(_policy(), legacy)] == [True]


def test_the_reserved_names_are_the_charts() -> None:
    """The names gateway-helm v1.9.1 gives the controller (templates: the Deployment, ServiceAccount and
    Secret envoy-gateway, the ConfigMap envoy-gateway-config, certgen's '<fullname>-certgen')."""
    names = controller.reserved_names()
    assert names["names"] == ("envoy-gateway", "envoy-gateway-config", "envoy-gateway-gateway-helm-certgen")
    assert "envoy-gateway" in names["secrets"]
    assert names["configMaps"] == ("envoy-gateway-config",)


def test_the_wafs_names_are_the_ones_it_renders() -> None:
    """The guard reserves the names the WAF's objects carry in the block's namespace, and the service account
    its pods run as (none named: the namespace's default), for whichever block name."""
    for block_name in ("envoy", "edge"):
        rendered = [s.obj for s in builder.plan_from_block(block({"waf": {"enabled": True}}, block_name)).ordered()]
        waf_objects = [o for o in rendered if o["metadata"]["name"] == f"{block_name}-waf"]
        assert {o["kind"] for o in waf_objects} == {"Deployment", "Service", "ConfigMap", "PodDisruptionBudget"}
        (deployment,) = [o for o in waf_objects if o["kind"] == "Deployment"]
        account = deployment["spec"]["template"]["spec"].get("serviceAccountName", "default")
        (policy,) = [
            o
            for o in rendered
            if o["kind"] == "ValidatingAdmissionPolicy" and o["metadata"]["name"] == f"{block_name}-envoyproxy-guard"
        ]
        reserved = next(v["expression"] for v in policy["spec"]["variables"] if v["name"] == "names")
        for name in {o["metadata"]["name"] for o in waf_objects} | {account}:
            assert f"'{name}'" in reserved, (block_name, name, reserved)


def test_switching_it_off_on_v1_9_1_warns() -> None:
    warnings = load({"tenant_guards": {"envoy_proxy": False}}).warnings
    assert any(w.startswith("config.tenant_guards.envoy_proxy: false on Envoy Gateway v1.9.1") for w in warnings)
    fixed = {
        "tenant_guards": {"envoy_proxy": False},
        "chart": {"version": "v1.9.2"},
        "image": {"controller": {"tag": "v1.9.2"}},
    }
    assert not [w for w in load(fixed).warnings if "tenant_guards" in w]


BACKEND_GUARD = "envoy-backend-guard"


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in BACKEND_CASES], ids=[c[0] for c in BACKEND_CASES])
def test_backend_admission(obj: dict[str, Any], expected: str | None) -> None:
    judged(find({}, "ValidatingAdmissionPolicy", BACKEND_GUARD), obj, expected)


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in BACKEND_CASES], ids=[c[0] for c in BACKEND_CASES])
def test_backend_cases_are_objects_the_crd_accepts(obj: dict[str, Any], expected: str | None) -> None:
    result = gate.validate(obj)
    assert result.ok, result.errors


def test_the_backend_guard_names_the_proxies_ports_from_the_shared_fact() -> None:
    policy = find({}, "ValidatingAdmissionPolicy", BACKEND_GUARD)
    ports = next(v["expression"] for v in policy["spec"]["variables"] if v["name"] == "proxyPorts")
    assert ports == "[" + ", ".join(str(p) for p in sorted(proxy_ports.RESERVED)) + "]"


def test_the_backend_guard_is_switchable() -> None:
    assert not [o for o in objects({"tenant_guards": {"backends": False}}) if o["metadata"]["name"] == BACKEND_GUARD]
    assert [o["kind"] for o in objects({}) if o["metadata"]["name"] == BACKEND_GUARD] == [
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
    ]
