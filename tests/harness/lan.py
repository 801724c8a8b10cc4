"""The L2 segment the nodes share, and the namespaces that hold a node other than the first.

A rack's nodes hang off one switch: here a bridge (`br0`) in a network namespace of the harness's own (the
"lan"), each node plugged into it by a veth whose node end carries the node's address (10.10.0.2, .3, ...).
The client namespace that plays the internet plugs in the same way (tests/cluster/realnet.py) and reaches a
LoadBalancer address through ARP, as a router in front of a rack would; MetalLB's speakers answer for it.
Pod networks are routed between the nodes by the harness, as a real cluster's CNI routes them (a route per
other node's pod CIDR via that node's address), so a packet from a pod keeps its source address end to end:
network policies judge the pod, never a node that masqueraded it.

Every namespace here is held by a process (`unshare ... sleep infinity`, dying with the harness), never named
with `ip netns add`: that bind-mounts /run/netns over itself and hides the mounts containerd makes there.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from .procs import Proc

LAN_CIDR = "10.10.0.0/24"
BRIDGE = "br0"


def node_ip(index: int) -> str:
    """Node 1 is 10.10.0.2 (the address the single-node harness always had), node 2 10.10.0.3, ..."""
    return f"10.10.0.{index + 1}"


def sh(*argv: str, check: bool = True) -> str:
    done = subprocess.run(list(argv), capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


class Holder:
    """A process that holds a new network namespace (and, with `mount`, a mount namespace copied from this
    process's, mounts private). Commands run inside it through `nsenter`."""

    def __init__(self, name: str, log: Path, *, mount: bool) -> None:
        self.mount = mount
        argv = ["unshare", "--net"] + (["--mount", "--propagation", "private"] if mount else [])
        self.proc = Proc(name, [*argv, "sleep", "infinity"], log)
        deadline = time.monotonic() + 10
        while os.readlink(self.netns) == os.readlink("/proc/self/ns/net"):  # until unshare has run
            if time.monotonic() > deadline or not self.proc.alive():
                raise RuntimeError(f"{name}: the namespace did not come up")
            time.sleep(0.01)
        # A process that has unshared the network may not have unshared the mounts yet (one syscall).
        if mount:
            while os.readlink(self.mntns) == os.readlink("/proc/self/ns/mnt"):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name}: the mount namespace did not come up")
                time.sleep(0.01)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def netns(self) -> Path:
        return Path(f"/proc/{self.pid}/ns/net")

    @property
    def mntns(self) -> Path:
        return Path(f"/proc/{self.pid}/ns/mnt")

    def prefix(self) -> list[str]:
        """argv prefix that runs a command inside the held namespaces."""
        return ["nsenter", f"--net={self.netns}"] + ([f"--mount={self.mntns}"] if self.mount else []) + ["--"]

    def sh(self, *argv: str, check: bool = True) -> str:
        return sh(*self.prefix(), *argv, check=check)

    def stop(self) -> None:
        self.proc.stop(grace=2)


class Lan:
    """The bridge every node (and the internet) plugs into."""

    def __init__(self, workdir: Path) -> None:
        self.holder = Holder("lan", workdir / "lan.log", mount=False)
        self.holder.sh("ip", "link", "set", "lo", "up")
        self.holder.sh("ip", "link", "add", BRIDGE, "type", "bridge")
        self.holder.sh("ip", "link", "set", BRIDGE, "up")

    def plug(self, port: str) -> None:
        """Move `port` (a veth end in this process's namespace) into the lan and onto the bridge."""
        sh("ip", "link", "set", port, "netns", str(self.holder.pid))
        self.holder.sh("ip", "link", "set", port, "master", BRIDGE)
        self.holder.sh("ip", "link", "set", port, "up")

    def cut(self, port: str) -> None:
        """A node loses its network: its port on the switch goes down."""
        self.holder.sh("ip", "link", "set", port, "down")

    def mend(self, port: str) -> None:
        self.holder.sh("ip", "link", "set", port, "up")

    def stop(self) -> None:
        self.holder.stop()
