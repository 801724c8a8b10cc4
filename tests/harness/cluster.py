"""The whole local cluster: the control plane, then the real node (node.py) and the LoadBalancer provider
(loadbalancer.py), all in the network and mount namespace node.enter_namespaces made for this process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .api import Api
from .controlplane import ControlPlane
from .loadbalancer import LoadBalancer
from .node import NODE_IP, Node
from .procs import wait_until


class Cluster:
    """node.enter_namespaces must have run in this process; `images`: OCI archives imported into the node's
    containerd (node_image_archives)."""

    def __init__(self, workdir: Path, *, images: list[Path] | None = None) -> None:
        self.workdir = workdir
        self.plane = ControlPlane(workdir, NODE_IP)
        self.node = Node(workdir, self.api, self.kubeconfig, self.plane.pki_dir)
        self.images = list(images or [])
        self.lb: LoadBalancer | None = None
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
            self.node.start(self.images)
            self.lb = LoadBalancer(self.api)
            self.lb.start()
            api = self.api
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
