"""Validate and write the whole render in one step: changed files only, stale files removed, check mode
and diff supported. On a bad config, or any failure while rendering, the previous render is removed, so it
cannot pass for current; a changed render is swapped in whole (artifacts.sync), never half-written."""

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
    waf_check,
)
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.model import Problem


class ActionModule(BlockAction):
    _VALID_ARGS = frozenset({"block", "dest"})

    def refuse(self, error: config.ConfigError, folder: Path | None = None) -> dict[str, Any]:
        """The config failure, with the previous render removed (or, in check mode, said to be)."""
        check = bool(self._task.check_mode)
        try:
            removed = artifacts.remove(folder, render.OWNED, check) if folder else []
        except OSError as exc:
            return config_failure(error, f"nothing was rendered, and the previous render could not be removed: {exc}")
        if not removed:
            consequence = "nothing was rendered"
        elif check:
            consequence = f"nothing was rendered; a real run removes the previous render in {folder}"
        else:
            consequence = f"nothing was rendered, and the previous render in {folder} was removed"
        return config_failure(error, consequence)

    def act(self, block: dict[str, Any]) -> dict[str, Any]:
        dest = self._task.args.get("dest") or (block.get("artifacts") or {}).get("path")
        if not dest:
            return {"failed": True, "msg": "render: set dest, or pass a block with artifacts.path"}
        folder = Path(str(dest))
        check = bool(self._task.check_mode)
        section = "config"
        try:
            try:
                plan = builder.plan_from_block(block)
                section = "config.waf.extra_directives"
                if found := waf_check.plan_problems(plan.steps):
                    raise config.ConfigError(found)
                section = "config"
                files = render.files(plan)
            except config.ConfigError as exc:
                return self.refuse(exc, folder)
            except builder.BuildError as exc:
                problem = Problem(
                    f"config.{exc.section}" if exc.section != "config" else "config",
                    f"rendering failed while building this section ({exc}); this is a bug the checks missed: "
                    "please report it with this section of your config",
                )
                return self.refuse(config.ConfigError([problem]), folder)
            except Exception as exc:  # noqa: BLE001  # the last resort: never a bare "Task failed"
                problem = Problem(
                    section, f"rendering failed ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
                )
                return self.refuse(config.ConfigError([problem]), folder)
            outcome = artifacts.sync(folder, files, render.OWNED, check)
        except OSError as exc:
            where = exc.filename or folder
            try:
                artifacts.remove(folder, render.OWNED, check)
                gone = "; the previous render was removed"
            except OSError:
                gone = ""
            return {
                "failed": True,
                "msg": f"render: cannot write {where}: {exc.strerror or exc}{gone}; "
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
