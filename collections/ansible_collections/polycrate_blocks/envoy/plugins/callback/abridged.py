"""Ansible's default screen output, with large result values abridged below -vvv."""

from __future__ import annotations

DOCUMENTATION = r"""
name: abridged
type: stdout
short_description: Ansible's default output without the block's large results below -vvv
description:
  - The C(ansible.builtin.default) callback, except that at verbosity 1 and 2 a result value larger than
    O(max_chars) (the plan, the applied objects, a rendered CRD chart) is shown as its size. Polycrate runs
    actions with C(ANSIBLE_VERBOSITY=1) by default, which would print every task's whole result.
  - C(msg), C(problems) and the other small values of a result are shown as the default callback shows them, so
    a failure still ends with its message. C(-vvv) shows everything.
version_added: "0.11.0"
extends_documentation_fragment:
  - default_callback
  - result_format_callback
options:
  max_chars:
    description: Largest value, in characters of JSON, shown whole below -vvv.
    type: int
    default: 2000
    env:
      - name: ENVOY_BLOCK_RESULT_MAX_CHARS
requirements:
  - set as stdout callback (the block's ansible.cfg and its Polycrate actions do)
"""

import json
from collections.abc import Mapping
from typing import Any

from ansible.plugins.callback.default import CallbackModule as DefaultCallback

# Kept whole at any size: what a failure or a summary says.
KEEP = frozenset({"msg", "problems", "failed", "changed", "skipped", "rc", "stderr"})


class CallbackModule(DefaultCallback):  # type: ignore[misc]  # ansible-core ships no type hints
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "polycrate_blocks.envoy.abridged"

    def _dump_results(self, result: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        if self._display.verbosity < 3:
            result = abridge(result, int(self.get_option("max_chars")))
        return super()._dump_results(result, *args, **kwargs)


def abridge(result: Mapping[str, Any], limit: int) -> dict[str, Any]:
    """`result` with every top-level value larger than `limit` characters of JSON replaced by its size."""
    out: dict[str, Any] = {}
    for key, value in result.items():
        if key in KEEP or key.startswith("_ansible"):
            out[key] = value
            continue
        size = len(json.dumps(value, default=str))
        out[key] = value if size <= limit else f"({size // 1024 or 1} KB, shown with -vvv)"
    return out
