#!/usr/bin/env python3
"""Where a command's CPU goes, by layer: `tools/cpu_profile.py [--json F] -- CMD ...` (e.g. `-- make test`).

Runs CMD and samples /proc every --interval seconds: each process's own CPU time (user + system), keyed by
pid and start time, so a reused pid is another process. Every process of the machine counts, not only CMD's
(the cluster's daemons leave CMD's process tree): run it on an otherwise idle machine. At the end it prints
the CPU seconds of each layer that ran meanwhile (Ansible, the API servers, etcd, containerd, Envoy, the Go
builds, ...) against the wall time, which is what bounds `make test` once every core is busy
(docs/testing.md). A process shorter than one interval can be missed; its CPU is then counted under the
parent that reaped it (the reaped column), so each layer's figure is a lower bound: a report, not a gate.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path

# First match wins: the needle is looked for in the command line.
LAYERS: tuple[tuple[str, str], ...] = (
    ("ansible-playbook", "ansible-playbook (workers and callbacks)"),
    ("AnsiballZ", "ansible modules"),
    ("ansible-lint", "lint"),
    ("molecule", "molecule"),
    ("kube-apiserver", "kube-apiserver"),
    ("/etcd ", "etcd"),
    ("kube-controller-manager", "kube-controller-manager"),
    ("kubelet", "kubelet"),
    ("containerd-shim", "containerd shims"),
    ("containerd", "containerd"),
    ("kube-proxy", "kube-proxy"),
    ("kube-scheduler", "kube-scheduler"),
    ("kube-router", "kube-router"),
    ("envoy-gateway", "Envoy Gateway controller"),
    ("envoy-waf", "WAF"),
    ("coredns", "CoreDNS"),
    ("envoy", "Envoy"),
    ("metallb", "MetalLB"),
    ("speaker", "MetalLB"),
    ("mutate", "mutations"),
    ("pytest", "pytest (tests themselves)"),
    ("go-build", "Go builds"),
    ("/go ", "Go builds"),
    ("buildah", "images (buildah)"),
    ("dockerd", "dockerd (container mode)"),
    ("helm", "helm"),
    ("mypy", "lint"),
    ("ruff", "lint"),
    ("yamllint", "lint"),
    ("polycrate", "Polycrate"),
    ("victoria", "VictoriaMetrics"),
    ("vmalert", "VictoriaMetrics"),
    ("runc", "runc"),
    ("python", "other Python (ansible modules, helpers)"),
)
TICKS = os.sysconf("SC_CLK_TCK")


def layer(command: str) -> str:
    return next((name for needle, name in LAYERS if needle in command), "other")


@dataclass
class Process:
    command: str
    ticks: int = 0  # its own user + system time
    reaped: int = 0  # its waited-for children's


def sample(seen: dict[str, Process]) -> None:
    """Each process's own and reaped-children CPU ticks, the highest seen (they only grow)."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
            key = f"{entry.name}:{fields[19]}"
            if key not in seen:
                command = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                seen[key] = Process(command[:300])
            process = seen[key]
            process.ticks = max(process.ticks, int(fields[11]) + int(fields[12]))
            process.reaped = max(process.reaped, int(fields[13]) + int(fields[14]))
        except (OSError, IndexError, ValueError):  # gone meanwhile
            continue


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--json", type=Path, help="also write every process's CPU here")
    parser.add_argument("cmd", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not command:
        parser.error("give the command after --")
    before: dict[str, Process] = {}
    sample(before)  # what the processes that ran before CMD had used is not CMD's
    seen: dict[str, Process] = {}
    started = time.monotonic()
    child = subprocess.Popen(command)
    while child.poll() is None:
        sample(seen)
        time.sleep(args.interval)
    wall = time.monotonic() - started
    own: dict[str, float] = defaultdict(float)
    reaped: dict[str, float] = defaultdict(float)
    for key, process in seen.items():
        base = before.get(key, Process(""))
        own[layer(process.command)] += (process.ticks - base.ticks) / TICKS
        reaped[layer(process.command)] += (process.reaped - base.reaped) / TICKS
    total = sum(own.values()) or 1.0
    print(f"cpu-profile: {' '.join(command)}: exit {child.returncode}, wall {wall:.0f} s, CPU {total:.0f} s sampled")
    print(f"  {os.cpu_count()} cores, {total / max(wall, 1.0):.1f} of them busy on average")
    print(f"  {'layer':42} {'CPU s':>8} {'share':>6} {'reaped':>8}")
    for name, seconds in sorted(own.items(), key=lambda item: -item[1]):
        print(f"  {name:42} {seconds:8.0f} {seconds / total:6.1%} {reaped[name]:8.0f}")
    if args.json:
        rows = {key: asdict(process) for key, process in seen.items()}
        args.json.write_text(json.dumps({"wall": wall, "processes": rows}), encoding="utf-8")
    return child.returncode


if __name__ == "__main__":
    sys.exit(main())
