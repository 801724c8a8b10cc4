"""Read what `status` reports on once, judge it with lifecycle.status, and return the table."""

from __future__ import annotations

from typing import Any

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import PlanAction, read_cluster
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import lifecycle
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.plan import Plan


class ActionModule(PlanAction):
    # The connection options arrive from module_defaults (group/polycrate_blocks.envoy.k8s).
    _VALID_ARGS = frozenset({"plan", *AUTH_ARG_SPEC})

    def act(self, plan: Plan) -> dict[str, Any]:
        connection = {k: v for k, v in self._task.args.items() if k in AUTH_ARG_SPEC}
        read = read_cluster(self, {**connection, "queries": lifecycle.status_lookups(plan)}, self.task_vars)
        if read.get("failed"):
            return read
        return {"changed": False, **lifecycle.status(plan, read["results"]).to_dict()}
