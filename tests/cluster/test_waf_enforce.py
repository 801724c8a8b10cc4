"""waf.enforce on the REAL kube-apiserver: the rendered ValidatingAdmissionPolicy + binding are accepted
(and pass the API server's own type checking) and deny, with their message, exactly the tenant policies
that would take the WAF off a route; the others are created. Also on UPDATE (a policy that drops its
mergeType), while a policy that predates enforcement may still get labels but no spec change.

Needs only the API server of the `cluster` fixture (no Envoy Gateway controller, no registry), the
EnvoyExtensionPolicy CRD from ../shared/crds and the block's rendered objects. The cases are
tests/support/tenant_objects.py, the same ones tests/unit/test_waf_enforce.py evaluates with a CEL engine.

Mutation checks (done once, against a standalone harness): rendering the first validation with
`has(object.spec.mergeTyp)` (a misspelt field) made check_enforcement fail: the API server's type checking
did not flag it (status.typeChecking stays empty for CRD fields here), but every admitted route case was
then denied. Dropping the specChanged match condition (admission.SPEC_CHANGED) made it fail on the label
written to the policy that predates enforcement.
"""

from __future__ import annotations

from tests.harness.api import Api
from tests.harness.cluster import Cluster
from tests.support import apiserver
from tests.support.apiserver import request, wait
from tests.support.gate import envoy_gateway_crds
from tests.support.helpers import objects, with_gateway
from tests.support.tenant_objects import CASES, MERGE_HINT, TENANT_NAMESPACE

ON = with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}, "enforce": True}})
EEPS = f"/apis/gateway.envoyproxy.io/v1alpha1/namespaces/{TENANT_NAMESPACE}/envoyextensionpolicies"


def check_enforcement(api: Api) -> None:
    """The whole scenario against any API server the admin client reaches; leaves it as it found it."""
    crd_file = envoy_gateway_crds() / "gateway.envoyproxy.io_envoyextensionpolicies.yaml"
    crd = apiserver.crd(crd_file, "envoyextensionpolicies.gateway.envoyproxy.io")
    admission = [
        o for o in objects(ON) if o["kind"] in apiserver.PLURAL and o["metadata"]["name"] == "envoy-waf-enforce"
    ]
    assert [o["kind"] for o in admission] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    legacy = next(obj for _, obj, expected in CASES if expected == MERGE_HINT)
    legacy = {**legacy, "metadata": {**legacy["metadata"], "name": "legacy"}}
    created_crd = False
    try:
        created_crd = apiserver.ensure_crd(api, crd)
        assert request(api, "POST", "/api/v1/namespaces", {"metadata": {"name": TENANT_NAMESPACE}})[0] == 201
        # A tenant policy from before enforcement (it would be denied today).
        assert request(api, "POST", EEPS, legacy)[0] == 201
        apiserver.create_admission(api, admission)
        # The binding takes effect once the API server's admission plugin has seen it: probe with a dry run.
        denied = next(obj for _, obj, expected in CASES if expected)
        wait(lambda: request(api, "POST", EEPS, denied, dryRun="All")[0] == 403, "admission policy in effect")

        for case, obj, expected in CASES:
            code, body = request(api, "POST", EEPS, obj)
            if expected is None:
                assert code == 201, (case, code, body.get("message"))
            else:
                assert code == 403, (case, code, body.get("message"))
                assert body["reason"] == "Forbidden", (case, body)
                assert "ValidatingAdmissionPolicy 'envoy-waf-enforce'" in body["message"], (case, body["message"])
                assert expected in body["message"], (case, body["message"])

        # UPDATE too: an admitted route policy cannot drop its mergeType afterwards.
        admitted = next(obj for _, obj, expected in CASES if expected is None and "mergeType" in obj["spec"])
        code, body = request(api, "PATCH", f"{EEPS}/{admitted['metadata']['name']}", {"spec": {"mergeType": None}})
        assert code == 403, (code, body.get("message"))
        assert MERGE_HINT in body["message"]
        assert api.get(f"{EEPS}/{admitted['metadata']['name']}")["spec"]["mergeType"] == "StrategicMerge"

        # The policy from before: metadata writes (controllers, GitOps) pass, a spec change is judged.
        code, body = request(api, "PATCH", f"{EEPS}/legacy", {"metadata": {"labels": {"team": "a"}}})
        assert code == 200, (code, body.get("message"))
        code, body = request(api, "PATCH", f"{EEPS}/legacy", {"spec": {"lua": [*legacy["spec"]["lua"]] * 2}})
        assert code == 403, (code, body.get("message"))
        assert MERGE_HINT in body["message"]
    finally:
        apiserver.remove_tenant_test(api, TENANT_NAMESPACE, admission, crd if created_crd else None)


def test_waf_enforcement_on_the_api_server(cluster: Cluster) -> None:
    check_enforcement(cluster.api)
