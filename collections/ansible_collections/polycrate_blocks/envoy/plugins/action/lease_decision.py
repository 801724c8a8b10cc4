"""Read the controller's leader Lease and pods once, decide with lifecycle.stale_lease, and with `free` delete a
stale one on the resourceVersion read: a live replica then takes the lease at its next retry, and a lease a new
leader took meanwhile is not touched (the API server answers 409 Conflict: no fault). With `waits`
(lifecycle.controller_waits: the controller helm rolled ready, the previous one stopped), the same k8s_list
run waits for those first: one module start instead of three (each costs about a second of CPU)."""

from __future__ import annotations

from typing import Any

from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import PlanAction, read_cluster
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import lifecycle
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.plan import Plan


class ActionModule(PlanAction):
    # The connection options arrive from module_defaults (group/polycrate_blocks.envoy.k8s).
    _VALID_ARGS = frozenset({"plan", "free", "waits", "wait_timeout", *AUTH_ARG_SPEC})

    def act(self, plan: Plan) -> dict[str, Any]:
        connection = {k: v for k, v in self._task.args.items() if k in AUTH_ARG_SPEC}
        waits = list(self._task.args.get("waits") or [])
        queries = [*waits, *lifecycle.lease_lookups(plan)]
        timing = {"wait_timeout": int(self._task.args["wait_timeout"])} if "wait_timeout" in self._task.args else {}
        read = read_cluster(self, {**connection, **timing, "queries": queries}, self.task_vars)
        if read.get("failed"):
            return read
        lease, pods = (result["resources"] for result in read["results"][len(waits) :])
        found = lifecycle.stale_lease(lease, pods)
        decided = {
            "changed": False,
            "stale": bool(found),
            "holder": found.get("holder", ""),
            "resource_version": found.get("resource_version", ""),
        }
        if not found or not boolean(self._task.args.get("free", False), strict=False):
            return decided
        deleted: dict[str, Any] = self._execute_module(
            module_name="kubernetes.core.k8s",
            module_args={
                **connection,
                "api_version": "coordination.k8s.io/v1",
                "kind": "Lease",
                "name": plan.controller.lease,
                "namespace": plan.namespace.name,
                "state": "absent",
                "wait": False,
                "delete_options": {"preconditions": {"resourceVersion": decided["resource_version"]}},
            },
            task_vars=self.task_vars,
        )
        if deleted.get("failed") and "Conflict" not in str(deleted.get("msg", "")):
            return {**decided, "failed": True, "msg": f"Freeing the stale lease failed: {deleted.get('msg')}"}
        return {**decided, "changed": bool(deleted.get("changed")), "freed": not deleted.get("failed")}
