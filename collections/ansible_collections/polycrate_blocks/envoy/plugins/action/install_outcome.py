"""Wait for what install applied, when lifecycle.outcome says so, and return the summary lines: the last step
of install. The role passes what it registered; every condition is decided here."""

from __future__ import annotations

from typing import Any

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import PlanAction, read_cluster
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.lifecycle import outcome
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.lifecycle.install import (
    InstallDecision,
)
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.plan import Plan


class ActionModule(PlanAction):
    # The connection options arrive from module_defaults (group/polycrate_blocks.envoy.k8s).
    _VALID_ARGS = frozenset({"plan", "decision", "crds_applied", "applied", *AUTH_ARG_SPEC})

    def act(self, plan: Plan) -> dict[str, Any]:
        args = self._task.args
        decision = InstallDecision.from_dict(dict(args.get("decision") or {}))
        crds_applied = int(args.get("crds_applied") or 0)
        objects = outcome.applied_objects(list(args.get("applied") or []))
        queries = outcome.final_wait(plan, decision, outcome.changed(decision, crds_applied, objects))
        gateways = list(decision.gateways)
        if queries:
            connection = {k: v for k, v in args.items() if k in AUTH_ARG_SPEC}
            module_args = {**connection, "queries": queries, "wait_timeout": plan.wait.timeout}
            read = read_cluster(self, module_args, self.task_vars)
            if read.get("failed"):
                return read
            gateways = outcome.waited_gateways(read["results"])
        return {
            "changed": False,
            "waited": bool(queries),
            "lines": outcome.summary(plan, decision, objects, crds_applied, gateways),
        }
