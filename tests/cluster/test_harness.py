"""The harness itself: it leaves no process behind even when it is killed outright, and it plays the
LoadBalancer provider the way Cilium LB-IPAM / MetalLB would (the address asked for, else one from a pool).

Mutation check (done once): dropping PR_SET_PDEATHSIG in procs._die_with_parent turned
test_a_killed_harness_leaves_no_process red (etcd and kube-apiserver kept running).
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.cluster.conftest import Kube
from tests.conftest import PKG, ROOT


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


def test_a_killed_harness_leaves_no_process(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (PKG, ROOT)))}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.harness", "--dir", str(tmp_path / "c")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("ready "), "the harness did not come up"
    children = _children(proc.pid)
    assert len(children) >= 4, children  # etcd, kube-apiserver, kube-controller-manager, kwok
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_running(p) for p in children):
        time.sleep(0.2)
    assert not [p for p in children if _running(p)], "processes outlived the harness"


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
