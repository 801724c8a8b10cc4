"""Before the release is touched: helm must find chart.version at chart.repo.url. Runs `helm show chart REF
--version V` (the command module, on the play's connection) and judges its result with the pure
components.controller.chart_problem: for an OCI or https repository helm fails when the version is not there;
a local chart ignores --version, so its own version is compared. Fails once, naming what is wrong."""

from __future__ import annotations

from typing import Any

from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import PlanAction
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.components import controller
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.plan import Plan


class ActionModule(PlanAction):
    _requires_connection = True  # helm runs where the play's commands run
    _VALID_ARGS = frozenset({"plan"})

    def act(self, plan: Plan) -> dict[str, Any]:
        helm = plan.helm
        shown: dict[str, Any] = self._execute_module(
            module_name="ansible.builtin.command",
            module_args={"argv": ["helm", "show", "chart", helm.chart_ref, "--version", helm.chart_version]},
            task_vars=self.task_vars,
        )
        problem = controller.chart_problem(
            helm.to_dict(),
            int(shown.get("rc", 1)),
            str(shown.get("stdout", "")),
            str(shown.get("stderr", "") or shown.get("msg", "")),
        )
        if problem:
            return {"failed": True, "changed": False, "msg": problem}
        return {"changed": False, "chart": helm.chart_ref, "version": helm.chart_version}
