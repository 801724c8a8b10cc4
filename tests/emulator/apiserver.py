"""An EMULATED Kubernetes API server for running the real playbooks in CI. Not a cluster.

Built on PyPI `kmock` (its aiohttp server and request capture), with the fixes real clients need that
stock kmock 0.8 lacks: core `v1` discovery, discovery of kinds registered by CRDs, namespaces that must
exist, POST/PUT/PATCH (merge, JSON patch, server-side apply) and DELETE with Kubernetes status codes,
`dryRun=All` that never mutates, uid/resourceVersion/generation, label selectors, the 256 KiB annotation
limit, and custom resources validated against their CRD's schema + CEL rules (the same gate the tests
use) answered with 422 like a real apiserver.

What it does NOT do (a real cluster does): run controllers (nothing becomes Accepted/Programmed, no
Deployments roll out), garbage-collect owned objects, finalizers, admission webhooks, RBAC, field
ownership conflicts between managers, strategic-merge list semantics. CRDs are marked Established at once.
"""

from __future__ import annotations

import copy
import datetime
import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp.web
import jsonpatch
import kmock
import yaml

from tests.support import gate
from tests.support.crdgate import CRDGate, GateError, Result, metadata_errors

ANNOTATION_LIMIT = 256 * 1024
REQUEST_LIMIT = 3 * 1024 * 1024
CRD_GVR = ("apiextensions.k8s.io", "v1", "customresourcedefinitions")


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


