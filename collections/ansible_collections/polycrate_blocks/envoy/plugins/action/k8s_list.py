"""Run the k8s_list module; when the API server cannot be reached, say why in one message."""

from __future__ import annotations

from typing import Any

from ansible.plugins.action import ActionBase
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import read_cluster


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    TRANSFERS_FILES = False

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        result.update(read_cluster(self, self._task.args, task_vars or {}))
        return result
