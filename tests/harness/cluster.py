"""The whole local cluster: the control plane, then the real node (node.py) and the LoadBalancer provider
(the harness's own address assignment, loadbalancer.py, or a real MetalLB, metallb.py), all in the network and
mount namespace node.enter_namespaces made for this process."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

from . import metallb
from .api import Api
from .controlplane import ControlPlane
from .loadbalancer import LoadBalancer
from .node import NODE_IP, Node
from .procs import wait_until


class Cluster:
    """node.enter_namespaces must have run in this process; `images`: OCI archives imported into the node's
    containerd (node_image_archives, with MetalLB's images for `lb="metallb"`). `lb`: who assigns
    LoadBalancer addresses, the harness (loadbalancer.py) or a real MetalLB in L2 mode (metallb.py) over the
    same TEST-NET pool."""

    def __init__(
        self, workdir: Path, *, images: list[Path] | None = None, lb: Literal["harness", "metallb"] = "harness"
    ) -> None:
        self.workdir = workdir
        self.plane = ControlPlane(workdir, NODE_IP)
        self.node = Node(workdir, self.api, self.kubeconfig, self.plane.pki_dir)
        self.images = list(images or [])
        self.lb_kind = lb
        self.lb: LoadBalancer | None = None
        self.timings: dict[str, float] = {}
        self.leftovers: list[str] = []

    @property
    def kubeconfig(self) -> Path:
        return self.plane.kubeconfig

    @property
    def api(self) -> Api:
        p = self.plane.pki_dir
        return Api(self.plane.url, p / "ca.crt", p / "admin.crt", p / "admin.key")

    def start(self) -> Cluster:
        try:
            self.plane.start()
            node_start = time.monotonic()
            self.node.start(self.images)
            api = self.api
            if self.lb_kind == "metallb":
                # Seconds since the node's start, as the node's own timings count.
                offset = time.monotonic() - node_start
                steps = metallb.install(api, pool=metallb.POOL, interfaces=None)
                self.timings.update({f"MetalLB {k}": offset + v for k, v in steps.items()})
            else:
                self.lb = LoadBalancer(api)
                self.lb.start()
            wait_until(
                lambda: api.get("/api/v1/namespaces/default/serviceaccounts/default"), 60, "default ServiceAccount"
            )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        if self.lb is not None:
            self.lb.stop()
        self.leftovers = self.node.stop()
        self.plane.stop()

    def pulls(self) -> list[str]:
        """Every image pull containerd was asked for (none: every image is imported, see Node.pulls)."""
        return self.node.pulls()

    def audit(self) -> list[dict[str, Any]]:
        """Completed write requests, in the order the API server answered them."""
        events = []
        for line in self.plane.audit_log.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event.get("stage") == "ResponseComplete":
                events.append(event)
        return events

    def errors(self) -> list[str]:
        return list(self.lb.errors if self.lb else [])
