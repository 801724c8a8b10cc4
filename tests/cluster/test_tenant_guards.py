"""tenant_guards.envoy_proxy and tenant_guards.backends on the REAL kube-apiserver: the rendered
ValidatingAdmissionPolicies + bindings are accepted (with no type-checking warning) and deny, with their
message, every tenant EnvoyProxy of tests/support/tenant_objects.py ENVOY_PROXY_CASES that
tests/unit/test_tenant_guards.py denies with a CEL engine, and admit the others and the block's own two
EnvoyProxies. On UPDATE: a patch field added to an admitted EnvoyProxy is denied. The same for Backends
(BACKEND_CASES): the proxies' own pod, node and ports, cloud metadata, sockets and DynamicResolver refused,
a tenant's own addresses admitted, and an admitted Backend moved to 169.254.169.254 by update refused.

Needs only the API server (the `cluster` fixture: no Envoy Gateway controller, no registry) and the
EnvoyProxy CRD of Envoy Gateway v1.9.1 (../shared). The block is rendered into a namespace of its own so a
real envoy-gateway-system is never touched; the cases' block namespace is moved there.
"""

from __future__ import annotations

import copy
from typing import Any

from tests.harness.api import Api
from tests.harness.cluster import Cluster
from tests.support import apiserver
from tests.support.apiserver import request
from tests.support.gate import envoy_gateway_crds
from tests.support.helpers import objects
from tests.support.tenant_objects import (
    ADDRESS_HINT,
    BACKEND_CASES,
    BLOCK_NAMESPACE,
    ENVOY_PROXY_CASES,
    PATCH_HINT,
    TENANT_NAMESPACE,
)

GUARD_NAMESPACE = "tenant-guard-block"
ENVOY_PROXIES = "/apis/gateway.envoyproxy.io/v1alpha1/namespaces/{ns}/envoyproxies"


def _moved(obj: dict[str, Any]) -> dict[str, Any]:
    """A case with the block's namespace moved to GUARD_NAMESPACE."""
    out = copy.deepcopy(obj)
    if out["metadata"]["namespace"] == BLOCK_NAMESPACE:
        out["metadata"]["namespace"] = GUARD_NAMESPACE
    return out


def check_envoy_proxy_guard(api: Api) -> list[str]:
    """The whole scenario against any API server the admin client reaches; leaves it as it found it. Returns
    one line per request and its answer (what the test proved, for the log)."""
    crd = apiserver.crd(
        envoy_gateway_crds() / "gateway.envoyproxy.io_envoyproxies.yaml", "envoyproxies.gateway.envoyproxy.io"
    )
    rendered = objects({"namespace": GUARD_NAMESPACE})
    admission = [
        o for o in rendered if o["kind"] in apiserver.PLURAL and o["metadata"]["name"] == "envoy-envoyproxy-guard"
    ]
    assert len(admission) == 2
    own = [o for o in rendered if o["kind"] == "EnvoyProxy"]
    assert len(own) == 2
    seen: list[str] = []
    created_crd = False
    try:
        denied = next(_moved(obj) for _, obj, expected in ENVOY_PROXY_CASES if expected)
        probe = (ENVOY_PROXIES.format(ns=denied["metadata"]["namespace"]), denied)
        created_crd = apiserver.start_tenant_test(api, crd, [TENANT_NAMESPACE, GUARD_NAMESPACE], admission, probe)

        for obj in own:
            code, body = request(api, "POST", ENVOY_PROXIES.format(ns=GUARD_NAMESPACE), obj)
            assert code == 201, ("the block's own EnvoyProxy", obj["metadata"]["name"], code, body.get("message"))
            seen.append(f"block's own {obj['metadata']['name']}: {code}")
        for case, original, expected in ENVOY_PROXY_CASES:
            obj = _moved(original)
            code, body = request(api, "POST", ENVOY_PROXIES.format(ns=obj["metadata"]["namespace"]), obj)
            seen.append(f"{case}: {code}")
            if expected is None:
                assert code == 201, (case, code, body.get("message"))
            else:
                assert code == 403, (case, code, body.get("message"))
                assert body["reason"] == "Forbidden", (case, body)
                assert "ValidatingAdmissionPolicy 'envoy-envoyproxy-guard'" in body["message"], case
                assert expected.replace(BLOCK_NAMESPACE, GUARD_NAMESPACE) in body["message"], (case, body["message"])

        # UPDATE: an admitted EnvoyProxy cannot gain a patch afterwards; a label is still written.
        admitted = next(_moved(obj) for _, obj, expected in ENVOY_PROXY_CASES if expected is None)
        target = f"{ENVOY_PROXIES.format(ns=GUARD_NAMESPACE)}/{admitted['metadata']['name']}"
        patch = {"provider": {"type": "Kubernetes", "kubernetes": {"envoyService": {"patch": {"value": {"spec": {}}}}}}}
        code, body = request(api, "PATCH", target, {"spec": patch})
        seen.append(f"update adding a patch: {code}")
        assert code == 403, (code, body.get("message"))
        assert PATCH_HINT in body["message"]
        code, body = request(api, "PATCH", target, {"metadata": {"labels": {"team": "a"}}})
        assert code == 200, (code, body.get("message"))
    finally:
        apiserver.delete_namespace(api, GUARD_NAMESPACE)
        apiserver.remove_tenant_test(api, TENANT_NAMESPACE, admission, crd if created_crd else None)
    return seen


BACKENDS = f"/apis/gateway.envoyproxy.io/v1alpha1/namespaces/{TENANT_NAMESPACE}/backends"


def check_backend_guard(api: Api) -> list[str]:
    """The Backend guard against any API server the admin client reaches; leaves it as it found it."""
    crd = apiserver.crd(envoy_gateway_crds() / "gateway.envoyproxy.io_backends.yaml", "backends.gateway.envoyproxy.io")
    admission = [
        o for o in objects({}) if o["kind"] in apiserver.PLURAL and o["metadata"]["name"] == "envoy-backend-guard"
    ]
    assert len(admission) == 2
    seen: list[str] = []
    created_crd = False
    try:
        denied = next(obj for _, obj, expected in BACKEND_CASES if expected)
        created_crd = apiserver.start_tenant_test(api, crd, [TENANT_NAMESPACE], admission, (BACKENDS, denied))
        for case, obj, expected in BACKEND_CASES:
            code, body = request(api, "POST", BACKENDS, obj)
            seen.append(f"{case}: {code}")
            if expected is None:
                assert code == 201, (case, code, body.get("message"))
            else:
                assert code == 403, (case, code, body.get("message"))
                assert "ValidatingAdmissionPolicy 'envoy-backend-guard'" in body["message"], case
                assert expected in body["message"], (case, body["message"])
        admitted = next(obj for _, obj, expected in BACKEND_CASES if expected is None)
        moved = {"spec": {"endpoints": [{"ip": {"address": "169.254.169.254", "port": 80}}]}}
        code, body = request(api, "PATCH", f"{BACKENDS}/{admitted['metadata']['name']}", moved)
        seen.append(f"update to 169.254.169.254: {code}")
        assert code == 403, (code, body.get("message"))
        assert ADDRESS_HINT in body["message"]
    finally:
        apiserver.remove_tenant_test(api, TENANT_NAMESPACE, admission, crd if created_crd else None)
    return seen


def test_envoy_proxy_guard_on_the_api_server(cluster: Cluster) -> None:
    print("\n".join(check_envoy_proxy_guard(cluster.api)))


def test_backend_guard_on_the_api_server(cluster: Cluster) -> None:
    print("\n".join(check_backend_guard(cluster.api)))
