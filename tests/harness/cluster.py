"""The whole local cluster: control plane, then the node (the real one, node.py, or kwok with the harness's
kubelet/binder) and the LoadBalancer provider."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .api import Api
from .controlplane import HARNESS_NODE, KWOK_NODE, ControlPlane
from .kubelet import Kubelet
from .loadbalancer import LoadBalancer
from .node import NODE_IP, Node
from .procs import wait_until


class Cluster:
    """`real_node`: a real node in this process's network and mount namespace (node.enter_namespaces must
    have run); `images`: OCI archives imported into its containerd."""

    def __init__(self, workdir: Path, *, real_node: bool = False, images: list[Path] | None = None) -> None:
        self.workdir = workdir
        self.plane = ControlPlane(workdir, node_ip=NODE_IP if real_node else None)
        self.kubelet: Kubelet | None = None
        self.node: Node | None = None
        self.images = list(images or [])
        self.lb: LoadBalancer | None = None
        self.leftovers: list[str] = []

    @property
    def kubeconfig(self) -> Path:
        return self.plane.kubeconfig

    @property
    def api(self) -> Api:
        p = self.plane.pki
        return Api(self.plane.url, p.ca_crt, p.admin_crt, p.admin_key)

    def start(self) -> Cluster:
        try:
            self.plane.start()
            api = self.api
            if self.plane.node_ip:
                self.node = Node(self.workdir, api, self.kubeconfig, self.plane.pki.ca_crt.parent)
                self.node.start(self.images)
            else:
                self.kubelet = Kubelet(api, self.workdir, "127.0.0.1", self.plane.api_port, self.plane.pki.ca_crt)
                self.kubelet.start()
            self.lb = LoadBalancer(api)
            self.lb.start()
            if self.kubelet:
                wait_until(lambda: self._nodes_ready(api), 60, "kwok nodes Ready")
            wait_until(
                lambda: api.get("/api/v1/namespaces/default/serviceaccounts/default"), 60, "default ServiceAccount"
            )
        except BaseException:
            self.stop()
            raise
        return self

    @staticmethod
    def _nodes_ready(api: Api) -> bool:
        ready = set()
        for node in api.items("/api/v1/nodes"):
            for cond in (node.get("status") or {}).get("conditions") or []:
                if cond["type"] == "Ready" and cond["status"] == "True":
                    ready.add(node["metadata"]["name"])
        return {KWOK_NODE, HARNESS_NODE} <= ready

    def stop(self) -> None:
        for part in (self.lb, self.kubelet):
            if part is not None:
                part.stop()
        if self.node is not None:
            self.leftovers = self.node.stop()
        self.plane.stop()

    def audit(self) -> list[dict[str, Any]]:
        """Completed write requests, in the order the API server answered them."""
        events = []
        for line in self.plane.audit_log.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event.get("stage") == "ResponseComplete":
                events.append(event)
        return events

    def errors(self) -> list[str]:
        return [*(self.kubelet.errors if self.kubelet else []), *(self.lb.errors if self.lb else [])]
