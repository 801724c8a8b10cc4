"""Select the CRDs the config needs from their source (crds.from_source) and, given the cluster's, keep those
it does not hold as the block last applied them (crds.stale): what install applies and uninstall removes.
Fails once, naming what the source lacks; nothing is applied then."""

from __future__ import annotations

import json
from typing import Any

from ansible.plugins.action import ActionBase
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import crds


class ActionModule(ActionBase):  # type: ignore[misc]  # ansible-core ships no type hints
    TRANSFERS_FILES = False
    _requires_connection = False
    _VALID_ARGS = frozenset({"settings", "rendered", "origin", "live"})

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = super().run(tmp, task_vars)
        # Plain data for the pure core: Ansible hands over tagged str/dict subclasses.
        args = json.loads(json.dumps(dict(self._task.args)))
        try:
            selected = crds.from_source(
                args["settings"], str(args.get("rendered") or ""), str(args.get("origin") or "")
            )
        except crds.CrdError as exc:
            return {**result, "failed": True, "msg": str(exc)}
        except OSError as exc:
            return {**result, "failed": True, "msg": f"Cannot read the CRD source {exc.filename}: {exc.strerror}."}
        chosen = crds.stale(selected["crds"], args["live"]) if "live" in args else selected["crds"]
        return {**result, "changed": False, "definitions": chosen, "count": len(chosen), "refs": selected["refs"]}
