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
        objects (CRDs) are not shipped back whole.
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
- name: List the objects this block instance owns
  polycrate_blocks.envoy.k8s_list:
    queries: "{{ plan | polycrate_blocks.envoy.owned_kinds }}"
    label_selectors: ["app.kubernetes.io/instance=envoy"]
  register: owned
"""

RETURN = r"""
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
      description: The objects found (empty when the kind is not served).
      type: list
"""

import copy
from typing import Any

from ansible_collections.kubernetes.core.plugins.module_utils.ansiblemodule import AnsibleModule
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.core import AnsibleK8SModule
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.exceptions import CoreException
from ansible_collections.kubernetes.core.plugins.module_utils.k8s.service import K8sService


def argspec() -> dict[str, Any]:
    args: dict[str, Any] = copy.deepcopy(AUTH_ARG_SPEC)
    args["queries"] = {"type": "list", "elements": "dict", "required": True}
    args["label_selectors"] = {"type": "list", "elements": "str", "default": []}
    args["metadata_only"] = {"type": "bool", "default": False}
    args["wait_timeout"] = {"type": "int", "default": 120}
    args["wait_sleep"] = {"type": "int", "default": 1}
    return args


def _metadata(obj: dict[str, Any]) -> dict[str, Any]:
    meta = {k: v for k, v in obj.get("metadata", {}).items() if k != "managedFields"}
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": meta}


def main() -> None:
    module = AnsibleK8SModule(module_class=AnsibleModule, argument_spec=argspec(), supports_check_mode=True)
    results: list[dict[str, Any]] = []
    try:
        svc = K8sService(get_api_client(module), module)
        for query in module.params["queries"]:
            condition = query.get("wait_condition")
            try:
                found = svc.find(
                    query["kind"],
                    query.get("api_version", "v1"),
                    name=query.get("name"),
                    namespace=query.get("namespace") or None,
                    label_selectors=query.get("label_selectors") or module.params["label_selectors"],
                    wait=bool(condition) and not module.check_mode,
                    wait_sleep=module.params["wait_sleep"],
                    wait_timeout=module.params["wait_timeout"],
                    condition=condition,
                )
            except CoreException as exc:
                if not condition:
                    raise
                where = "/".join(str(query[k]) for k in ("namespace", "name") if query.get(k))
                module.fail_json(
                    msg=f"{query['kind']} {where} is not {condition['type']}={condition['status']} after "
                    f"{module.params['wait_timeout']} s ({exc}): `status` shows its conditions",
                    results=results,
                )
            resources = found["resources"]
            if module.params["metadata_only"]:
                resources = [_metadata(obj) for obj in resources]
            results.append({"item": query, "api_found": found["api_found"], "resources": resources})
    except CoreException as exc:
        module.fail_from_exception(exc)
    module.exit_json(changed=False, results=results)


if __name__ == "__main__":
    main()
