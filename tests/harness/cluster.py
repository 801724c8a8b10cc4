"""The whole local cluster: the control plane, then the real nodes (node.py) on one L2 segment (lan.py) and a
real MetalLB in L2 mode (metallb.py) as the LoadBalancer provider.
The control plane and node 1 live in the network and mount namespace node.enter_namespaces made
for this process; node 2, 3, ... each in namespaces of their own."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from . import metallb
from .api import Api
from .controlplane import ControlPlane
from .lan import Lan
from .node import NODE_IP, Node
from .procs import wait_until


class Cluster:
    """node.enter_namespaces must have run in this process; `images`: OCI archives imported into the node's
    containerd (node_image_archives, MetalLB's among them). MetalLB assigns LoadBalancer addresses from
    its TEST-NET-3 pool and announces them on the lan (metallb.py)."""

    def __init__(
        self,
        workdir: Path,
        *,
        images: list[Path] | None = None,
        nodes: int = 1,
    ) -> None:
        if nodes < 1:
            raise ValueError("a cluster needs at least one node")
        self.workdir = workdir
        self.plane = ControlPlane(workdir, NODE_IP)
        self.node_count = nodes
        self.lan: Lan | None = None
        self.nodes: list[Node] = []
        self.images = list(images or [])
        self.leftovers: list[str] = []
        self.timings: dict[str, float] = {}
        # Registries a test serves images from (pull_from): pulls from them are that test's, not a slip.
        self.pull_hosts: list[str] = []

    @property
    def node(self) -> Node:
        """Node 1: the one in this process's namespaces (the control plane's, where the tests run)."""
        return self.nodes[0]

    @property
    def kubeconfig(self) -> Path:
        return self.plane.kubeconfig

    @property
    def api(self) -> Api:
        p = self.plane.pki_dir
        return Api(self.plane.url, p / "ca.crt", p / "admin.crt", p / "admin.key")

    def start(self) -> Cluster:
        t0 = time.monotonic()

        def mark(step: str) -> None:
            self.timings[step] = time.monotonic() - t0

        try:
            self.plane.start()
            mark("control plane")
            # MetalLB's objects first: its pods start as soon as a node is Ready, beside CoreDNS.
            metallb.apply_manifests(self.api)
            self.lan = Lan(self.workdir)
            api, kubeconfig, pki = self.api, self.kubeconfig, self.plane.pki_dir
            for index in range(1, self.node_count + 1):
                self.nodes.append(Node(self.workdir, api, kubeconfig, pki, index=index, lan=self.lan))
            # Each phase across all nodes before the next: the kubelets register (and get their pod CIDRs)
            # while the others import images, and every node's routes need every node's CIDR.
            for node in self.nodes:
                node.prepare()
                node.runtime(self.images)
            mark("containerd + images")
            for node in self.nodes:
                node.kubelet()
            for node in self.nodes:
                node.network(self.nodes)
            mark("nodes Ready")
            for node in self.nodes:
                node.services()
            self.node.cluster_services()
            mark("CoreDNS Ready")
            api = self.api
            # Announced on each node's port on the lan (every node names it node0), as a platform team names
            # the interface that faces its routers.
            metallb.configure(api, pool=metallb.POOL, interfaces=["node0"])
            mark("MetalLB Ready")
            wait_until(
                lambda: api.get("/api/v1/namespaces/default/serviceaccounts/default"), 60, "default ServiceAccount"
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self.leftovers = []
        for node in reversed(self.nodes):
            self.leftovers += node.stop()
        if self.lan is not None:
            self.lan.stop()
        self.plane.stop()

    def pull_from(self, host: str, ca: Path) -> None:
        """Let the nodes pull from the registry at `host` (TLS with `ca`); its pulls are expected."""
        for node in self.nodes:
            node.trust_registry(host, ca)
        self.pull_hosts.append(host)

    def pulls(self, unexpected: bool = True) -> list[str]:
        """Every image pull containerd was asked for, on any node (none: every image is imported, see
        Node.pulls), but those from a registry a test serves images from (pull_from) unless `unexpected` is
        false."""
        found = [line for node in self.nodes for line in node.pulls()]
        return [line for line in found if not (unexpected and any(host in line for host in self.pull_hosts))]

    def audit(self) -> list[dict[str, Any]]:
        """Completed write requests, in the order the API server answered them."""
        events = []
        for line in self.plane.audit_log.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event.get("stage") == "ResponseComplete":
                events.append(event)
        return events
