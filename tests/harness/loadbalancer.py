"""The harness plays the LoadBalancer provider for the single-node suites (no cloud or Cilium LB-IPAM runs here;
a real MetalLB runs under `make node-test` and the three-node scenarios, metallb.py, and is to replace this).

Each Service of type LoadBalancer gets the address it asks for, read the way the providers read it
(`spec.loadBalancerIP`, Cilium's `lbipam.cilium.io/ips`, MetalLB's `metallb.io/loadBalancerIPs` and older
`metallb.universe.tf/loadBalancerIPs`), else the next free one from a test pool (TEST-NET-3, never routed),
written to status.loadBalancer.ingress. Like MetalLB's controller, a Service that asks by a MetalLB
annotation and by spec.loadBalancerIP at once gets nothing ("service can not have both") and stays Pending.
kube-proxy serves these addresses (ipMode VIP) inside the node's network namespace, as it does for a cloud or
L2 provider's: a client there reaches the proxy pods through them. Nothing announces them beyond the node.
"""

from __future__ import annotations

import ipaddress
import threading
from typing import Any

from .api import Api

POOL = ipaddress.ip_network("203.0.113.0/24")
METALLB = ("metallb.io/loadBalancerIPs", "metallb.universe.tf/loadBalancerIPs")
ASKED = ("lbipam.cilium.io/ips", *METALLB)


def refused(svc: dict[str, Any]) -> bool:
    """MetalLB refuses a Service with both its annotation and spec.loadBalancerIP."""
    annotations = svc["metadata"].get("annotations") or {}
    return bool(svc["spec"].get("loadBalancerIP")) and any(annotations.get(key) for key in METALLB)


def requested(svc: dict[str, Any]) -> str | None:
    annotations = svc["metadata"].get("annotations") or {}
    for key in ASKED:
        if annotations.get(key):
            return str(annotations[key]).split(",")[0].strip()
    ip = svc["spec"].get("loadBalancerIP")
    return str(ip) if ip else None


class LoadBalancer:
    def __init__(self, api: Api) -> None:
        self.api = api
        self.assigned: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="loadbalancer", daemon=True)
        self.errors: list[str] = []

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.sync()
            except Exception as exc:  # noqa: BLE001 - recorded; the loop goes on
                self.errors.append(repr(exc))
            self._stop.wait(0.3)

    def sync(self) -> None:
        services = [s for s in self.api.items("/api/v1/services") if s["spec"].get("type") == "LoadBalancer"]
        live = {s["metadata"]["uid"] for s in services}
        self.assigned = {uid: ip for uid, ip in self.assigned.items() if uid in live}
        for svc in services:
            uid = svc["metadata"]["uid"]
            if refused(svc):
                continue
            want = requested(svc) or self.assigned.get(uid) or self._next_free()
            self.assigned[uid] = want
            ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
            if [i.get("ip") for i in ingress] == [want]:
                continue
            meta = svc["metadata"]
            self.api.merge_patch(
                f"/api/v1/namespaces/{meta['namespace']}/services/{meta['name']}/status",
                {"status": {"loadBalancer": {"ingress": [{"ip": want, "ipMode": "VIP"}]}}},
            )

    def _next_free(self) -> str:
        used = set(self.assigned.values())
        for host in POOL.hosts():
            if str(host) not in used and host != POOL.network_address + 1:
                return str(host)
        raise RuntimeError("LoadBalancer test pool exhausted")
