"""The harness itself: killed outright, its own processes die with it and the next harness removes what a
node leaves on any machine (the pods' shims detach from containerd, the containers and the kubelet's cgroups
stay); and it plays the LoadBalancer provider the way Cilium LB-IPAM / MetalLB would (the address asked for,
else one from a pool).

Mutation check (done once, on the control plane alone): dropping PR_SET_PDEATHSIG in procs._die_with_parent
turned test_a_killed_harness_leaves_nothing_behind red (etcd and kube-apiserver kept running).
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.conftest import Kube
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


def _ingress(kube: Kube, ns: str, name: str) -> list[dict[str, str]]:
    svc = kube.get(f"/api/v1/namespaces/{ns}/services/{name}") or {}
    return list(((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or [])


def test_loadbalancer_provider(kube: Kube) -> None:
    ns = "lb-test"
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    asked = {
        "cilium": ({"lbipam.cilium.io/ips": "203.0.113.201"}, None, "203.0.113.201"),
        "metallb": ({"metallb.universe.tf/loadBalancerIPs": "203.0.113.202"}, None, "203.0.113.202"),
        "spec": ({}, "203.0.113.203", "203.0.113.203"),
        "pool": ({}, None, None),
        "metallb-new": ({"metallb.io/loadBalancerIPs": "203.0.113.204"}, None, "203.0.113.204"),
    }
    both = {"metallb.universe.tf/loadBalancerIPs": "203.0.113.205"}
    for name, (asked_annotations, ip, _) in asked.items():
        spec = {"type": "LoadBalancer", "ports": [{"port": 80}], "selector": {"app": name}}
        if ip:
            spec["loadBalancerIP"] = ip
        kube.apply(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": name, "namespace": ns, "annotations": asked_annotations},
                "spec": spec,
            }
        )
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "both", "namespace": ns, "annotations": both},
            "spec": {"type": "LoadBalancer", "ports": [{"port": 80}], "loadBalancerIP": "203.0.113.205"},
        }
    )
    for name, (_, _, want) in asked.items():
        got = kube.wait(functools.partial(_ingress, kube, ns, name), 20, f"address for {name}")
        assert got[0]["ip"] == (want or got[0]["ip"])
        if want is None:
            assert got[0]["ip"].startswith("203.0.113."), got
    assert _ingress(kube, ns, "both") == [], "like MetalLB: annotation and spec.loadBalancerIP at once stay Pending"
    kube.delete({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
