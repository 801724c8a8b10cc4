"""How many CPUs this container may use: the default number of worker processes.

A pod's CPU limit is a CFS quota (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`), not
fewer visible CPUs: `os.cpu_count()` in a pod limited to 2 CPUs on a 64-core node says 64, and 64 workers
would each load the rules (memory) to share 2 CPUs of time. So the quota wins, rounded up (a 1.5 CPU limit
keeps 2 workers busy), then the CPUs this process may run on (cpusets), then the machine's count.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_SELF_CGROUP = Path("/proc/self/cgroup")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _ancestors(root: Path, relative: str) -> list[Path]:
    """`root/relative` and each of its parents up to `root`: a limit anywhere above applies too."""
    parts = [p for p in relative.strip("/").split("/") if p and p != ".."]
    return [root.joinpath(*parts[:depth]) for depth in range(len(parts), -1, -1)]


def _own_cgroup(proc_self_cgroup: Path, controller: str | None) -> str:
    """This process's cgroup path: the v2 line (`0::/path`) when `controller` is None, else the v1 line
    listing `controller`. Inside a cgroup namespace the path is `/` and the mount is the container's own."""
    for line in (_read(proc_self_cgroup) or "").splitlines():
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if controller is None and controllers == "":
            return path
        if controller is not None and controller in controllers.split(","):
            return path
    return "/"


def quota(root: Path = CGROUP_ROOT, proc_self_cgroup: Path = PROC_SELF_CGROUP) -> float | None:
    """The smallest CPU quota (in CPUs) on this process's cgroup or its ancestors, or None when unlimited."""
    limits: list[float] = []
    if (root / "cgroup.controllers").exists():  # v2: one unified hierarchy
        for directory in _ancestors(root, _own_cgroup(proc_self_cgroup, None)):
            fields = (_read(directory / "cpu.max") or "max").split()
            if fields[0] != "max" and len(fields) == 2 and int(fields[1]) > 0:
                limits.append(int(fields[0]) / int(fields[1]))
    else:  # v1: the cpu controller's own hierarchy (mounted as cpu, or cpu,cpuacct)
        for mount in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
            base = root / mount
            if not base.is_dir():
                continue
            for directory in _ancestors(base, _own_cgroup(proc_self_cgroup, "cpu")):
                cfs_quota, period = _read(directory / "cpu.cfs_quota_us"), _read(directory / "cpu.cfs_period_us")
                if cfs_quota and period and int(cfs_quota) > 0 and int(period) > 0:
                    limits.append(int(cfs_quota) / int(period))
            break
    return min(limits) if limits else None


def available(root: Path = CGROUP_ROOT, proc_self_cgroup: Path = PROC_SELF_CGROUP) -> int:
    """CPUs this process may use: the cgroup quota rounded up, capped by the CPUs it may run on; at least 1."""
    try:
        visible = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        visible = os.cpu_count() or 1
    limit = quota(root, proc_self_cgroup)
    if limit is not None:
        visible = min(visible, math.ceil(limit - 1e-9))  # 200000/100000 is 2, not 3
    return max(1, visible)
