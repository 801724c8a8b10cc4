"""Reading what the real controller wrote (conditions, policy ancestors, the audit journal) and the pieces a
scenario on the real node puts around the block: a tenant's backend pod, requests through a Gateway's
LoadBalancer address, a rollout held by the cluster's admission."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from envoy_block.lifecycle.status import PROXY_SELECTOR, rolled_out
from envoy_block.plan import Plan
from tests.cluster.conftest import Kube
from tests.harness.api import ApiError
from tests.harness.node import deployment_ready
from tools.oci.images import ECHO_REF

GW_API = "/apis/gateway.networking.k8s.io/v1"
EG_API = "/apis/gateway.envoyproxy.io/v1alpha1"
POLICY_KINDS = {
    "ClientTrafficPolicy": "clienttrafficpolicies",
    "BackendTrafficPolicy": "backendtrafficpolicies",
    "EnvoyExtensionPolicy": "envoyextensionpolicies",
}


def proxies_rolled_out(kube: Kube, timeout: float = 180) -> None:
    """Wait until every proxy Deployment runs its current spec on every replica and none is being deleted:
    install returns once the Gateways are Programmed, which the old pods already are while the proxies roll
    (install's summary says what still rolls, and `status` calls it unhealthy until it is done;
    docs/operations.md)."""

    def settled() -> bool:
        found = kube.items("/apis/apps/v1/deployments", labelSelector=",".join(PROXY_SELECTOR))
        return all(rolled_out(d) and not d["metadata"].get("deletionTimestamp") for d in found)

    kube.wait(settled, timeout, "the proxy Deployments rolled out")


def condition(obj: dict[str, Any] | None, kind: str) -> str | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or []:
        if cond["type"] == kind:
            return str(cond["status"])
    return None


def policy_accepted(obj: dict[str, Any] | None) -> bool:
    """Policy status lives per ancestor (status.ancestors[].conditions)."""
    ancestors = ((obj or {}).get("status") or {}).get("ancestors") or []
    return bool(ancestors) and all(
        any(c["type"] == "Accepted" and c["status"] == "True" for c in a.get("conditions") or []) for a in ancestors
    )


def assert_healthy(kube: Kube, plan: Plan, address: str | None = None) -> None:
    """Every class Accepted, every Gateway Programmed (with `address` when given), every policy Accepted,
    each as the real controller wrote it."""
    for step in plan.ordered():
        if step.kind == "GatewayClass":
            obj = kube.get(f"{GW_API}/gatewayclasses/{step.name}")
            assert condition(obj, "Accepted") == "True", (step.name, (obj or {}).get("status"))
        elif step.kind == "Gateway":
            obj = kube.get(f"{GW_API}/namespaces/{step.namespace}/gateways/{step.name}")
            assert condition(obj, "Programmed") == "True", (step.name, (obj or {}).get("status"))
            if address is not None:
                assert [a["value"] for a in obj["status"]["addresses"]] == [address]  # type: ignore[index]
        elif step.kind in POLICY_KINDS:
            obj = kube.get(f"{EG_API}/namespaces/{step.namespace}/{POLICY_KINDS[step.kind]}/{step.name}")
            assert policy_accepted(obj), (step.kind, step.name, (obj or {}).get("status"))


class Write(NamedTuple):
    verb: str
    resource: str
    namespace: str
    name: str
    agent: str


def writes(kube: Kube, since: int = 0) -> list[Write]:
    """Every completed, successful write since audit entry `since`, in the API server's order."""
    out = []
    for event in kube.cluster.audit()[since:]:
        ref = event.get("objectRef") or {}
        code = (event.get("responseStatus") or {}).get("code", 0)
        if (
            event["verb"] in ("create", "patch", "update", "delete", "deletecollection")
            and code < 300
            and not ref.get("subresource")
        ):
            out.append(
                Write(
                    event["verb"],
                    ref.get("resource", ""),
                    ref.get("namespace", ""),
                    ref.get("name", ""),
                    str(event.get("userAgent", "")),
                )
            )
    return out


# The block writes through the Kubernetes Python client (kubernetes.core) and helm; every other writer
# (controller-manager, scheduler, kubelet, the Envoy Gateway controller, the harness) is the cluster at work.
BLOCK_AGENTS = ("OpenAPI-Generator/", "Helm/")


def block_writes(kube: Kube, since: int = 0) -> list[Write]:
    return [w for w in writes(kube, since) if w.agent.startswith(BLOCK_AGENTS)]


