"""List objects of several kinds in one module run (kubernetes.core's client, discovery done once)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: k8s_list
short_description: Look up objects of several kinds in one run
description:
  - Runs one C(kubernetes.core.k8s_info) style lookup per entry of O(queries), in one process, so the API
    discovery and the client are set up once instead of once per kind.
  - Each result carries the query as C(item), like a loop of C(k8s_info) would, so filters written for such a
    loop read it unchanged.
  - When the API server cannot be reached or refuses the credentials, fails with one message naming the cause
    (refused, timed out, TLS, unauthorized, ...), the server and the kubeconfig (its action plugin words it).
  - Takes the connection options of kubernetes.core (O(kubeconfig), O(context), ...); set them for the whole
    play with C(module_defaults) C(group/polycrate_blocks.envoy.k8s).
version_added: "0.6.0"
options:
  queries:
    description:
      - What to look up, each with C(api_version) and C(kind), optionally C(name), C(namespace) and
        C(label_selectors) (instead of O(label_selectors)). Other keys are kept and returned in C(item).
      - With C(wait_condition) (C(type) and C(status), as in C(kubernetes.core.k8s_info)) the lookup waits up to
        O(wait_timeout) for the object to exist with that condition, and fails naming it when it does not.
      - With C(wait_ready) true the lookup waits up to O(wait_timeout) for the named object to be ready as
        kubernetes.core reads its kind, as C(k8s_info) with C(wait) does (a Deployment with every replica updated
        and available, none unavailable and its generation observed), and fails naming it when it is not.
      - C(metadata_only) in a query overrides O(metadata_only) for it.
      - C(managed_fields) true keeps, in each object's metadata, C(managedFields) reduced to each entry's
        C(manager), C(operation) and C(subresource) (who wrote it, never the fields; a CRD's are as large
        as its schema).
      - C(terminating_only) true keeps only the objects being deleted (with C(metadata.deletionTimestamp)),
        what a wait for a pod's shutdown reads (with C(wait_absent)).
      - C(field_selectors), a list, are the API server's field selectors for a metadata-only lookup or a
        C(wait_absent) (e.g. C(status.phase!=Succeeded) for pods), joined with the C(name) selector.
      - C(wait_absent) true (metadata only) looks again every O(wait_sleep) seconds, up to O(wait_timeout), until
        the query finds nothing it keeps (an object being deleted is gone; with C(terminating_only), no object
        is being deleted any more); it never fails for what is left; C(count) and C(resources) say what is,
        and the caller decides. It only reads, so it waits in check mode too. The block's one way to wait for
        something to go; one module run, not a module start per poll (an Ansible C(until) loop).
      - C(helm_release) true reads helm's storage Secrets (label C(owner=helm)) and returns, instead of the
        Secrets, the newest release decoded (C(revision), C(status), C(chart), C(chart_version),
        C(app_version), and C(values), the user-supplied values), as C(helm list) and C(helm get values) show
        it. The Secret's data is never returned.
    type: list
    elements: dict
    required: true
  label_selectors:
    description: Label selectors applied to every query that has none of its own.
    type: list
    elements: str
    default: []
  metadata_only:
    description:
      - Return only C(apiVersion), C(kind) and C(metadata) (without C(managedFields)) of each object, so large
        objects (CRDs) are not shipped back whole; the API server sends only their metadata
        (C(PartialObjectMetadataList)).
    type: bool
    default: false
  wait_timeout:
    description: Seconds each query with a C(wait_condition) may wait.
    type: int
    default: 120
  wait_sleep:
    description: Seconds between two checks of a C(wait_condition).
    type: int
    default: 1
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: List the block's Gateways and GatewayClasses
  polycrate_blocks.envoy.k8s_list:
    queries:
      - {api_version: gateway.networking.k8s.io/v1, kind: Gateway}
      - {api_version: gateway.networking.k8s.io/v1, kind: GatewayClass}
    label_selectors: ["app.kubernetes.io/instance=envoy"]
  register: owned
"""

RETURN = r"""
count:
  description: How many objects the queries found together (a wait for absence reads it).
  returned: success
  type: int
results:
  description: One entry per query, in query order.
  returned: always
  type: list
  elements: dict
  contains:
    item:
      description: The query.
      type: dict
    api_found:
      description: Whether the cluster serves the kind.
      type: bool
    resources:
      description: >-
        The objects found (empty when the kind is not served), with C(managedFields) only as C(managed_fields)
        asks.
      type: list
    release:
      description: With C(helm_release), the newest release, or null when there is none.
      type: dict
"""

