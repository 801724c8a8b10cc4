"""ValidatingAdmissionPolicy + binding: the API server itself rejects objects that would undo a guarantee
the block gives (tenant policies that drop the WAF, Gateways on ports the PROXY protocol does not cover).

Built-in admission (admissionregistration.k8s.io/v1, GA since Kubernetes 1.30): no webhook to run, and it
fails closed (`failurePolicy: Fail`). Each rule is a CEL expression that must hold, with the message the
API server returns to whoever applied the object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import labels
from ..model import Config
from ..plan import Phase, Step

API_VERSION = "admissionregistration.k8s.io/v1"
# Judge creates, and updates that change the spec: a label, annotation or finalizer written on an object
# that predates the policy (by a controller or a GitOps tool) must not be refused for what it always was.
SPEC_CHANGED = ("specChanged", "request.operation != 'UPDATE' || object.spec != oldObject.spec")


@dataclass(frozen=True)
class Rule:
    """One validation: `expression` must be true, else the request is denied with `message`."""

    expression: str
    message: str


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str


def objects(
    config: Config,
    name: str,
    resource: Resource,
    rules: tuple[Rule, ...],
    *,
    variables: tuple[tuple[str, str], ...] = (),
    match_conditions: tuple[tuple[str, str], ...] = (),
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The policy (cluster-scoped, matching CREATE and spec-changing UPDATE of `resource` in every
    namespace, through any served version of it) and the binding that makes it deny."""
    spec: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": {
            # Equivalent: a request through another served version (Gateway v1beta1) is converted and judged.
            "matchPolicy": "Equivalent",
            "resourceRules": [
                {
                    "apiGroups": [resource.group],
                    "apiVersions": [resource.version],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": [resource.plural],
                }
            ],
        },
    }
    spec["matchConditions"] = [{"name": n, "expression": e} for n, e in (SPEC_CHANGED, *match_conditions)]
    if variables:
        spec["variables"] = [{"name": n, "expression": e} for n, e in variables]
    spec["validations"] = [
        {"expression": rule.expression, "message": rule.message, "reason": "Forbidden"} for rule in rules
    ]
    policy = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": labels.metadata(config, name, "admission"),
        "spec": spec,
    }
    binding = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": labels.metadata(config, name, "admission"),
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    return policy, binding


def steps(policy_and_binding: tuple[dict[str, Any], dict[str, Any]], phase: Phase = Phase.POLICY) -> list[Step]:
    """Policy before binding: a binding to a policy that does not exist yet enforces nothing."""
    return [Step(phase, obj) for obj in policy_and_binding]


def cel_string(value: str) -> str:
    """A CEL string literal (single-quoted; the values the block puts there are Kubernetes names)."""
    if "'" in value or "\\" in value:
        raise ValueError(f"not a plain name: {value!r}")
    return f"'{value}'"