RESTRICTED = {
    "runAsNonRoot": True,
    "readOnlyRootFilesystem": True,
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def echo_backend(kube: Kube, namespace: str, name: str = "echo") -> None:
    """A tenant's backend as a pod (tools/go/echo: answers every request with a JSON echo naming its pod and the
    peer that connected, HTTP on 8080, TLS on 8443) behind a Service `name` (http 80 -> 8080, tls 443 -> 8443),
    Ready before this returns."""
    from tests.cluster.realpods import backend  # realpods builds on this module's neighbours: import late

    backend(kube, namespace, name)
    kube.wait(lambda: deployment_ready(kube.api, namespace, name), 120, f"backend {namespace}/{name} Ready")


def gateway_address(kube: Kube, namespace: str, name: str) -> str:
    """The Gateway's address as the controller reports it: the LoadBalancer address of its proxy Service,
    which kube-proxy serves in the node's network namespace (where the tests run)."""

    def address() -> str | None:
        gateway = kube.get(f"{GW_API}/namespaces/{namespace}/gateways/{name}") or {}
        found = [a["value"] for a in (gateway.get("status") or {}).get("addresses") or []]
        return found[0] if found else None

    found: str = kube.wait(address, 90, f"Gateway {namespace}/{name} has an address")
    return found


def get(address: str, port: int, host: str, path: str = "/", timeout: float = 5) -> tuple[int, bytes]:
    """One GET on a new connection, as a client on the internet would send it to the VIP."""
    connection = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Host": host})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def served(kube: Kube, address: str, port: int, host: str, path: str = "/") -> dict[str, Any]:
    """The backend's echo through the proxy pods at address:port (the listener, the route and its endpoints
    arrive at the proxy one after another, and kube-proxy follows the pods' readiness: wait for a 200)."""

    def answer() -> dict[str, Any] | None:
        try:
            status, body = get(address, port, host, path)
        except OSError:
            return None
        return dict(json.loads(body)) if status == 200 else None

    found: dict[str, Any] = kube.wait(answer, 90, f"a 200 from the backend through {address}:{port} ({host})")
    return found


def pod_ips(kube: Kube, namespace: str, selector: str) -> set[str]:
    pods = kube.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector=selector)
    return {p["status"]["podIP"] for p in pods if (p.get("status") or {}).get("podIP")}


VAP = "/apis/admissionregistration.k8s.io/v1"


@contextmanager
def pods_held(kube: Kube, namespace: str, label: str, value: str) -> Iterator[None]:
    """While inside: the API server refuses new pods labelled label=value in namespace (a cluster owner's
    ValidatingAdmissionPolicy, as a quota or a full cluster would hold them), so a rollout of those pods stops
    half-way with the old pods serving. On leaving, the ReplicaSets that could not create their pods are
    touched so their controller tries again at once instead of after its back-off."""
    name = "test-hold-pods"
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}
                ]
            },
            "validations": [
                {
                    "expression": f"!has(object.metadata.labels) || !('{label}' in object.metadata.labels) "
                    f"|| object.metadata.labels['{label}'] != '{value}'",
                    "message": "held by the test",
                    "reason": "Forbidden",
                }
            ],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {
            "policyName": name,
            "validationActions": ["Deny"],
            "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}},
        },
    }
    kube.api.post(f"{VAP}/validatingadmissionpolicies", policy)
    kube.api.post(f"{VAP}/validatingadmissionpolicybindings", binding)
    try:
        probe = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"generateName": "held-", "namespace": namespace, "labels": {label: value}},
            "spec": {"containers": [{"name": "c", "image": ECHO_REF}]},
        }

        def refused() -> bool:
            try:
                kube.api._call("POST", f"/api/v1/namespaces/{namespace}/pods", params={"dryRun": "All"}, json=probe)
            except ApiError as err:
                return err.status == 403 and "held by the test" in str(err)  # reason Forbidden (else 422)
            return False

        kube.wait(refused, 30, "the hold in effect")
        yield
    finally:
        for path in (f"{VAP}/validatingadmissionpolicybindings/{name}", f"{VAP}/validatingadmissionpolicies/{name}"):
            try:
                kube.api.delete(path)
            except ApiError as err:
                if err.status != 404:
                    raise
        for rs in kube.items(f"/apis/apps/v1/namespaces/{namespace}/replicasets", labelSelector=f"{label}={value}"):
            if (rs.get("status") or {}).get("replicas", 0) < rs["spec"].get("replicas", 0):
                kube.api.merge_patch(
                    f"/apis/apps/v1/namespaces/{namespace}/replicasets/{rs['metadata']['name']}",
                    {"metadata": {"annotations": {"envoy-block.test/released": "1"}}},
                )


def waf_lines(kube: Kube, namespace: str) -> list[dict[str, Any]]:
    """Every JSON line the WAF pods in `namespace` logged (their audit lines among them)."""
    lines = []
    for pod in kube.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector="envoy.polycrate.io/role=waf"):
        resp = kube.api.session.get(
            f"{kube.api.url}/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}/log",
            verify=kube.api.ca,
            timeout=10,
        )
        lines += [json.loads(line) for line in resp.text.splitlines() if line.startswith("{")]
    return lines
