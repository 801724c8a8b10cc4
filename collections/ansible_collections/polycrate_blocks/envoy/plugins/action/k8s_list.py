"""Run the k8s_list module; when the API server cannot be reached, say why in one message."""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import cluster_access


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    TRANSFERS_FILES = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        answer: dict[str, Any] = self._execute_module(
            module_name="polycrate_blocks.envoy.k8s_list", module_args=self._task.args, task_vars=task_vars
        )
        if answer.get("failed") and answer.get("api_error"):
            source = (task_vars or {}).get("envoy_config_kubeconfig_source") or str(
                self._task.args.get("kubeconfig") or "KUBECONFIG or ~/.kube/config"
            )
            # Only the message: the module's own error (ansible-core 2.19 prints it as well) and its partial
            # results would push the cause away from the end of the output.
            server = str(answer.get("server") or "")
            message = cluster_access.unreachable_message(str(answer.get("msg")), server, source)
            answer = {"failed": True, "changed": False, "msg": message}
        result.update(answer)
        return result
