"""Server-side apply of a list of objects, with any kubernetes client from 17.17 on (Polycrate's image)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: k8s_apply
short_description: Server-side apply a list of objects in order, with kubernetes 17.17 and later
description:
  - Applies each object of O(definitions) in order with a server-side apply PATCH
    (C(application/apply-patch+yaml)), stopping at the first error.
  - C(kubernetes.core.k8s) refuses C(server_side_apply) below kubernetes 19.15, and Polycrate v0.23.3's image
    ships kubernetes 17.17; this module sends the same request through the client's generic call, which every
    client version has.
  - Check mode sends the same requests as server-side dry runs (C(dryRun=All)); with --diff each changed object
    shows its before and after.
  - Takes the connection options of kubernetes.core (O(kubeconfig), O(context), ...).
options:
  definitions:
    description: The objects, applied in this order.
    type: list
    elements: dict
    required: true
  field_manager:
    description: The field manager that owns what this apply sets.
    type: str
    required: true
  force_conflicts:
    description: Take over fields another manager owns.
    type: bool
    default: true
  wait_condition:
    description:
      - Wait until each object has this condition (C(type), C(status)), as in C(kubernetes.core.k8s), once all of
        them are applied (a CRD becomes Established while the next ones are applied).
      - Not in check mode.
    type: dict
  wait_timeout:
    description: Seconds to wait for O(wait_condition), from the last object applied.
    type: int
    default: 120
  wait_sleep:
    description: Seconds between two reads while waiting.
    type: int
    default: 1
  rollouts:
    description:
      - One flag per object of O(definitions) (missing ones are false). A flagged Deployment must roll out (its new
        spec observed, every replica updated and available, no old one left) before the next object is applied.
      - Not in check mode.
    type: list
    elements: bool
    default: []
  rollout_timeout:
    description: Seconds to wait for one flagged Deployment to roll out.
    type: int
    default: 300
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
author:
  - envoy block maintainers
"""

EXAMPLES = r"""
- name: Apply the block's objects
  polycrate_blocks.envoy.k8s_apply:
    definitions: "{{ objects }}"
    field_manager: polycrate-envoy
"""

RETURN = r"""
result:
  description: One entry per object, in order.
  returned: always
  type: dict
  contains:
    results:
      description: C(changed), C(method) (C(create) or C(apply)) and the object as applied (C(result)).
      type: list
      elements: dict
"""

import copy
import json
import time
from collections.abc import Callable
from typing import Any

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService

# Set by the API server on every write; not part of what the block asked for.
VOLATILE = ("resourceVersion", "managedFields", "generation", "creationTimestamp", "uid")


def argspec() -> dict[str, Any]:
    args: dict[str, Any] = copy.deepcopy(AUTH_ARG_SPEC)
    args["definitions"] = {"type": "list", "elements": "dict", "required": True}
    args["field_manager"] = {"type": "str", "required": True}
    args["force_conflicts"] = {"type": "bool", "default": True}
    args["wait_condition"] = {"type": "dict"}
    args["wait_timeout"] = {"type": "int", "default": 120}
    args["wait_sleep"] = {"type": "int", "default": 1}
    args["rollouts"] = {"type": "list", "elements": "bool", "default": []}
    args["rollout_timeout"] = {"type": "int", "default": 300}
    return args


def rolled_out(obj: dict[str, Any]) -> bool:
    """A Deployment whose current spec is observed and fully rolled out: every replica updated and available,
    no old one left (what `kubectl rollout status` waits for)."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    replicas = int(spec.get("replicas", 1))
    return (
        int(status.get("observedGeneration", 0)) >= int((obj.get("metadata") or {}).get("generation", 0))
        and int(status.get("updatedReplicas", 0)) == replicas
        and int(status.get("availableReplicas", 0)) == replicas
        and int(status.get("replicas", 0)) == replicas
    )


def comparable(obj: dict[str, Any] | None) -> dict[str, Any] | None:
    """`obj` without what the server changes on any write (and without status), for changed and diff."""
    if obj is None:
        return None
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in VOLATILE}
    return {**{k: v for k, v in obj.items() if k != "status"}, "metadata": meta}


def has_condition(obj: dict[str, Any], wanted: dict[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == wanted["type"] and str(c.get("status")) == str(wanted["status"]) for c in conditions)


def await_condition(
    read: Callable[[], dict[str, Any]],
    wanted: dict[str, Any],
    deadline: float,
    pause: float,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any] | None:
    """The object as read once it has the condition `wanted`, read again after each pause; None once `deadline`
    (a `clock` time) has passed without it. The first read comes before any pause: an object that already has
    it costs no sleep."""
    while True:
        obj = read()
        if has_condition(obj, wanted):
            return obj
        if clock() > deadline:
            return None
        sleep(pause)


def refusal(exc: Exception) -> str:
    """The API server's own message from a failed request (its Status body), else the exception."""
    body = getattr(exc, "body", None)
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else str(body or exc)
    try:
        return str(json.loads(text)["message"])
    except (TypeError, ValueError, KeyError):
        return text


