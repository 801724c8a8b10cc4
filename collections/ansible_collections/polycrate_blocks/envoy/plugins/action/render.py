"""Validate and write the whole render in one step: changed files only, stale files removed, check mode
and diff supported. On a bad config the previous render is removed, so it cannot pass for current."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import (
    BlockAction,
    config_failure,
    lowercased_key_warnings,
)
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import (
    artifacts,
    builder,
    config,
    render,
)


class ActionModule(BlockAction):
    _VALID_ARGS = frozenset({"block", "dest"})

    def act(self, block: dict[str, Any]) -> dict[str, Any]:
        dest = self._task.args.get("dest") or (block.get("artifacts") or {}).get("path")
        if not dest:
            return {"failed": True, "msg": "render: set dest, or pass a block with artifacts.path"}
        folder = Path(str(dest))
        check = bool(self._task.check_mode)
        try:
            try:
                plan = builder.plan_from_block(block)
            except config.ConfigError as exc:
                removed = artifacts.remove(folder, render.OWNED, check)
                if not removed:
                    consequence = "nothing was rendered"
                elif check:
                    consequence = f"nothing was rendered; a real run removes the previous render in {folder}"
                else:
                    consequence = f"nothing was rendered, and the previous render in {folder} was removed"
                return config_failure(exc, consequence)
            outcome = artifacts.sync(folder, render.files(plan), render.OWNED, check)
        except OSError as exc:
            where = exc.filename or folder
            return {
                "failed": True,
                "msg": f"render: cannot write {where}: {exc.strerror or exc}; "
                "block.artifacts.path (or dest) must be a folder this user can write",
            }
        result: dict[str, Any] = {
            "changed": outcome.changed,
            "dest": str(folder),
            "written": outcome.written,
            "removed": outcome.removed,
            "warnings": [*plan.warnings, *lowercased_key_warnings(block, self.workspace)],
        }
        if self._task.diff and outcome.diffs:
            result["diff"] = outcome.diffs
        return result