import base64
import copy
import gzip
import json
import time
from typing import Any

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

try:  # the module reports a missing library through kubernetes.core's own check
    from kubernetes.client.exceptions import ApiException
    from kubernetes.config import ConfigException
    from urllib3.exceptions import HTTPError
except ImportError:
    ApiException = ConfigException = HTTPError = CoreException  # type: ignore[misc]


def argspec() -> dict[str, Any]:
    args: dict[str, Any] = copy.deepcopy(AUTH_ARG_SPEC)
    args["queries"] = {"type": "list", "elements": "dict", "required": True}
    args["label_selectors"] = {"type": "list", "elements": "str", "default": []}
    args["metadata_only"] = {"type": "bool", "default": False}
    args["wait_timeout"] = {"type": "int", "default": 120}
    args["wait_sleep"] = {"type": "int", "default": 1}
    return args


MANAGER_KEYS = ("manager", "operation", "subresource")


def _meta(obj: dict[str, Any], managers: bool) -> dict[str, Any]:
    """The object's metadata without managedFields, or with them reduced to who wrote what way."""
    meta = {k: v for k, v in obj.get("metadata", {}).items() if k != "managedFields"}
    if managers:
        entries = obj.get("metadata", {}).get("managedFields") or []
        meta["managedFields"] = [{k: entry[k] for k in MANAGER_KEYS if k in entry} for entry in entries]
    return meta


def _metadata(obj: dict[str, Any], managers: bool = False) -> dict[str, Any]:
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": _meta(obj, managers)}


def _without_managed_fields(obj: dict[str, Any], managers: bool = False) -> dict[str, Any]:
    return {**obj, "metadata": _meta(obj, managers)}


# The API server answers a list with the objects' metadata only: a CRD list is megabytes of schema otherwise.
METADATA_ACCEPT = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"


def _metadata_list(svc: K8sService, query: dict[str, Any], selectors: list[str]) -> dict[str, Any]:
    resource = svc.find_resource(query["kind"], query.get("api_version", "v1"))
    if resource is None:
        return {"resources": [], "api_found": False}
    params: dict[str, Any] = {"header_params": {"Accept": METADATA_ACCEPT}}
    if query.get("namespace"):
        params["namespace"] = query["namespace"]
    if selectors:
        params["label_selector"] = ",".join(selectors)
    fields = [*([f"metadata.name={query['name']}"] if query.get("name") else []), *query.get("field_selectors", [])]
    if fields:
        params["field_selector"] = ",".join(fields)
    # Parsed here, not by the client's serializer: kubernetes 17 (Polycrate's image) iterates `items`, which the
    # API server sends as null for an empty PartialObjectMetadataList.
    try:
        found = json.loads(svc.client.get(resource, serialize=False, **params).data)
    except ApiException as exc:
        # The kind was in the client's discovery cache (a file per API server address, kept between runs) but
        # the server no longer serves it, e.g. an operator removed since: not served, as when discovery says so.
        if exc.status != 404:
            raise
        return {"resources": [], "api_found": False}
    # PartialObjectMetadata items name their own kind, not the object's.
    api_version = query.get("api_version", "v1")
    items = found.get("items") or []
    managers = bool(query.get("managed_fields"))
    return {
        "resources": [
            {**_metadata(item, managers), "apiVersion": api_version, "kind": query["kind"]} for item in items
        ],
        "api_found": True,
    }


def _until_absent(
    svc: K8sService, query: dict[str, Any], selectors: list[str], timeout: int, sleep: int
) -> dict[str, Any]:
    """C(wait_absent): list until the query finds nothing it keeps (C(terminating_only)) or `timeout` seconds have
    passed; what is left, kept."""
    deadline = time.monotonic() + timeout
    while True:
        listed = _metadata_list(svc, query, selectors)
        listed["resources"] = _kept(query, listed["resources"])
        if not listed["resources"] or time.monotonic() >= deadline:
            return listed
        time.sleep(max(1, sleep))


