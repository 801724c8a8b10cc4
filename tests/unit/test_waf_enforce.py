"""Invariant: with waf.enforce the API server rejects every EnvoyExtensionPolicy that would take the WAF off
a route, tells the tenant how to merge instead, and lets everything else through.

Why a tenant can switch the WAF off (Envoy Gateway v1.9.0, internal/gatewayapi/envoyextensionpolicy.go):
a route-level policy without spec.mergeType replaces the Gateway-level one on its routes (~502-511; the
Gateway policy skips routes that already have extensions, ~1264-1271), and with a mergeType the merge
replaces lists (internal/utils/merge.go), so a route policy's own extProc replaces the WAF's entry. The
Gateway-level policy covers only that Gateway's HTTP listeners (~1253-1262): not TLS passthrough, not
other Gateways merged onto the class - those were never WAF-protected, and the admission policy leaves
their policies alone.

The rendered ValidatingAdmissionPolicy is evaluated here with a CEL engine (tests/support/admission.py)
on the shared tenant cases (tests.support.tenant_objects.py); tests/cluster/test_waf_enforce.py sends the
same cases to the real API server.

Mutation checks (done once): dropping the targetSelectors clause of `targetsRoutes` in waf.enforcement
turned test_admission[selector-routes] red; dropping the specChanged match condition turned
test_updates_are_judged_when_the_spec_changes red; dropping the extProc validation turned
test_admission[route-merged-ext-proc] red; adding TCPRoute to waf.ROUTE_KINDS turned test_admission[tcproute]
red; matching the `envoyextensionpolicies/status` subresource too turned
test_scoped_to_tenant_writes_of_extension_policies red.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support import gate
from tests.support.admission import denials, judged
from tests.support.helpers import find, objects, problems, with_gateway
from tests.support.tenant_objects import CASES, MERGE_HINT

# Judged with the gate's tools (kubernetes-validate, CEL: jsonschema 4), which Polycrate's image Python cannot
# have: not in make unit-image.
pytestmark = pytest.mark.not_in_image

ON = with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}, "enforce": True}})


def _policy(cfg: dict[str, Any] = ON) -> dict[str, Any]:
    return find(cfg, "ValidatingAdmissionPolicy", "envoy-waf-enforce")


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_admission(obj: dict[str, Any], expected: str | None) -> None:
    judged(_policy(), obj, expected)


@pytest.mark.parametrize(("obj", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_cases_are_objects_the_crd_accepts(obj: dict[str, Any], expected: str | None) -> None:
    """A denial must be the admission policy's doing, never a schema error in the test input."""
    result = gate.validate(obj)
    assert result.ok, result.errors


def test_the_message_says_how_to_merge_and_what_is_at_stake() -> None:
    (message,) = denials(_policy(), CASES[6][1])
    assert MERGE_HINT in message
    assert "envoy-waf in namespace envoy-gateway-system" in message


def test_the_block_does_not_lock_itself_out() -> None:
    """The block's own Gateway-level WAF policy passes its own admission policy."""
    assert denials(_policy(), find(ON, "EnvoyExtensionPolicy")) == []


def test_scoped_to_tenant_writes_of_extension_policies() -> None:
    """Only creates and updates of EnvoyExtensionPolicies, never their status (the controller writes status
    of policies that existed before enforcement), in every namespace, failing closed."""
    spec = _policy()["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["matchConstraints"] == {
        "matchPolicy": "Equivalent",
        "resourceRules": [
            {
                "apiGroups": ["gateway.envoyproxy.io"],
                "apiVersions": ["v1alpha1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": ["envoyextensionpolicies"],
            }
        ],
    }


def test_updates_are_judged_when_the_spec_changes() -> None:
    """Dropping mergeType later is denied; a label written on a policy that predates enforcement is not
    (controllers and GitOps tools touch metadata of objects they did not create)."""
    merged = next(obj for _, obj, expected in CASES if expected is None and "mergeType" in obj["spec"])
    unmerged = {**merged, "spec": {k: v for k, v in merged["spec"].items() if k != "mergeType"}}
    assert MERGE_HINT in denials(_policy(), unmerged, old=merged)[0]
    relabelled = {**unmerged, "metadata": {**unmerged["metadata"], "labels": {"argocd.argoproj.io/instance": "a"}}}
    assert denials(_policy(), relabelled, old=unmerged) == []


def test_the_binding_denies_with_this_policy() -> None:
    binding = find(ON, "ValidatingAdmissionPolicyBinding", "envoy-waf-enforce")
    assert binding["spec"] == {"policyName": "envoy-waf-enforce", "validationActions": ["Deny"]}


def test_policy_applied_before_its_binding() -> None:
    order = [(o["kind"], o["metadata"]["name"]) for o in objects(ON)]
    assert order.index(("ValidatingAdmissionPolicy", "envoy-waf-enforce")) < order.index(
        ("ValidatingAdmissionPolicyBinding", "envoy-waf-enforce")
    )


def test_both_pass_the_gate() -> None:
    for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"):
        result = gate.validate(find(ON, kind, "envoy-waf-enforce"))
        assert result.ok, (kind, result.errors)


def test_absent_unless_asked() -> None:
    off = with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}}})
    assert not [o for o in objects(off) if o["metadata"]["name"] == "envoy-waf-enforce"]


def test_enforce_needs_the_waf() -> None:
    found = problems({"waf": {"enforce": True}})
    assert any(p.startswith("config.waf.enforce: ") and "waf.enabled: true" in p for p in found), found


def test_names_follow_the_block_instance() -> None:
    from envoy_block import builder

    other = builder.plan_from_block({"name": "edge", "config": ON})
    names = {s.name for s in other.steps if s.kind.startswith("ValidatingAdmissionPolicy") and "waf" in s.name}
    assert names == {"edge-waf-enforce"}
