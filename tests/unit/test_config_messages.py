"""Invariant: what validation tells a user does not change by accident: for every config the test suite
loads that is invalid or warns, the full error text (every problem, in order) and the warnings (in order)
are exactly what config_messages.jsonl recorded.

The corpus was recorded before the validation rules moved out of config.py into the components (issue
21): every `config.load` of a full unit-suite run, kept where it failed or warned (210 configs; the six
whose message names the test's working folder are left out), plus three configs that raise every
component's warnings, or several components' problems, at once (their outcomes also recorded before the
move). A refactor that drops a rule, rewords a message, changes a path or reorders the warnings turns a
case red. Mutation check (done once, restored): swapping the order in which config.load calls the
proxies' and the WAF's checks turned the two every-warning cases red; skipping traffic_policies' rule on
proxy_protocol.optional turned two cases red. `make unit` runs it in Polycrate's image Python too, where it
first went red on jsonschema 3.2's wording of an empty list ("[] is too short"), now worded alike.

A deliberate change of wording regenerates the corpus for the recorded configs, then review the diff:

    PYTHONPATH=collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils \
      .venv/bin/python -m tests.unit.test_config_messages --update
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from envoy_block import config

CORPUS = Path(__file__).with_name("config_messages.jsonl")


def _cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]


def outcome(block: dict[str, Any]) -> dict[str, Any]:
    """What a user sees for `block`: the whole error text, or the warnings of a valid config."""
    try:
        loaded = config.load(block)
    except config.ConfigError as exc:
        return {"error": str(exc)}
    return {"warnings": list(loaded.warnings)}


CASES = _cases()


def test_the_corpus_covers_errors_and_warnings() -> None:
    assert sum("error" in case for case in CASES) > 100
    assert sum(bool(case.get("warnings")) for case in CASES) > 30


@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_messages_are_unchanged(case: dict[str, Any]) -> None:
    expected = {key: case[key] for key in ("error", "warnings") if key in case}
    assert outcome(case["block"]) == expected


def _update() -> None:
    lines = [
        json.dumps({"block": case["block"], **outcome(case["block"])}, sort_keys=True, separators=(",", ":"))
        for case in CASES
    ]
    CORPUS.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        raise SystemExit(__doc__)
    _update()
