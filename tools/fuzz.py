#!/usr/bin/env python3
"""Hostile-config fuzzer (issue 29): seeded random configs through the block's whole pure path (validation,
the plan and its limits, the rendered files), judged by one oracle (`judge`):

- refused: every problem has a config path (config... or block...), no message is huge, no secret is echoed;
- accepted: the plan renders, every derived name and file name fits, and no secret reaches the render.

Anything else (an exception without a path, a leak, a huge message) is a find: printed with its seed and case
number and the config as JSON, and the run fails. Keep each find as a regression case in
tests/unit/fuzz_finds.jsonl (one JSON config a line), which tests/unit/test_fuzz_finds.py replays.

    make fuzz                                  # FUZZ_SEED=<n> FUZZ_CASES=<n> FUZZ_SECONDS=<n>
    .venv/bin/python tools/fuzz.py --seed 7 --cases 2000 --seconds 60

The generator starts from the schema: every path gets type swaps, its extremes and just past them, odd strings
(empty, huge, control characters, URLs with credentials), huge lists, and YAML's own types (dates, bytes,
infinities); several mutations per config, so pairs of problems in different sections are common.
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import math
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils"))

from envoy_block import builder, config, limits, render  # noqa: E402

SECRET = "fz-S3cr3t-never-shown"
MAX_MESSAGE = 2000  # characters of one problem: values are cut at 80 (inputs.SHOWN)


def _paths(
    schema: dict[str, Any], node: dict[str, Any], parts: list[Any]
) -> Iterator[tuple[list[Any], dict[str, Any]]]:
    node = config._resolve(schema, node)
    yield parts, node
    for key, sub in node.get("properties", {}).items():
        yield from _paths(schema, sub, [*parts, key])
    items = node.get("items")
    if isinstance(items, dict):
        yield from _paths(schema, items, [*parts, 0])


def _odd_values(node: dict[str, Any], rng: random.Random) -> list[Any]:
    low, high = node.get("minimum", -(2**31)), node.get("maximum", 2**31 - 1)
    values: list[Any] = [
        None,
        True,
        0,
        -1,
        2**31,
        2**63,
        2**64 + 1,
        1.5,
        80.0,
        float("inf"),
        float("nan"),
        "",
        " ",
        "x" * rng.choice((64, 254, 5000, 200_000)),
        "A\u0000B\nC\t\"'\\",
        "ÄÖÜ-\u202e-\U0001f600",
        "0x10",
        "1e3",
        "yes",
        "2024-01-01",
        datetime.date(2024, 1, 1),
        b"\x00\x01",
        f"https://robot:{SECRET}@example.com/c.tgz",
        f"https://example.com/c.tgz?token={SECRET}",
        f"oci://robot:{SECRET}@registry.example.com/x",
        [],
        [1, "a", None],
        ["x"] * rng.choice((65, 300, 2000)),
        {},
        {"unknown": 1},
        {"a" * 300: "b"},
    ]
    if isinstance(low, int) and isinstance(high, int):
        values += [low, high, low - 1, high + 1]
    if "enum" in node:
        values += [*node["enum"], str(node["enum"][0]).upper()]
    if "default" in node:
        values.append(copy.deepcopy(node["default"]))  # the schema's own object: a later _set would write into it
    return values


def _set(cfg: dict[str, Any], parts: list[Any], value: Any) -> None:
    node: Any = cfg
    for index, part in enumerate(parts[:-1]):
        following = parts[index + 1]
        if isinstance(part, int):
            if not isinstance(node, list):
                return
            while len(node) <= part:
                node.append({} if not isinstance(following, int) else [])
            node = node[part]
            continue
        if not isinstance(node, dict):
            return
        if not isinstance(node.get(part), (dict, list)):
            node[part] = [] if isinstance(following, int) else {}
        node = node[part]
    last = parts[-1] if parts else None
    if isinstance(last, int) and isinstance(node, list):
        while len(node) <= last:
            node.append(None)
        node[last] = value
    elif isinstance(node, dict) and last is not None:
        node[last] = value


def generate(rng: random.Random, paths: list[tuple[list[Any], dict[str, Any]]]) -> dict[str, Any]:
    cfg: dict[str, Any] = {}
    if rng.random() < 0.5:  # a Gateway and a WAF make most rules reachable
        cfg = {
            "default_gateway": {"enabled": True, "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]},
            "waf": {"enabled": True, "default_policy": {"enabled": True}},
        }
    for _ in range(rng.choice((1, 1, 2, 3, 5))):
        parts, node = rng.choice(paths)
        if not parts:
            continue
        _set(cfg, parts, rng.choice(_odd_values(node, rng)))
    return cfg


def judge(cfg: dict[str, Any], name: str = "envoy") -> str | None:
    """None when the block handles `cfg` as promised; else what went wrong (a find)."""
    block = {"name": name, "version": "0.1.0", "config": cfg}
    try:
        plan = builder.plan_from_block(block)
    except config.ConfigError as exc:
        for problem in exc.problems:
            if not problem.path.startswith(("config", "block")):
                return f"a problem without a config path: {problem}"[:400]
            if len(str(problem)) > MAX_MESSAGE:
                return f"a message of {len(str(problem))} characters: {str(problem)[:200]}"
            if SECRET in str(problem):
                return f"a message repeats a credential: {problem.path}"
        return None
    except Exception as exc:  # noqa: BLE001  # exactly what the fuzzer looks for
        return f"{type(exc).__name__} without a config path: {' '.join(str(exc).split())[:300]}"
    try:
        files = render.files(plan)
    except Exception as exc:  # noqa: BLE001
        return f"rendering an accepted config failed: {type(exc).__name__}: {str(exc)[:300]}"
    for step in plan.ordered():
        limit = limits.LABEL_MAX if step.kind in limits.LABEL_KINDS else limits.SUBDOMAIN_MAX
        if len(step.name) > limit or len(plan.file_name(step).encode()) > limits.FILE_NAME_MAX:
            return f"an accepted config derives the name {step.name[:80]}... ({len(step.name)})"
    if any(SECRET in content for content in files.values()):
        return "a credential reached the render"
    return None


def _plain(value: Any) -> Any:
    """A find as JSON (dates, bytes and non-finite floats tagged, so the replay rebuilds them)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, datetime.date):
        return {"$date": value.isoformat()}
    if isinstance(value, bytes):
        return {"$bytes": value.hex()}
    if isinstance(value, float) and math.isnan(value):
        return {"$float": "nan"}
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return {"$float": str(value)}
    return value


