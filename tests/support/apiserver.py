"""Small helpers for tests that talk to a real API server as the admin client (tests/harness Api):
the whole JSON answer of a request, polling, CRDs from ../shared/crds, admission objects."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.harness.api import Api, ApiError

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
PLURAL = {
    "ValidatingAdmissionPolicy": "validatingadmissionpolicies",
    "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings",
}


def request(api: Api, method: str, path: str, body: Any = None, **params: str) -> tuple[int, dict[str, Any]]:
    """Status code and the whole JSON answer (ApiError cuts long denial messages)."""
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else None
    resp = api.session.request(
        method, api.url + path, json=body, params=params or None, headers=headers, timeout=30, verify=api.ca
    )
    return resp.status_code, (resp.json() if resp.content else {})


def wait(check: Callable[[], Any], what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError(f"{what}: not within {timeout:.0f}s")


def delete(api: Api, path: str) -> None:
    try:
        api.delete(path)
    except ApiError as err:
        if err.status != 404:
            raise


def crd(path: Path, name: str) -> dict[str, Any]:
    """One CustomResourceDefinition out of a (multi-document) CRD file."""
    for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
        if doc and doc.get("kind") == "CustomResourceDefinition" and doc["metadata"]["name"] == name:
            return dict(doc)
    raise AssertionError(f"{name} not in {path}")


def ensure_crd(api: Api, definition: dict[str, Any]) -> bool:
    """Create the CRD unless it exists; wait until Established. True if this call created it."""
    created = request(api, "POST", CRDS, definition)[0] == 201

    def established() -> bool:
        got = api.get(f"{CRDS}/{definition['metadata']['name']}")
        conditions = (got.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)

    wait(established, f"CRD {definition['metadata']['name']} Established")
    return created


def create_admission(api: Api, objects: list[dict[str, Any]]) -> None:
    """Create a rendered ValidatingAdmissionPolicy and its binding; the API server's own type checking of
    the expressions must report nothing."""
    for obj in objects:
        code, body = request(api, "POST", f"{ADMISSION}/{PLURAL[obj['kind']]}", obj)
        assert code == 201, (obj["kind"], code, body.get("message"))
    policy = next(o for o in objects if o["kind"] == "ValidatingAdmissionPolicy")
    path = f"{ADMISSION}/{PLURAL['ValidatingAdmissionPolicy']}/{policy['metadata']['name']}"
    wait(lambda: (api.get(path).get("status") or {}).get("observedGeneration"), "type checking done")
    status = api.get(path)["status"]
    assert not (status.get("typeChecking") or {}).get("expressionWarnings"), status


def delete_admission(api: Api, objects: list[dict[str, Any]]) -> None:
    for obj in reversed(objects):
        delete(api, f"{ADMISSION}/{PLURAL[obj['kind']]}/{obj['metadata']['name']}")


def delete_namespace(api: Api, name: str) -> None:
    """Delete and wait until the namespace controller has removed it (and everything in it)."""
    delete(api, f"/api/v1/namespaces/{name}")
    wait(lambda: request(api, "GET", f"/api/v1/namespaces/{name}")[0] == 404, f"namespace {name} gone", 120)


def remove_tenant_test(api: Api, namespace: str, admission: list[dict[str, Any]], crd: dict[str, Any] | None) -> None:
    """Undo an admission test: its tenant namespace first (the namespace controller removes the tenant objects
    while their CRD still exists), then the admission objects, then the CRD if the test created it."""
    delete_namespace(api, namespace)
    delete_admission(api, admission)
    if crd is not None:
        delete(api, f"{CRDS}/{crd['metadata']['name']}")


def start_tenant_test(
    api: Api, definition: dict[str, Any], namespaces: list[str], admission: list[dict[str, Any]], probe: tuple[str, Any]
) -> bool:
    """Set an admission test up: the CRD (True if this call created it), the namespaces, the policy and its
    binding, then wait until the API server denies `probe` (path, object) in a dry run: a binding takes effect
    once the admission plugin has seen it. Undo with remove_tenant_test."""
    created = ensure_crd(api, definition)
    for namespace in namespaces:
        assert request(api, "POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})[0] == 201
    create_admission(api, admission)
    path, obj = probe
    wait(lambda: request(api, "POST", path, obj, dryRun="All")[0] == 403, "admission policy in effect")
    return created
