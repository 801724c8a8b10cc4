"""A vars plugin that adds no variables: it keeps Ansible from warning that `block` and `action` are reserved names.

Polycrate passes its workspace snapshot as extra-vars (`-e @snapshot.yml`) whose top-level keys are exactly `block`
and `action`, so no block can rename them, and ansible-core warned about both on every run (14 lines, half of a
successful render). A vars plugin is the block's only code that Ansible loads before it loads the playbook (where
the warning is first given; the stdout callback comes later). Every other warning is shown as before."""

from __future__ import annotations

import re
from typing import Any

from ansible.plugins.vars import BaseVarsPlugin
from ansible.utils.display import Display

DOCUMENTATION = r"""
name: quiet
short_description: No variables; silences the reserved-name warnings for Polycrate's block and action
description:
  - Adds no variables. Drops exactly ansible-core's warning that C(block) or C(action) is a reserved name,
    because Polycrate passes its snapshot under those names and every run of a Polycrate block would warn.
  - Enabled by the block's ansible.cfg (vars_plugins_enabled) and its Polycrate actions (ANSIBLE_VARS_ENABLED).
version_added: "0.15.2"
options:
  stage:
    ini:
      - key: stage
        section: vars_quiet
    env:
      - name: ANSIBLE_VARS_PLUGIN_STAGE
"""

# ansible-core 2.19 and 2.18 (Polycrate's image) word it so.
POLYCRATE_VARS = re.compile(r"Found variable using reserved name:? '?(block|action)'?\.?")


def quiet(display: Any) -> None:
    """Wrap `display.warning` (the singleton every part of Ansible warns through) to drop exactly those."""
    if getattr(display, "_envoy_quiet", False):
        return
    warning = display.warning

    def filtered(msg: Any, *args: Any, **kwargs: Any) -> None:
        if isinstance(msg, str) and POLYCRATE_VARS.fullmatch(msg.strip()):
            return
        warning(msg, *args, **kwargs)

    display.warning = filtered
    display._envoy_quiet = True


quiet(Display())


class VarsModule(BaseVarsPlugin):  # type: ignore[misc]  # ansible-core ships no type hints
    def get_vars(self, loader: Any, path: Any, entities: Any, cache: bool = True) -> dict[str, Any]:
        return {}