def main() -> None:
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=True)
    params = module.params
    results: list[dict[str, Any]] = []
    diffs: list[dict[str, Any]] = []
    where = ""
    wanted = params["wait_condition"]
    waiting: list[tuple[int, Any, dict[str, Any]]] = []  # (index in results, resource, definition)
    try:
        svc = K8sService(get_api_client(module), module)
        dynamic = svc.client.client  # kubernetes.dynamic.DynamicClient, any version
        for index, definition in enumerate(params["definitions"]):
            meta = definition["metadata"]
            where = f"{definition['kind']} {'/'.join(filter(None, (meta.get('namespace'), meta['name'])))}"
            resource = svc.find_resource(definition["kind"], definition["apiVersion"], fail=True)
            path = resource.path(name=meta["name"], namespace=meta.get("namespace"))
            try:
                before_dict = dynamic.get(resource, name=meta["name"], namespace=meta.get("namespace")).to_dict()
            except Exception as exc:  # kubernetes.dynamic's NotFoundError, known by its status
                if getattr(exc, "status", None) != 404:
                    raise
                before_dict = None
            query = [("fieldManager", params["field_manager"])]
            if params["force_conflicts"]:
                query.append(("force", "true"))
            if module.check_mode:
                query.append(("dryRun", "All"))
            # Bytes, not a dict: kubernetes < 25 serialises only JSON content types itself.
            after = dynamic.request(
                "patch",
                path,
                body=json.dumps(definition).encode(),
                content_type="application/apply-patch+yaml",
                query_params=query,
            ).to_dict()
            changed = comparable(before_dict) != comparable(after)
            if wanted and not module.check_mode and not has_condition(after, wanted):
                waiting.append((len(results), resource, definition))
            rollout = index < len(params["rollouts"]) and params["rollouts"][index]
            if rollout and definition["kind"] == "Deployment" and not module.check_mode:
                deadline = time.monotonic() + params["rollout_timeout"]
                while not rolled_out(after):
                    if time.monotonic() > deadline:
                        module.fail_json(
                            msg=f"Deployment {meta['name']} did not roll out in {params['rollout_timeout']} s (its "
                            "pods do not become available with the new spec); nothing after it was applied, so "
                            "what depends on it (the WAF's EnvoyExtensionPolicy) is not in the request path. "
                            "Read its pods' logs (kubectl logs) and fix the config",
                            result={"results": results},
                        )
                    time.sleep(params["wait_sleep"])
                    after = dynamic.get(resource, name=meta["name"], namespace=meta.get("namespace")).to_dict()
            results.append({"changed": changed, "method": "apply" if before_dict else "create", "result": after})
            if changed and module._diff:
                diffs.append({"before": comparable(before_dict) or {}, "after": comparable(after)})
        # The condition after the last apply, not after each: a new CRD is Established within about a second,
        # and a sleep per CRD made a first install wait about 20 s for 21 of them.
        deadline = time.monotonic() + params["wait_timeout"]
        for index, resource, definition in waiting:
            meta = definition["metadata"]
            where = f"{definition['kind']} {meta['name']}"

            def read(resource: Any = resource, meta: dict[str, Any] = meta) -> dict[str, Any]:
                name, namespace = meta["name"], meta.get("namespace")
                obj: dict[str, Any] = dynamic.get(resource, name=name, namespace=namespace).to_dict()
                return obj

            found = await_condition(read, wanted, deadline, params["wait_sleep"])
            if found is None:
                module.fail_json(
                    msg=f"{where} is not {wanted['type']}={wanted['status']} after {params['wait_timeout']} s",
                    result={"results": results},
                )
            results[index]["result"] = found
    except CoreException as exc:
        module.fail_from_exception(exc)
    except Exception as exc:  # noqa: BLE001 - the API's refusal, said once with the object it was about
        module.fail_json(msg=f"server-side apply of {where} failed: {refusal(exc)}", result={"results": results})
    output: dict[str, Any] = {"changed": any(r["changed"] for r in results), "result": {"results": results}}
    if diffs:
        output["diff"] = diffs
    module.exit_json(**output)


if __name__ == "__main__":
    main()
