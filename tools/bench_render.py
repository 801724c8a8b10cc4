#!/usr/bin/env python3
"""Render time next to an empty ansible-playbook run, as a ratio (`make bench-render`). A report, not a gate.

    tools/bench_render.py [--example waf] [--runs 5]

Times the `make render` path (tools/snapshot.py, then ansible-playbook playbooks/render.yml) into a fresh
folder and again with nothing changed, and an empty play given the same extra-vars, so the ratio is the
render's own cost. Then, on tests/harness's real node (`make bench-render` runs this inside it, KUBECONFIG set;
the real Envoy Gateway controller; the charts from ../shared/charts), a first install (not timed) and no-change
re-installs.
Each figure is the median of --runs runs, taken in turns so machine load hits all alike.
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
sys.path.insert(0, str(ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils"))

from envoy_block import config  # noqa: E402

BIN = Path(sys.executable).parent
TARGET = 3.0
INSTALL_TARGET = 5.0
CHARTS = ROOT.parent / "shared" / "charts"
EMPTY_PLAY = "- name: Nothing\n  hosts: localhost\n  gather_facts: false\n  tasks: []\n"


def default_chart_version() -> str:
    """chart.version as install takes it when the config sets none: the schema's default, so the chart files
    below follow the block's release instead of a version written here (v1.9.0 was, and install refused)."""
    defaults: dict[str, dict[str, object]] = config.apply_defaults({}, config.load_schema())
    return str(defaults["chart"]["version"])


def chart_files(version: str) -> tuple[Path, Path]:
    """The gateway-helm and gateway-crds-helm packages of `version` in ../shared/charts."""
    return CHARTS / f"gateway-helm-{version}.tgz", CHARTS / f"gateway-crds-helm-{version}.tgz"


def install_override(version: str) -> str:
    """The re-install's config: the default one with the default Gateway, its charts from ../shared/charts (no
    chart.version: the default, which the files are those of)."""
    chart, crds = chart_files(version)
    return (
        f"config:\n  chart: {{repo: {{url: {chart}}}}}\n"
        f"  crds: {{chart_url: {crds}}}\n"
        "  default_gateway: {enabled: true}\n"
    )


def _run(command: list[str]) -> None:
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench-render: {' '.join(command)} failed:\n{done.stdout}{done.stderr}")


def _seconds(step: Callable[[], None]) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def _reinstall_times(work: Path, runs: int, empty: Path) -> tuple[list[float], list[float]]:
    """No-change re-installs of the default config (+ the default Gateway) against a local cluster."""
    kubeconfig = os.environ.get("KUBECONFIG", "")
    if not kubeconfig:
        raise SystemExit("bench-render: run inside the harness (make bench-render), or with --no-install")
    override = work / "install.yml"
    override.write_text(install_override(default_chart_version()), encoding="utf-8")
    snapshot = work / "install-snapshot.yml"
    _run(
        [
            sys.executable,
            "tools/snapshot.py",
            "--override",
            str(override),
            "--artifacts",
            str(work / "a"),
            "--kubeconfig",
            kubeconfig,
            "-o",
            str(snapshot),
        ]
    )
    playbook = [str(BIN / "ansible-playbook"), "-e", f"@{snapshot}"]
    os.environ["PATH"] = f"{ROOT / '.tools/bin'}:{os.environ['PATH']}"
    _run([*playbook, "playbooks/install.yml"])
    empty_times, install_times = [], []
    for _ in range(runs):
        empty_times.append(_seconds(lambda: _run([*playbook, str(empty)])))
        install_times.append(_seconds(lambda: _run([*playbook, "playbooks/install.yml"])))
    return empty_times, install_times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--example", default="waf", help="examples/<name>/config.yml (default: waf)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-install", action="store_true", help="skip the re-install half (no cluster)")
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
        if not args.no_install:
            times["empty-install"], times["reinstall"] = _reinstall_times(work, max(3, args.runs // 2), empty)

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
    if "reinstall" in times:
        base = statistics.median(times["empty-install"])
        again = statistics.median(times["reinstall"])
        print(f"  {'empty playbook (install extra-vars)':<34} {base:6.2f} s")
        print(f"  {'install, nothing changed':<34} {again:6.2f} s  {again / base:5.1f}x")
        share = again / base
        verdict = "met" if share <= INSTALL_TARGET else "MISSED"
        print(f"target: a no-change re-install at most {INSTALL_TARGET:g}x an empty playbook: {verdict} ({share:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
