"""Decide which kubeconfig the block's modules and helm use, or stop with one message naming where it looked."""

from __future__ import annotations

import os
from typing import Any

from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import BlockAction
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import cluster_access


class ActionModule(BlockAction):
    def act(self, block: dict[str, Any]) -> dict[str, Any]:
        try:
            found = cluster_access.find_kubeconfig(
                block, os.environ, os.path.isfile, os.path.expanduser(cluster_access.HOME_KUBECONFIG)
            )
        except cluster_access.NoKubeconfig as exc:
            return {"failed": True, "msg": str(exc)}
        return {
            "changed": False,
            "ansible_facts": {"envoy_config_kubeconfig": found.path, "envoy_config_kubeconfig_source": found.source},
        }
