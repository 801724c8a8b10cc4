"""Regression: every config tools/fuzz.py found (tests/unit/fuzz_finds.jsonl, one a line with what went wrong)
is handled as promised by the fuzzer's own oracle (tools/fuzz.judge): refused with config paths, short messages
and no secret, or rendered within Kubernetes' limits. `make fuzz` prints how to add a find."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools import fuzz

FINDS = [json.loads(line) for line in Path(__file__).with_name("fuzz_finds.jsonl").read_text().splitlines() if line]


@pytest.mark.parametrize("case", FINDS, ids=[f"find{i}" for i in range(len(FINDS))])
def test_fuzz_find_is_handled(case: dict[str, Any]) -> None:
    assert fuzz.judge(fuzz.revive(case["config"])) is None, case["find"]


def test_the_oracle_sees_a_leak_and_a_pathless_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The oracle itself can fail: a message with the secret, and an exception without a path, are finds."""
    from envoy_block import builder, config

    def leaky(block: Any) -> Any:
        raise config.ConfigError([config.Problem("config.chart", f"bad {fuzz.SECRET}")])

    monkeypatch.setattr(builder, "plan_from_block", leaky)
    assert fuzz.judge({}) is not None

    def crash(block: Any) -> Any:
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setattr(builder, "plan_from_block", crash)
    assert fuzz.judge({}) is not None
