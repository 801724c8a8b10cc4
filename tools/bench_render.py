#!/usr/bin/env python3
"""Render time next to an empty ansible-playbook run, as a ratio (`make bench-render`). A report, not a gate.

    tools/bench_render.py [--example waf] [--runs 5]

Times the `make render` path (tools/snapshot.py, then ansible-playbook playbooks/render.yml) into a fresh
folder and again with nothing changed, and an empty play given the same extra-vars, so the ratio is the
render's own cost. Each figure is the median of --runs runs, taken in turns so machine load hits all alike.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TARGET = 3.0
EMPTY_PLAY = "- name: Nothing\n  hosts: localhost\n  gather_facts: false\n  tasks: []\n"


def _run(command: list[str]) -> None:
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench-render: {' '.join(command)} failed:\n{done.stdout}{done.stderr}")


def _seconds(step: Callable[[], None]) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--example", default="waf", help="examples/<name>/config.yml (default: waf)")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    override = ROOT / "examples" / args.example / "config.yml"

    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        work = Path(tmp)
        snapshot, empty = work / "snapshot.yml", work / "empty.yml"
        empty.write_text(EMPTY_PLAY, encoding="utf-8")
        artifacts = work / "artifacts"
        make_snapshot = [sys.executable, "tools/snapshot.py", "--override", str(override)]
        make_snapshot += ["--artifacts", str(artifacts), "-o", str(snapshot)]
        playbook = [str(BIN / "ansible-playbook"), "-e", f"@{snapshot}"]

        def render() -> None:
            _run(make_snapshot)
            _run([*playbook, "playbooks/render.yml"])

        _run(make_snapshot)  # the empty play loads the same extra-vars
        _run([*playbook, str(empty)])  # warm caches (bytecode, collection scan) before timing anything
        times: dict[str, list[float]] = {"empty": [], "fresh": [], "unchanged": []}
        for _ in range(args.runs):
            times["empty"].append(_seconds(lambda: _run([*playbook, str(empty)])))
            shutil.rmtree(artifacts, ignore_errors=True)
            times["fresh"].append(_seconds(render))
            times["unchanged"].append(_seconds(render))

    empty_s = statistics.median(times["empty"])
    rows = [
        ("empty playbook (same extra-vars)", empty_s),
        ("render, fresh folder", statistics.median(times["fresh"])),
        ("render, nothing changed", statistics.median(times["unchanged"])),
    ]
    print(f"bench-render: examples/{args.example}, median of {args.runs} runs, {os.cpu_count()} CPUs")
    print("  render = tools/snapshot.py + ansible-playbook playbooks/render.yml (the `make render` path)")
    for label, seconds in rows:
        ratio = f"{seconds / empty_s:5.1f}x" if label.startswith("render") else ""
        print(f"  {label:<34} {seconds:6.2f} s  {ratio}")
    worst = max(seconds for _, seconds in rows[1:]) / empty_s
    verdict = "met" if worst <= TARGET else "MISSED"
    print(f"target: render at most {TARGET:g}x an empty playbook (a report, not a gate): {verdict} ({worst:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
