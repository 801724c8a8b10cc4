"""Read what uninstall needs once, decide with lifecycle.decide_uninstall, and return the decision (or stop
cleanly, nothing removed). The role only carries it out."""

from __future__ import annotations

import time
from typing import Any

from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import PlanAction, read_cluster
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import lifecycle
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.plan import Plan


class ActionModule(PlanAction):
    # The connection options arrive from module_defaults (group/polycrate_blocks.envoy.k8s).
    _VALID_ARGS = frozenset({"plan", "poll_delay", *AUTH_ARG_SPEC})

    def act(self, plan: Plan) -> dict[str, Any]:
        connection = {k: v for k, v in self._task.args.items() if k in AUTH_ARG_SPEC}
        queries = lifecycle.uninstall_lookups(plan)
        read = read_cluster(self, {**connection, "queries": queries}, self.task_vars)
        if read.get("failed"):
            return read
        observed = lifecycle.UninstallObserved.from_results(read["results"])
        decision = lifecycle.decide_uninstall(plan, observed)
        delay = max(1, int(self._task.args.get("poll_delay") or 2))
        deadline = time.monotonic() + float(plan.wait.timeout)
        controller = [q for q in queries if q["purpose"] == "controller"]
        # A controller pod on its way (a rollout, a restart): read it again until it is ready or the wait is over.
        while decision.await_controller:
            time.sleep(delay)
            again = read_cluster(self, {**connection, "queries": controller}, self.task_vars)
            if again.get("failed"):
                return again
            observed = observed.with_controller(next(iter(again["results"][0]["resources"]), None))
            decision = lifecycle.decide_uninstall(plan, observed, controller_waited=time.monotonic() >= deadline)
        if decision.refusals:
            return {"failed": True, "changed": False, "msg": " ".join(decision.refusals)}
        return {"changed": False, **decision.to_dict()}
