"""The PROXY protocol port guard on the REAL kube-apiserver: with PROXY annotations on the merged shared
class's one Service, the rendered ValidatingAdmissionPolicy + binding (applied before the Gateways) admit
Gateways of the class only on the default Gateway's TCP ports and without ListenerSets; other classes are
untouched. A spec-changing update that stays on those ports is admitted, one that adds another port is
denied; the block's own default Gateway is exempt (it defines the ports), also when it grows a port.

Needs only the API server (the `cluster` fixture: no Envoy Gateway controller, no registry, no fixed host
ports) and the Gateway CRD of Gateway API v1.6.1 (standard channel) from ../shared/crds. The cases are
tests/support/tenant_objects.py GATEWAY_CASES, which tests/unit/test_proxy_protocol_scope.py evaluates with a
CEL engine.

Mutation check (done once, against a standalone harness): rendering the ports rule with
`l.port in variables.proxyPort` (a misspelt variable) made check_port_guard fail: the API server refused
the policy itself ("compilation failed: undefined field 'proxyPort'"); dropping the notTheDefaultGateway
match condition made it fail when the block's own Gateway grew a port.
"""

from __future__ import annotations

from tests.harness.api import Api
from tests.harness.cluster import Cluster
from tests.support import apiserver
from tests.support.apiserver import request, wait
from tests.support.helpers import objects
from tests.support.shared import shared_dir
from tests.support.tenant_objects import GATEWAY_CASES, PORTS_HINT, PROXY_PROTOCOL_CONFIG, TENANT_NAMESPACE

GATEWAYS = "/apis/gateway.networking.k8s.io/v1/namespaces/{ns}/gateways"


def check_port_guard(api: Api) -> None:
    """The whole scenario against any API server the admin client reaches; leaves it as it found it."""
    crd = apiserver.crd(
        shared_dir() / "crds" / "gateway-api" / "standard-install.yaml", "gateways.gateway.networking.k8s.io"
    )
    # The block rendered into the tenant namespace, so a real envoy-gateway-system is never touched: its
    # default Gateway is then a neighbour of the tenants' Gateways, exempt by namespace and name.
    rendered = objects({**PROXY_PROTOCOL_CONFIG, "namespace": TENANT_NAMESPACE})
    admission = [
        o for o in rendered if o["kind"] in apiserver.PLURAL and o["metadata"]["name"] == "envoy-proxy-protocol-ports"
    ]
    assert [o["metadata"]["name"] for o in admission] == ["envoy-proxy-protocol-ports"] * 2
    default_gateway = next(o for o in rendered if o["kind"] == "Gateway")
    tenant = GATEWAYS.format(ns=TENANT_NAMESPACE)
    created_crd = False
    try:
        created_crd = apiserver.ensure_crd(api, crd)
        assert request(api, "POST", "/api/v1/namespaces", {"metadata": {"name": TENANT_NAMESPACE}})[0] == 201
        apiserver.create_admission(api, admission)
        denied = next(obj for _, obj, expected in GATEWAY_CASES if expected)
        wait(lambda: request(api, "POST", tenant, denied, dryRun="All")[0] == 403, "admission policy in effect")

        code, body = request(api, "POST", tenant, default_gateway)
        assert code == 201, ("the block's own Gateway", code, body.get("message"))
        grown = [*default_gateway["spec"]["listeners"], {"name": "alt", "protocol": "HTTP", "port": 8080}]
        code, body = request(api, "PATCH", f"{tenant}/eg-shared", {"spec": {"listeners": grown}})
        assert code == 200, ("the block's own Gateway grows a port", code, body.get("message"))
        for case, obj, expected in GATEWAY_CASES:
            code, body = request(api, "POST", tenant, obj)
            if expected is None:
                assert code == 201, (case, code, body.get("message"))
            else:
                assert code == 403, (case, code, body.get("message"))
                assert "ValidatingAdmissionPolicy 'envoy-proxy-protocol-ports'" in body["message"], case
                assert expected in body["message"], (case, body["message"])

        admitted = next(
            obj for _, obj, expected in GATEWAY_CASES if expected is None and len(obj["spec"]["listeners"]) > 1
        )
        path = f"{tenant}/{admitted['metadata']['name']}"
        listeners = api.get(path)["spec"]["listeners"]
        code, body = request(api, "PATCH", path, {"spec": {"listeners": listeners[:1]}})
        assert code == 200, (code, body.get("message"))
        more = [*listeners[:1], {"name": "alt", "protocol": "HTTP", "port": 8080}]
        code, body = request(api, "PATCH", path, {"spec": {"listeners": more}})
        assert code == 403, (code, body.get("message"))
        assert PORTS_HINT in body["message"]
    finally:
        apiserver.remove_tenant_test(api, TENANT_NAMESPACE, admission, crd if created_crd else None)


def test_proxy_protocol_port_guard_on_the_api_server(cluster: Cluster) -> None:
    check_port_guard(cluster.api)
