"""What the block's action plugins share: Polycrate's `block` argument as plain data, and failures that
Ansible shows once and cleanly (a result with `failed`, never an exception trace through templating)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from ansible.plugins.action import ActionBase
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import (
    cluster_access,
    config,
    inputs,
    polycrate,
)
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.plan import Plan


class BlockAction(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """An action on the controller that takes `block` and runs the pure core; no module, no connection."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset({"block"})
    # Polycrate's `workspace` snapshot variable, when the action runs under Polycrate, and the task's
    # variables (both set by run()).
    workspace: Any = None
    task_vars: dict[str, Any] = {}  # noqa: RUF012  # replaced per run, never mutated

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        self.task_vars = task_vars or {}
        self.workspace = self.task_vars.get("workspace")
        block = self._task.args.get("block")
        if not isinstance(block, Mapping):
            return {
                **result,
                "failed": True,
                "msg": f'{self._task.action}: pass Polycrate\'s block variable as `block: "{{{{ block }}}}"` '
                f"(got {type(block).__name__})",
            }
        # Plain data for the pure core: Ansible hands over tagged str/dict subclasses.
        # (Dates and bytes stay as such: config.load refuses them with their config path.)
        plain: dict[str, Any] = inputs.untag(dict(block))
        result.update(self.act(plain))
        return result

    def act(self, block: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError


class PlanAction(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """An action on the controller that takes the plan the config role built (`envoy_config_plan`, built and
    serialised once per run), rebuilds the typed Plan from it once (Plan.from_dict: a stale or altered fact
    stops here, naming the path) and decides from one read of the cluster; no module of its own, no
    connection."""

    TRANSFERS_FILES = False
    _requires_connection = False
    task_vars: dict[str, Any] = {}  # noqa: RUF012  # replaced per run, never mutated

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        self.task_vars = task_vars or {}
        plan = self._task.args.get("plan")
        if not isinstance(plan, Mapping) or "objects" not in plan:
            return {
                **result,
                "failed": True,
                "msg": f'{self._task.action}: pass the plan the envoy_config role built as `plan: "{{{{ '
                f'envoy_config_plan }}}}"` (got {type(plan).__name__})',
            }
        try:
            typed = fact_plan(plan)
        except ValueError as exc:
            return {**result, "failed": True, "msg": f"{self._task.action}: {plan_refusal(exc)}"}
        result.update(self.act(typed))
        return result

    def act(self, plan: Plan) -> dict[str, Any]:
        raise NotImplementedError


def fact_plan(plan: Mapping[str, Any]) -> Plan:
    """The typed Plan from the `envoy_config_plan` fact: the one crossing from plain data (ValueError when the
    fact is not what this block's Plan.to_dict writes)."""
    # Plain data first: Ansible hands over tagged str/dict subclasses.
    return Plan.from_dict(json.loads(json.dumps(dict(plan))))


def plan_refusal(error: ValueError) -> str:
    return f"the plan (envoy_config_plan) cannot be read: {error}. Nothing was changed."


def config_failure(error: config.ConfigError, consequence: str) -> dict[str, Any]:
    """Every problem once, in `problems`; the message (which Ansible prints twice) only summarises.

    `problems` is one text, a line per problem ending in a newline: the YAML result format prints it as a
    literal block, so no line is folded or re-quoted (a list of one-line strings would be, at 80 columns).
    """
    return {
        "failed": True,
        "msg": f"{error.summary}, each with its fix under `problems`; {consequence}",
        "problems": "".join(f"{problem}\n" for problem in error.problems),
    }


def lowercased_key_warnings(block: Mapping[str, Any], workspace: Any) -> list[str]:
    """Under Polycrate: the config keys workspace.poly spells with capitals, which reach the block lower-cased.
    The snapshot cannot show them, so the workspace file is read (`workspace` is the snapshot's: its `path`, in
    the mode the action runs in, and the file name Polycrate read)."""
    if not isinstance(workspace, Mapping) or not workspace.get("path"):
        return []
    name = str((workspace.get("config") or {}).get("workspaceconfig") or "workspace.poly")
    try:
        doc = yaml.safe_load((Path(str(workspace["path"])) / name).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return []  # unreadable: Polycrate itself reports a broken workspace
    return polycrate.lowercased_keys(doc, str(block.get("name") or "")) if isinstance(doc, dict) else []


def read_cluster(action: ActionBase, module_args: Mapping[str, Any], task_vars: Mapping[str, Any]) -> dict[str, Any]:
    """Run the k8s_list module; when the API server cannot be reached, one message naming the cause, the
    server and the kubeconfig (`envoy_config_kubeconfig_source`, as the config role found it)."""
    answer: dict[str, Any] = action._execute_module(
        module_name="polycrate_blocks.envoy.k8s_list", module_args=dict(module_args), task_vars=dict(task_vars)
    )
    if answer.get("failed") and answer.get("api_error"):
        source = task_vars.get("envoy_config_kubeconfig_source") or str(
            module_args.get("kubeconfig") or "KUBECONFIG or ~/.kube/config"
        )
        # Only the message: the module's own error (ansible-core 2.19 prints it as well) and its partial
        # results would push the cause away from the end of the output.
        message = cluster_access.unreachable_message(str(answer.get("msg")), str(answer.get("server") or ""), source)
        return {"failed": True, "changed": False, "msg": message}
    return answer
