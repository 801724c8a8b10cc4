"""What the block's action plugins share: Polycrate's `block` argument as plain data, and failures that
Ansible shows once and cleanly (a result with `failed`, never an exception trace through templating)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from ansible.plugins.action import ActionBase
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import config, inputs, polycrate


class BlockAction(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    """An action on the controller that takes `block` and runs the pure core; no module, no connection."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset({"block"})
    # Polycrate's `workspace` snapshot variable, when the action runs under Polycrate (set by run()).
    workspace: Any = None

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        self.workspace = (task_vars or {}).get("workspace")
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


def config_failure(error: config.ConfigError, consequence: str) -> dict[str, Any]:
    """Every problem once, in `problems`; the message (which Ansible prints twice) only summarises.

    `problems` is one text, a line per problem ending in a newline: the YAML result format prints it as a
    literal block, so no line is folded or re-quoted (a list of one-line strings would be, at 80 columns).
    """
    return {
        "failed": True,
        "msg": f"{error.summary}, each with its config path and fix under `problems`; {consequence}",
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
