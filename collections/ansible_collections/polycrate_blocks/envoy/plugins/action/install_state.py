"""Decide from install's one read of the cluster what the run must do, or stop it cleanly, once."""

from __future__ import annotations

import json
from typing import Any

from ansible.plugins.action import ActionBase
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import crds, lifecycle


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset({"read", "plan", "kubeconfig"})

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        # Plain data for the pure core: Ansible hands over tagged str/dict subclasses.
        args = json.loads(json.dumps({k: self._task.args.get(k) for k in self._VALID_ARGS}))
        read, plan = args["read"] or {}, args["plan"]
        if "results" not in read:
            answer = " ".join(str(read.get("msg") or "no answer").split())[:400]
            return {
                **result,
                "failed": True,
                "msg": f"Cannot talk to the Kubernetes API server with kubeconfig {args['kubeconfig']}: {answer}. "
                "Check that the cluster is up and that the kubeconfig (block.kubeconfig.path, or KUBECONFIG) "
                "points at it with valid credentials. Nothing was changed.",
            }
        settings = plan["crds"]
        try:
            digest = crds.source_digest(settings)
        except OSError as exc:
            return {**result, "failed": True, "msg": f"Cannot read the CRD source {exc.filename}: {exc.strerror}."}
        live = [obj for r in read["results"] if r["item"]["purpose"] == "crds" for obj in r["resources"]]
        current = crds.source_current(
            live,
            digest,
            settings["gateway_api"]["install"],
            settings["gateway_api"]["channel"],
            str(settings["envoy_gateway"]["version"]),
        )
        state = lifecycle.install_state(read["results"], plan, current)
        if state["problems"]:
            return {
                **result,
                "failed": True,
                "msg": f"install cannot start: {len(state['problems'])} problem(s), under `problems`. "
                "Nothing was changed.",
                "problems": "".join(f"{problem}\n" for problem in state["problems"]),
            }
        # crd_manifests stamps the CRDs it reads with this same digest.
        return {**result, "changed": False, "crd_source": digest, **state}