def revive(value: Any) -> Any:
    """The inverse of _plain, for the replay test."""
    if isinstance(value, dict):
        if set(value) == {"$date"}:
            return datetime.date.fromisoformat(value["$date"])
        if set(value) == {"$bytes"}:
            return bytes.fromhex(value["$bytes"])
        if set(value) == {"$float"}:
            return float(value["$float"])
        return {k: revive(v) for k, v in value.items()}
    if isinstance(value, list):
        return [revive(v) for v in value]
    return value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: a new one, printed)")
    parser.add_argument("--cases", type=int, default=10000, help="at most this many configs")
    parser.add_argument("--seconds", type=float, default=60.0, help="stop after this long")
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"fuzz: seed {seed} (reproduce: tools/fuzz.py --seed {seed} --cases {args.cases})", flush=True)
    rng = random.Random(seed)
    schema = config.load_schema()
    paths = list(_paths(schema, schema, []))
    started = time.monotonic()
    finds = 0
    slowest = (0.0, -1)
    case = 0
    for case in range(args.cases):
        if time.monotonic() - started > args.seconds:
            break
        cfg = generate(rng, paths)
        before = time.monotonic()
        found = judge(cfg)
        took = time.monotonic() - before
        slowest = max(slowest, (took, case))
        if found:
            finds += 1
            print(f"fuzz: FIND (seed {seed}, case {case}): {found}\n  {json.dumps(_plain(cfg))[:2000]}", flush=True)
    done = case + 1
    print(
        f"fuzz: {done} configs in {time.monotonic() - started:.0f} s, {finds} find(s); "
        f"slowest case {slowest[1]} took {slowest[0]:.2f} s"
    )
    return 1 if finds else 0


if __name__ == "__main__":
    sys.exit(main())
