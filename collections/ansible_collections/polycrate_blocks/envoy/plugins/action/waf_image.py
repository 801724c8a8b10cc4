"""Validate the config and decide how the waf-image action builds and pushes the WAF image (envoy_block.waf_image):
the builders on PATH are looked up here, the rest is the pure decision. Fails once, cleanly, before any command
runs: a bad config (every problem by config path), the placeholder image, no builder. Called again after the
push with `push_output`, it returns what to tell the user (waf_image.pushed: the digest from the file the push
wrote, or as the push printed it, and how to pin it)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import BlockAction, config_failure
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import config, paths, waf_image


class ActionModule(BlockAction):
    _VALID_ARGS = frozenset({"block", "private_dir", "push_output"})

    def act(self, block: dict[str, Any]) -> dict[str, Any]:
        try:
            loaded = config.load(block)
        except config.ConfigError as exc:
            return config_failure(exc, "nothing was built")
        if "push_output" in self._task.args:
            return {"changed": False, "message": self._pushed(loaded.values)}
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

    def _pushed(self, values: dict[str, Any]) -> str:
        """The digest file the push wrote in the private folder (buildah, podman; docker writes none)."""
        private_dir = str(self._task.args.get("private_dir") or "")
        try:
            digest_text = (Path(private_dir) / "digest").read_text(encoding="utf-8") if private_dir else ""
        except OSError:
            digest_text = ""
        return waf_image.pushed(values, str(self._task.args.get("push_output") or ""), digest_text)
