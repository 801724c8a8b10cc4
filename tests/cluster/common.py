"""Reading what the real controller wrote: conditions, policy ancestors, the audit journal."""

from __future__ import annotations

from typing import Any, NamedTuple

from envoy_block.plan import Plan
from tests.cluster.conftest import Kube

GW_API = "/apis/gateway.networking.k8s.io/v1"
EG_API = "/apis/gateway.envoyproxy.io/v1alpha1"
POLICY_KINDS = {
    "ClientTrafficPolicy": "clienttrafficpolicies",
    "BackendTrafficPolicy": "backendtrafficpolicies",
    "EnvoyExtensionPolicy": "envoyextensionpolicies",
}


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
# (controller-manager, kwok, the Envoy Gateway controller, the harness) is the cluster at work.
BLOCK_AGENTS = ("OpenAPI-Generator/", "Helm/")


def block_writes(kube: Kube, since: int = 0) -> list[Write]:
    return [w for w in writes(kube, since) if w.agent.startswith(BLOCK_AGENTS)]
