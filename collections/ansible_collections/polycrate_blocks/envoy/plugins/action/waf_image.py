"""Validate the config and decide how the waf-image action builds and pushes the WAF image (envoy_block.waf_image):
the builders on PATH are looked up here, the rest is the pure decision. Fails once, cleanly, before any command
runs: a bad config (every problem by config path), the placeholder image, no builder."""

from __future__ import annotations

import shutil
from typing import Any

from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import BlockAction, config_failure
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import config, paths, waf_image


class ActionModule(BlockAction):
    _VALID_ARGS = frozenset({"block", "private_dir"})

    def act(self, block: dict[str, Any]) -> dict[str, Any]:
        try:
            loaded = config.load(block)
        except config.ConfigError as exc:
            return config_failure(exc, "nothing was built")
        context = paths.WAF_CONTEXT
        found = {name: path for name in waf_image.BUILDERS if (path := shutil.which(name))}
        decision = waf_image.decide(loaded.values, found, str(context), str(self._task.args.get("private_dir") or ""))
        problems = list(decision.problems)
        if not (context / "Dockerfile").is_file():
            problems.append(f"{context}/Dockerfile is missing: the block's copy lacks the WAF's build context (waf/)")
        if problems:
            return {
                "failed": True,
                "msg": f"waf-image cannot start: {len(problems)} problem(s), under `problems`. Nothing was built.",
                "problems": "".join(f"{problem}\n" for problem in problems),
            }
        return {"changed": False, **decision.to_dict()}