BUILTIN = [
    ResourceType("", "v1", "namespaces", "Namespace", False),
    ResourceType("", "v1", "configmaps", "ConfigMap", True),
    ResourceType("", "v1", "secrets", "Secret", True),
    ResourceType("", "v1", "services", "Service", True),
    ResourceType("", "v1", "serviceaccounts", "ServiceAccount", True),
    ResourceType("", "v1", "pods", "Pod", True),
    ResourceType("apps", "v1", "deployments", "Deployment", True),
    ResourceType("apps", "v1", "daemonsets", "DaemonSet", True),
    ResourceType("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True),
    ResourceType("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True),
    ResourceType(*CRD_GVR, "CustomResourceDefinition", False),
]

_PATH = re.compile(
    r"^/(?:api/(?P<core_version>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"(?:/namespaces/(?P<namespace>[^/]+))?/(?P<plural>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?$"
)


class APIError(Exception):
    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


def _now() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _strip_server_fields(obj: Mapping[str, Any]) -> dict[str, Any]:
    """What a client controls: everything but status and server-populated metadata."""
    out = copy.deepcopy(dict(obj))
    out.pop("status", None)
    meta = out.get("metadata", {})
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink"):
        meta.pop(key, None)
    return out


def _matches_selector(labels: Mapping[str, str], selector: str) -> bool:
    for term in filter(None, (t.strip() for t in selector.split(","))):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key.strip()) == value.strip():
                return False
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            if labels.get(key.strip()) != value.strip():
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


class EmulatedAPIServer(kmock.RawHandler):
    """Stateful in-memory API; every mutating request is recorded in `self.journal` for assertions."""

    def __init__(self) -> None:
        super().__init__()
        self.types: dict[tuple[str, str, str], ResourceType] = {(t.group, t.version, t.plural): t for t in BUILTIN}
        self.objects: dict[tuple[str, str, str | None, str], dict[str, Any]] = {}
        self.crd_gate = CRDGate([])
        self.revision = 0
        self.journal: list[dict[str, Any]] = []

    # --- plumbing ---------------------------------------------------------------------------------

    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        # Stock kmock 0.8 parses Kubernetes paths itself and crashes on POST /api/v1/namespaces;
        # this server parses paths on its own (_PATH), so only the HTTP parts are taken from kmock.
        # aiohttp's low-level server caps read() at 1 MiB; the apiserver takes request bodies up to 3 MiB.
        body = await raw_request.content.read()
        if len(body) > REQUEST_LIMIT:
            return aiohttp.web.json_response(
                {"kind": "Status", "code": 413, "reason": "RequestEntityTooLarge", "message": "request is too large"},
                status=413,
            )
        text = body.decode("utf-8", errors="replace")
        try:
            data = json.loads(text) if text else None
        except ValueError:
            data = None
        request = kmock.Request(
            id=len(self._requests),
            method=raw_request.method,
            url=raw_request.url,
            params=dict(raw_request.query),
            headers=dict(raw_request.headers),
            body=body,
            text=text,
            data=data,
        )
        self._requests.append(request)
        return await self._handle(request)

    async def _handle(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        try:
            status, body = self._dispatch(request)
        except APIError as exc:
            status, body = (
                exc.code,
                {
                    "apiVersion": "v1",
                    "kind": "Status",
                    "metadata": {},
                    "status": "Failure",
                    "code": exc.code,
                    "reason": exc.reason,
                    "message": exc.message,
                },
            )
        return aiohttp.web.json_response(body, status=status)

    def _record(
        self, request: kmock.Request, rtype: ResourceType, namespace: str | None, name: str, verb: str, outcome: int
    ) -> None:
        self.journal.append(
            {
                "verb": verb,
                "kind": rtype.kind,
                "namespace": namespace,
                "name": name,
                "code": outcome,
                "dry_run": request.params.get("dryRun") == "All",
                "field_manager": request.params.get("fieldManager"),
            }
        )

    def _dispatch(self, request: kmock.Request) -> tuple[int, Any]:
        path = request.url.path.rstrip("/") or "/"
        method = str(request.method.value if hasattr(request.method, "value") else request.method).upper()
        if path == "/emulator/state":
            return 200, {"objects": list(self.objects.values()), "journal": self.journal}
        if path == "/version":
            return 200, {"major": "1", "minor": "33", "gitVersion": "v1.33.0-emulated", "platform": "linux/amd64"}
        if path == "/api":
            return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []}
        if path == "/apis":
            return 200, self._group_list()
        if path == "/api/v1":
            return 200, self._resource_list("", "v1")
        parts = path.split("/")
        if len(parts) == 3 and parts[1] == "apis":
            return 200, self._group(parts[2])
        if len(parts) == 4 and parts[1] == "apis":
            return 200, self._resource_list(parts[2], parts[3])
        match = _PATH.match(path)
        if not match:
            raise APIError(404, "NotFound", f"the server could not find the requested resource ({path})")
        group = match["group"] or ""
        version = match["core_version"] or match["version"]
        plural, name, namespace = match["plural"], match["name"], match["namespace"]
        if group == "" and plural == "namespaces" and namespace and not name:
            # /api/v1/namespaces/<name> parsed as a namespaced collection: it is the Namespace itself.
            plural, name, namespace = "namespaces", namespace, None
        rtype = self.types.get((group, version, plural))
        if rtype is None:
            raise APIError(404, "NotFound", f"the server could not find the requested resource ({path})")
        if match["sub"] and match["sub"] != "status":
            raise APIError(404, "NotFound", f"subresource {match['sub']} is not emulated")
        if method == "GET":
            if name:
                return 200, self._present(rtype, self._get(rtype, namespace, name))
            return 200, self._list(rtype, namespace, request.params.get("labelSelector", ""))
        if method == "POST":
            return self._create(request, rtype, namespace, self._body(request))
        if method == "PUT" and name:
            return self._put(request, rtype, namespace, name, self._body(request))
        if method == "PATCH" and name:
            return self._patch(request, rtype, namespace, name)
        if method == "DELETE" and name:
            return self._delete(request, rtype, namespace, name)
        raise APIError(405, "MethodNotAllowed", f"{method} {path} is not emulated")

    @staticmethod
    def _body(request: kmock.Request) -> Any:
        if request.data is not None and not isinstance(request.data, Mapping | list):
            return yaml.safe_load(request.text)
        return request.data if request.data is not None else yaml.safe_load(request.text or "null")

    # --- discovery --------------------------------------------------------------------------------

    def _group_versions(self) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = {}
        for group, version, _ in sorted(self.types):
            if group and version not in groups.setdefault(group, []):
                groups[group].append(version)
        return groups

    def _group(self, group: str) -> dict[str, Any]:
        versions = self._group_versions().get(group)
        if not versions:
            raise APIError(404, "NotFound", f"group {group} not found")
        entries = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {
            "apiVersion": "v1",
            "kind": "APIGroup",
            "name": group,
            "versions": entries,
            "preferredVersion": entries[0],
        }

    def _group_list(self) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "APIGroupList",
            "groups": [
                {k: v for k, v in self._group(g).items() if k not in ("apiVersion", "kind")}
                for g in self._group_versions()
            ],
        }

    def _resource_list(self, group: str, version: str) -> dict[str, Any]:
        types = [t for (g, v, _), t in sorted(self.types.items()) if g == group and v == version]
        if not types:
            raise APIError(404, "NotFound", f"{group}/{version} not found")
        verbs = ["create", "delete", "get", "list", "patch", "update", "watch"]
        resources = []
        for t in types:
            base = {
                "name": t.plural,
                "singularName": t.kind.lower(),
                "namespaced": t.namespaced,
                "kind": t.kind,
                "verbs": verbs,
            }
            resources += [base, {**base, "name": f"{t.plural}/status", "verbs": ["get", "patch", "update"]}]
        return {
            "apiVersion": "v1",
            "kind": "APIResourceList",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }

    # --- storage ----------------------------------------------------------------------------------

    def _key(self, rtype: ResourceType, namespace: str | None, name: str) -> tuple[str, str, str | None, str]:
        return rtype.group, rtype.plural, namespace if rtype.namespaced else None, name

    def _get(self, rtype: ResourceType, namespace: str | None, name: str) -> dict[str, Any]:
        obj = self.objects.get(self._key(rtype, namespace, name))
        if obj is None:
            raise APIError(404, "NotFound", f'{rtype.plural}.{rtype.group or "core"} "{name}" not found')
        return obj

    @staticmethod
    def _present(rtype: ResourceType, obj: Mapping[str, Any]) -> dict[str, Any]:
        out = copy.deepcopy(dict(obj))
        out["apiVersion"] = rtype.api_version
        return out

    def _list(self, rtype: ResourceType, namespace: str | None, selector: str) -> dict[str, Any]:
        items = [
            self._present(rtype, obj)
            for (group, plural, ns, _), obj in sorted(self.objects.items(), key=lambda kv: str(kv[0]))
            if (group, plural) == (rtype.group, rtype.plural)
            and (namespace is None or ns == namespace)
            and _matches_selector(obj["metadata"].get("labels", {}), selector)
        ]
        return {
            "apiVersion": rtype.api_version,
            "kind": f"{rtype.kind}List",
            "metadata": {"resourceVersion": str(self.revision)},
            "items": items,
        }

    def _validate(self, rtype: ResourceType, namespace: str | None, obj: dict[str, Any]) -> None:
        if obj.get("kind") != rtype.kind:
            raise APIError(400, "BadRequest", f"kind {obj.get('kind')} does not match {rtype.kind}")
        meta = obj.setdefault("metadata", {})
        if rtype.namespaced:
            meta["namespace"] = meta.get("namespace") or namespace
            if ("", "namespaces", None, meta["namespace"]) not in self.objects:
                raise APIError(404, "NotFound", f'namespaces "{meta["namespace"]}" not found')
        annotations = meta.get("annotations") or {}
        if sum(len(k) + len(str(v)) for k, v in annotations.items()) > ANNOTATION_LIMIT:
            raise APIError(422, "Invalid", "metadata.annotations: Too long: must have at most 262144 bytes")
        try:
            if rtype.group in gate.BUILTIN_GROUPS or rtype.group == "apiextensions.k8s.io":
                result = Result(errors=metadata_errors(obj, rtype.namespaced))
            else:
                result = self.crd_gate.validate(obj)
        except GateError as exc:
            raise APIError(500, "InternalError", str(exc)) from exc
        if not result.ok:
            raise APIError(
                422,
                "Invalid",
                f'{rtype.kind}.{rtype.group} "{meta.get("name")}" is invalid: ' + "; ".join(result.errors),
            )

    def _store(self, rtype: ResourceType, obj: dict[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
        meta = obj["metadata"]
        if previous is not None:
            prev_meta = previous["metadata"]
            for key in ("uid", "creationTimestamp"):
                meta[key] = prev_meta[key]
            if "status" in previous and "status" not in obj:
                obj["status"] = copy.deepcopy(previous["status"])
            if _strip_server_fields(previous) == _strip_server_fields(obj) and obj.get("status") == previous.get(
                "status"
            ):
                return dict(previous)  # a no-op write changes nothing, not even resourceVersion
            changed_spec = _strip_server_fields(previous).get("spec") != _strip_server_fields(obj).get("spec")
            meta["generation"] = prev_meta.get("generation", 1) + (1 if changed_spec else 0)
        else:
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = _now()
            meta["generation"] = 1
        self.revision += 1
        meta["resourceVersion"] = str(self.revision)
        obj["apiVersion"] = rtype.api_version
        return obj

    def _commit(self, rtype: ResourceType, obj: dict[str, Any]) -> None:
        key = self._key(rtype, obj["metadata"].get("namespace"), obj["metadata"]["name"])
        self.objects[key] = obj
        if (rtype.group, rtype.version, rtype.plural) == CRD_GVR:
            self._register_crd(obj)

    def _register_crd(self, crd: dict[str, Any]) -> None:
        spec = crd["spec"]
        for version in spec["versions"]:
            if version.get("served", True):
                self.types[(spec["group"], version["name"], spec["names"]["plural"])] = ResourceType(
                    spec["group"],
                    version["name"],
                    spec["names"]["plural"],
                    spec["names"]["kind"],
                    spec["scope"] == "Namespaced",
                )
        self.crd_gate.add_crd(crd)
        # The one piece of controller behaviour emulated: CRDs are Established at once.
        crd["status"] = {
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "emulated"},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "emulated"},
            ],
            "acceptedNames": spec["names"],
        }

    def _unregister_crd(self, crd: Mapping[str, Any]) -> None:
        spec = crd["spec"]
        for version in spec["versions"]:
            self.types.pop((spec["group"], version["name"], spec["names"]["plural"]), None)
        for key in [k for k in self.objects if k[:2] == (spec["group"], spec["names"]["plural"])]:
            del self.objects[key]

    # --- verbs ------------------------------------------------------------------------------------

    def _write(
        self,
        request: kmock.Request,
        rtype: ResourceType,
        namespace: str | None,
        obj: dict[str, Any],
        previous: Mapping[str, Any] | None,
        verb: str,
    ) -> tuple[int, Any]:
        self._validate(rtype, namespace, obj)
        stored = self._store(rtype, obj, previous)
        dry_run = request.params.get("dryRun") == "All"
        if not dry_run and stored is not previous:
            self._commit(rtype, stored)
        code = 201 if previous is None else 200
        self._record(request, rtype, stored["metadata"].get("namespace"), stored["metadata"]["name"], verb, code)
        return code, self._present(rtype, stored)

    def _create(self, request: kmock.Request, rtype: ResourceType, namespace: str | None, body: Any) -> tuple[int, Any]:
        obj = copy.deepcopy(body)
        name = obj.get("metadata", {}).get("name")
        if self._key(rtype, namespace or obj.get("metadata", {}).get("namespace"), name) in self.objects:
            raise APIError(409, "AlreadyExists", f'{rtype.plural} "{name}" already exists')
        return self._write(request, rtype, namespace, obj, None, "create")

    def _put(
        self, request: kmock.Request, rtype: ResourceType, namespace: str | None, name: str, body: Any
    ) -> tuple[int, Any]:
        previous = self._get(rtype, namespace, name)
        return self._write(request, rtype, namespace, copy.deepcopy(body), previous, "replace")

    def _patch(self, request: kmock.Request, rtype: ResourceType, namespace: str | None, name: str) -> tuple[int, Any]:
        content_type = request.headers.get("Content-Type", "").split(";")[0]
        body = self._body(request)
        previous = self.objects.get(self._key(rtype, namespace, name))
        if content_type == "application/apply-patch+yaml":
            # Server-side apply with a single field manager: the applied config is the object's content.
            if not request.params.get("fieldManager"):
                raise APIError(400, "BadRequest", "PATCH with apply requires fieldManager")
            obj = copy.deepcopy(body)
            if previous is not None and "status" in previous:
                obj["status"] = copy.deepcopy(previous["status"])
            return self._write(request, rtype, namespace, obj, previous, "apply")
        if previous is None:
            raise APIError(404, "NotFound", f'{rtype.plural} "{name}" not found')
        if content_type == "application/json-patch+json":
            obj = jsonpatch.apply_patch(copy.deepcopy(previous), body)
        else:  # merge-patch and strategic-merge-patch (lists replaced whole: no strategic semantics)
            obj = _merge_patch(copy.deepcopy(previous), body)
        return self._write(request, rtype, namespace, obj, previous, "patch")

    def _delete(self, request: kmock.Request, rtype: ResourceType, namespace: str | None, name: str) -> tuple[int, Any]:
        obj = self._get(rtype, namespace, name)
        if request.params.get("dryRun") != "All":
            del self.objects[self._key(rtype, namespace, name)]
            if (rtype.group, rtype.version, rtype.plural) == CRD_GVR:
                self._unregister_crd(obj)
            if rtype.plural == "namespaces" and rtype.group == "":
                for key in [k for k in self.objects if k[2] == name]:
                    del self.objects[key]
        self._record(request, rtype, namespace, name, "delete", 200)
        return 200, self._present(rtype, obj)


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result
