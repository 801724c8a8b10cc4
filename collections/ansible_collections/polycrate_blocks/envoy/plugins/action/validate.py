"""Validate block.config: every problem at once, by config path, in one clean task failure."""

from __future__ import annotations

from typing import Any

from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import (
    BlockAction,
    config_failure,
    lowercased_key_warnings,
)
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import builder, config, waf_check
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.components import waf


class ActionModule(BlockAction):
    _VALID_ARGS = frozenset({"block", "apply"})

    def act(self, block: dict[str, Any]) -> dict[str, Any]:
        try:
            loaded = config.load(block)
            plan = builder.build_plan(loaded)  # the limits on what it derives (names, ConfigMap size: limits.py)
            if self._task.args.get("apply") and (found := waf_check.plan_problems(plan.steps)):
                raise config.ConfigError(found)  # the WAF's own compiler, before install applies anything
        except config.ConfigError as exc:
            return config_failure(exc, "nothing was changed")
        except builder.BuildError as exc:
            problem = config.Problem(f"config.{exc.section}", f"building this section failed ({exc}); a bug: report it")
            return config_failure(config.ConfigError([problem]), "nothing was changed")
        # A config that renders may still not run: install and plan (apply) refuse what cannot start.
        unpublished = waf.unpublished_image(loaded.values)
        if unpublished is not None and self._task.args.get("apply"):
            return config_failure(config.ConfigError([unpublished]), "nothing was applied")
        return {
            "changed": False,
            "warnings": [*loaded.warnings, *lowercased_key_warnings(block, self.workspace)],
            # Built and serialised once per run: the roles after this one read it (no credentials in it).
            "ansible_facts": {"envoy_config_plan": plan.to_dict()},
        }
