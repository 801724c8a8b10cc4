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
  - With O(display_ok_hosts) false (the block's Polycrate actions set it), a task that is ok is still shown when it
    says something, that is C(debug) messages (install's summary, the status table) and warnings.
  - The results of the roles' argument checks are not printed below C(-vvv).
  - Below C(-vvv), render's lists of written and removed files are shown as their count when longer than 3.
  - A failed task whose message has several lines (the block's own messages about the cluster and the
    kubeconfig) is shown once, as its result; ansible-core 2.19 would print the same message before it again,
    with the task's source lines.
  - A failed task of the block that lists C(problems) (a refused config) is shown once too, problems first, so
    they are within the first lines of the output.
version_added: "0.11.0"
extends_documentation_fragment:
  - default_callback
  - result_format_callback
options:
  max_chars:
    description: Largest value, in characters of JSON, shown whole below -vvv.
    type: int
    default: 1000
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
KEEP = frozenset({"msg", "problems", "failed", "changed", "skipped", "rc", "stderr", "module_stderr", "module_stdout"})
# Ok results shown even with display_ok_hosts false: they are what the task is for.
SAYS = frozenset({"debug", "ansible.builtin.debug", "ansible.legacy.debug"})
# render's file lists: Polycrate runs actions at -v, where a first render would list every manifest.
LISTED = frozenset({"written", "removed"})
LISTED_MAX = 3
QUIET = frozenset({"validate_argument_spec", "ansible.builtin.validate_argument_spec"})


class CallbackModule(DefaultCallback):  # type: ignore[misc]  # ansible-core ships no type hints
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "stdout"
    CALLBACK_NAME = "polycrate_blocks.envoy.abridged"

    # `_task` and `_result`: the names both ansible-core 2.18 (Polycrate's image) and 2.19 have.
    def v2_runner_on_ok(self, result: Any) -> None:
        says = result._task.action in SAYS or bool(result._result.get("warnings"))
        if says and not self.get_option("display_ok_hosts"):
            self.set_option("display_ok_hosts", True)
            try:
                super().v2_runner_on_ok(result)
            finally:
                self.set_option("display_ok_hosts", False)
            return
        super().v2_runner_on_ok(result)

    def _run_is_verbose(self, result: Any, *args: Any, **kwargs: Any) -> bool:
        if result._task.action in QUIET and self._display.verbosity < 3:
            return False
        return bool(super()._run_is_verbose(result, *args, **kwargs))

    def _handle_exception(self, result: Any, *args: Any, **kwargs: Any) -> None:
        msg = result.get("msg")
        if self._display.verbosity < 3 and isinstance(msg, str) and ("\n" in msg or "problems" in result):
            # A message of several lines follows in the result, unfolded (a literal block); a one-line message is
            # left to ansible-core's own error line, the only place it is printed unfolded.
            result.pop("exception", None)
            return
        super()._handle_exception(result, *args, **kwargs)

    def _dump_results(self, result: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        if self._display.verbosity < 3:
            result = abridge(result, int(self.get_option("max_chars")))
        return super()._dump_results(result, *args, **kwargs)


def abridge(result: Mapping[str, Any], limit: int) -> dict[str, Any]:
    """`result` with every top-level value larger than `limit` characters of JSON replaced by its size."""
    out: dict[str, Any] = {}
    if "problems" in result:  # a refused config: its problems within the first lines (`changed: false` says nothing)
        result = {key: value for key, value in result.items() if key != "changed"}
    for key, value in result.items():
        if key in KEEP or key.startswith("_ansible"):
            out[key] = value
            continue
        if key in LISTED and isinstance(value, list) and len(value) > LISTED_MAX:
            out[key] = f"{len(value)} files (listed with -vvv)"
            continue
        size = len(json.dumps(value, default=str))
        out[key] = value if size <= limit else f"({size // 1024 or 1} KB, shown with -vvv)"
    return out