def _kept(query: dict[str, Any], resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """With C(terminating_only), only the objects being deleted."""
    if not query.get("terminating_only"):
        return resources
    return [obj for obj in resources if (obj.get("metadata") or {}).get("deletionTimestamp")]


def _release(secrets: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest helm release among its storage Secrets (helm's secrets driver: base64 of gzipped JSON);
    None when there is none, or when it cannot be read: the caller then lets helm decide."""
    try:
        newest = max(secrets, key=lambda s: int(((s.get("metadata") or {}).get("labels") or {}).get("version", 0)))
        raw = base64.b64decode(base64.b64decode((newest.get("data") or {}).get("release", "")))
        release = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    except (ValueError, OSError, EOFError):  # no Secret, a non-number label, bad base64, gzip or JSON
        return None
    if not isinstance(release, dict):
        return None
    metadata = (release.get("chart") or {}).get("metadata") or {}
    return {
        "name": release.get("name"),
        "namespace": release.get("namespace"),
        "revision": release.get("version"),
        "status": (release.get("info") or {}).get("status"),
        "chart": metadata.get("name"),
        "chart_version": metadata.get("version"),
        "app_version": metadata.get("appVersion"),
        "values": release.get("config") or {},
    }


def _error_text(exc: BaseException) -> str:
    """The exception and its causes in one line each: the client wraps urllib3's and ssl's errors."""
    texts: list[str] = []
    seen: BaseException | None = exc
    while seen is not None and len(texts) < 5:
        texts.append(f"{type(seen).__name__}: {seen}")
        seen = seen.__cause__ or seen.__context__
    return " <- ".join(texts)


def main() -> None:
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=True)
    results: list[dict[str, Any]] = []
    server = ""
    failure = ""
    try:
        client = get_api_client(module)
        server = str(getattr(client.configuration, "host", "") or "")
        svc = K8sService(client, module)
        for query in module.params["queries"]:
            condition = query.get("wait_condition")
            ready = bool(query.get("wait_ready"))
            selectors = query.get("label_selectors") or module.params["label_selectors"]
            metadata_only = query.get("metadata_only", module.params["metadata_only"])
            if query.get("wait_absent"):
                timeout, sleep = module.params["wait_timeout"], module.params["wait_sleep"]
                results.append({"item": query, **_until_absent(svc, query, selectors, timeout, sleep)})
                continue
            if metadata_only and not (condition or ready):
                listed = _metadata_list(svc, query, selectors)
                results.append({"item": query, **listed, "resources": _kept(query, listed["resources"])})
                continue
            try:
                found = svc.find(
                    query["kind"],
                    query.get("api_version", "v1"),
                    name=query.get("name"),
                    namespace=query.get("namespace") or None,
                    label_selectors=selectors,
                    wait=bool(condition or ready) and not module.check_mode,
                    wait_sleep=module.params["wait_sleep"],
                    wait_timeout=module.params["wait_timeout"],
                    condition=condition,
                )
            except CoreException as exc:
                if not (condition or ready):
                    raise
                where = "/".join(str(query[k]) for k in ("namespace", "name") if query.get(k))
                state = f"{condition['type']}={condition['status']}" if condition else "ready"
                module.fail_json(
                    msg=f"{query['kind']} {where} is not {state} after {module.params['wait_timeout']} s ({exc}): "
                    "`status` shows its conditions",
                    results=results,
                )
            resources = found["resources"]
            if query.get("helm_release"):
                release = _release(resources)
                results.append({"item": query, "api_found": found["api_found"], "resources": [], "release": release})
                continue
            managers = bool(query.get("managed_fields"))
            resources = [
                _metadata(obj, managers) if metadata_only else _without_managed_fields(obj, managers)
                for obj in resources
            ]
            resources = _kept(query, resources)
            results.append({"item": query, "api_found": found["api_found"], "resources": resources})
    # What the client raises when the API server cannot be reached or refuses the call (urllib3, ssl and socket
    # errors, ApiException, a bad kubeconfig): the action plugin turns it into one message naming the cause.
    # Failed outside the handler, so no traceback rides along. Anything else is a bug and fails as one.
    except (CoreException, ApiException, ConfigException, HTTPError, OSError) as exc:
        failure = _error_text(exc)
    if failure:
        module.fail_json(msg=failure, api_error=True, server=server, results=results)
    # How many objects all queries found together: what a wait for absence (`until: x.count == 0`) reads.
    module.exit_json(changed=False, results=results, count=sum(len(r["resources"]) for r in results))


if __name__ == "__main__":
    main()
