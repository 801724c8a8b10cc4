"""The harness itself: killed outright, its own processes die with it and the next harness removes what a
node leaves on any machine (the pods' shims detach from containerd, the containers and the kubelet's cgroups
stay). The LoadBalancer provider is a real MetalLB, judged by tests/node/test_metallb.py.

Mutation check (done once, on the control plane alone): dropping PR_SET_PDEATHSIG in procs._die_with_parent
turned test_a_killed_harness_leaves_nothing_behind red (etcd and kube-apiserver kept running).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PKG, ROOT
from tests.harness.node import CGROUP_FS, CGROUP_PREFIX, cgroup_pids, sweep_dead_runs


def _children(pid: int) -> set[int]:
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(entry.name))
    return out


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited; only its exit status is left to collect


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A folder with a short path: the kubelet's sockets live under it (a Unix socket path has at most 108
    bytes), and tmp_path under pytest-xdist (.../popen-gw0/<test name>) is too long for them."""
    with tempfile.TemporaryDirectory(prefix="harness-", dir="/tmp", ignore_cleanup_errors=True) as short:
        yield Path(short)


def test_a_killed_harness_leaves_nothing_behind(short_tmp: Path) -> None:
    """A second harness, nested in this session's namespaces (it makes its own), up with CoreDNS running,
    then SIGKILL."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (PKG, ROOT)))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.harness", "--dir", str(short_tmp / "c")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("ready "):
            break
    assert lines, "the harness printed nothing"
    assert lines[-1].startswith("ready "), f"the harness did not come up: {lines}"
    children = _children(proc.pid)
    # etcd, kube-apiserver, kube-controller-manager, containerd, kubelet, kube-proxy, kube-scheduler, kube-router
    assert len(children) >= 8, children
    root = f"{CGROUP_PREFIX}{proc.pid}"
    pods = cgroup_pids(root)
    assert pods, "CoreDNS runs in the killed harness's node"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_running(p) for p in children):
        time.sleep(0.2)
    assert not [p for p in children if _running(p)], "processes outlived the harness"
    # What any node leaves when killed: the next harness's start sweeps it (node.sweep_dead_runs).
    swept = sweep_dead_runs()
    assert root in swept, swept
    assert not [p for p in pods if _running(p)], "the killed node's containers were swept"
    assert not (CGROUP_FS / "pids" / root).exists()
