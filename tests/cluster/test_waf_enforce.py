"""waf.enforce on the REAL kube-apiserver: the rendered ValidatingAdmissionPolicy + binding type-check
against the real EnvoyExtensionPolicy CRD and deny, with their message, exactly the tenant policies that
would take the WAF off a route; the others are created. Also on UPDATE (a policy that drops its mergeType),
while a policy that predates enforcement may still get labels but no spec change.

Needs only the API server: the `cluster` fixture (etcd, kube-apiserver, controller-manager, kwok; no
Envoy Gateway controller, no registry, no fixed host ports), the EnvoyExtensionPolicy CRD from
../shared/crds and the block's rendered objects. The cases are tests/support/tenant_policies.py, the same
ones tests/unit/test_waf_enforce.py evaluates with a CEL engine.

Mutation check (done once, against a standalone harness): rendering the first validation with
`has(object.spec.mergeTyp)` (a misspelt field) made check_enforcement fail: the API server's type checking
did not flag it (status.typeChecking stays empty for CRD fields here), but every admitted route case was
then denied. Dropping the specChanged match condition (admission.SPEC_CHANGED) made it fail on the label
written to the policy that predates enforcement.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import yaml

from tests.harness.api import Api, ApiError
from tests.harness.cluster import Cluster
from tests.support.gate import shared_dir
from tests.support.helpers import objects, with_gateway
from tests.support.tenant_policies import CASES, MERGE_HINT, TENANT_NAMESPACE

ON = with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}, "enforce": True}})
CRD = "gateway.envoyproxy.io_envoyextensionpolicies.yaml"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
PLURAL = {
    "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
    "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
}
EEPS = f"/apis/gateway.envoyproxy.io/v1alpha1/namespaces/{TENANT_NAMESPACE}/envoyextensionpolicies"


def _request(api: Api, method: str, path: str, body: Any = None, **params: str) -> tuple[int, dict[str, Any]]:
    """Status code and the whole JSON answer (ApiError cuts long denial messages)."""
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else None
    resp = api.session.request(
        method, api.url + path, json=body, params=params or None, headers=headers, timeout=30, verify=api.ca
    )
    return resp.status_code, (resp.json() if resp.content else {})


def _wait(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"{what}: not within {timeout:.0f}s")


def _established(api: Api, name: str) -> bool:
    crd = api.get(f"{CRDS}/{name}")
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def _delete(api: Api, path: str) -> None:
    try:
        api.delete(path)
    except ApiError as err:
        if err.status != 404:
            raise


def check_enforcement(api: Api) -> None:
    """The whole scenario against any API server the admin client reaches; leaves it as it found it."""
    crd = yaml.safe_load((shared_dir() / "crds" / "envoy-gateway" / CRD).read_text(encoding="utf-8"))
    crd_name = crd["metadata"]["name"]
    created_crd = _request(api, "POST", CRDS, crd)[0] == 201
    admission = [o for o in objects(ON) if o["kind"] in PLURAL]
    assert [o["kind"] for o in admission] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    policy_path = f"{ADMISSION}/{PLURAL['ValidatingAdmissionPolicy']}/{admission[0]['metadata']['name']}"
    legacy = next(obj for _, obj, expected in CASES if expected == MERGE_HINT)
    legacy = {**legacy, "metadata": {**legacy["metadata"], "name": "legacy"}}
    try:
        _wait(lambda: _established(api, crd_name), "EnvoyExtensionPolicy CRD Established")
        assert _request(api, "POST", "/api/v1/namespaces", {"metadata": {"name": TENANT_NAMESPACE}})[0] == 201
        # A tenant policy from before enforcement (it would be denied today).
        assert _request(api, "POST", EEPS, legacy)[0] == 201
        for obj in admission:
            code, body = _request(api, "POST", f"{ADMISSION}/{PLURAL[obj['kind']]}", obj)
            assert code == 201, (obj["kind"], code, body.get("message"))
        # Whatever the API server's own type checking of the expressions reports must be clean.
        _wait(lambda: (api.get(policy_path).get("status") or {}).get("observedGeneration"), "type checking done")
        status = api.get(policy_path)["status"]
        assert not (status.get("typeChecking") or {}).get("expressionWarnings"), status
        # The binding takes effect once the API server's admission plugin has seen it: probe with a dry run.
        denied = next(obj for _, obj, expected in CASES if expected)
        _wait(lambda: _request(api, "POST", EEPS, denied, dryRun="All")[0] == 403, "admission policy in effect")

        for case, obj, expected in CASES:
            code, body = _request(api, "POST", EEPS, obj)
            if expected is None:
                assert code == 201, (case, code, body.get("message"))
            else:
                assert code == 403, (case, code, body.get("message"))
                assert body["reason"] == "Forbidden", (case, body)
                assert "ValidatingAdmissionPolicy 'envoy-waf-enforce'" in body["message"], (case, body["message"])
                assert expected in body["message"], (case, body["message"])

        # UPDATE too: an admitted route policy cannot drop its mergeType afterwards.
        admitted = next(obj for _, obj, expected in CASES if expected is None and "mergeType" in obj["spec"])
        code, body = _request(api, "PATCH", f"{EEPS}/{admitted['metadata']['name']}", {"spec": {"mergeType": None}})
        assert code == 403, (code, body.get("message"))
        assert MERGE_HINT in body["message"]
        assert api.get(f"{EEPS}/{admitted['metadata']['name']}")["spec"]["mergeType"] == "StrategicMerge"

        # The policy from before: metadata writes (controllers, GitOps) pass, a spec change is judged.
        code, body = _request(api, "PATCH", f"{EEPS}/legacy", {"metadata": {"labels": {"team": "a"}}})
        assert code == 200, (code, body.get("message"))
        code, body = _request(api, "PATCH", f"{EEPS}/legacy", {"spec": {"lua": [*legacy["spec"]["lua"]] * 2}})
        assert code == 403, (code, body.get("message"))
        assert MERGE_HINT in body["message"]
    finally:
        _delete(api, f"/api/v1/namespaces/{TENANT_NAMESPACE}")
        # The namespace controller removes the tenant policies while their CRD still exists.
        _wait(lambda: _request(api, "GET", f"/api/v1/namespaces/{TENANT_NAMESPACE}")[0] == 404, "namespace gone", 120)
        for obj in reversed(admission):
            _delete(api, f"{ADMISSION}/{PLURAL[obj['kind']]}/{obj['metadata']['name']}")
        if created_crd:
            _delete(api, f"{CRDS}/{crd_name}")


def test_waf_enforcement_on_the_api_server(cluster: Cluster) -> None:
    check_enforcement(cluster.api)
