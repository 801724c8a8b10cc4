"""The shared proxies roll with no failed request, on three real nodes (`make cluster-test-nodes`; it also runs
on one): a steady client on the internet (a network namespace of its own) sends a request on a new connection
every 50 ms to the default Gateway's LoadBalancer address, which MetalLB announces and kube-proxy serves,
through the proxy pods to a tenant's backend pod, while

1. the proxy Deployment (2 replicas, the block's surge-only strategy) is restarted (`kubectl rollout
   restart`: a new pod template), and
2. after the same config with `data_plane.kind: DaemonSet` and `externalTrafficPolicy: Local` (the
   `daemonset-client-ip` example's data plane), the proxy DaemonSet is restarted the same way.

Each old pod drains with the settings the block renders into the EnvoyProxy (`data_plane.shutdown`: the
shutdown manager fails the pod's readiness at once, kube-proxy stops sending it new connections, Envoy keeps
its listeners for min_drain_duration). The failed requests per phase are printed like the upgrade's; none is
allowed while either fleet rolls and after. The switch from the Deployment to the DaemonSet itself (the
controller deletes one and creates the other) is counted and printed, not judged: it is a re-deploy, not a
rollout.

Mutation checks (done once, 2026-12-02): the DaemonSet's rollout without surge (maxSurge 0, maxUnavailable 1
in proxies._strategy: the node's only proxy goes before its replacement is Ready) -> red, 59 of 97 requests
failed during the DaemonSet's restart. The drain itself is NOT what this test tells apart: with
data_plane.shutdown 0s/0s every phase still had 0 failed requests (kube-proxy, on the same node, stops
sending new connections to a terminating pod within the moment, and each request here is short and on a
new connection); the drain settings guard against a load balancer's health-check lag and long requests,
which a single node does not have (measured there, before the scenario moved to three nodes).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime
from functools import partial
from typing import Any

import pytest

from tests.cluster.conftest import Kube
from tests.cluster.realnet import Client, internet
from tests.cluster.realpods import backend, delete_namespaces, gateway_address, route
from tests.harness.cluster import Cluster
from tests.harness.node import deployment_ready
from tests.harness.registry import Registry
from tests.support.output import show

# A surge and a handover across nodes: make cluster-test-nodes runs it on three, make cluster-test leaves it out.
pytestmark = [pytest.mark.playbook, pytest.mark.three_nodes]
NS = "envoy-gateway-system"
TENANT = "tenant-flows"
HOST = "shop.example.com"
SHUTDOWN = {"min_drain_duration": "5s", "drain_timeout": "30s"}
PROXIES = "app.kubernetes.io/component=proxy"


def config(kube: Kube, **extra: Any) -> dict[str, Any]:
    return kube.config(
        default_gateway={"enabled": True},
        data_plane={"replicas": 2, "shutdown": SHUTDOWN, **extra.pop("data_plane", {})},
        **extra,
    )


def _workloads(kube: Kube, kind: str) -> list[dict[str, Any]]:
    return kube.items(
        f"/apis/apps/v1/namespaces/{NS}/{kind}", labelSelector="app.kubernetes.io/managed-by=envoy-gateway"
    )


def _settled(kube: Kube, kind: str) -> bool:
    """The one proxy workload of `kind` rolled out, and no proxy pod is left terminating (draining)."""
    workloads = _workloads(kube, kind)
    pods = kube.items(f"/api/v1/namespaces/{NS}/pods", labelSelector=PROXIES)
    if len(workloads) != 1 or any(p["metadata"].get("deletionTimestamp") for p in pods):
        return False
    (w,) = workloads
    status = w.get("status") or {}
    if status.get("observedGeneration") != w["metadata"]["generation"]:
        return False
    if kind == "deployments":
        return deployment_ready(kube.api, NS, w["metadata"]["name"]) and len(pods) == w["spec"]["replicas"]
    want = status.get("desiredNumberScheduled", -1)
    return bool(status.get("updatedNumberScheduled") == status.get("numberReady") == want == len(pods) > 0)


def _restart(kube: Kube, kind: str) -> None:
    """What `kubectl rollout restart` does: a new pod template (an annotation with the time)."""
    (w,) = _workloads(kube, kind)
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    kube.api.merge_patch(
        f"/apis/apps/v1/namespaces/{NS}/{kind}/{w['metadata']['name']}",
        {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}},
    )


def _pods(kube: Kube) -> set[str]:
    return {p["metadata"]["name"] for p in kube.items(f"/api/v1/namespaces/{NS}/pods", labelSelector=PROXIES)}


def _replaced(kube: Kube, old: set[str]) -> bool:
    return not _pods(kube) & old


@pytest.fixture(scope="module")
def kube(cluster: Cluster, registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kube]:
    k = Kube(cluster, registry, tmp_path_factory.mktemp("rollout"))
    try:
        yield k
    finally:
        delete_namespaces(k, TENANT)
        k.playbook("uninstall", k.config()).ok()
        delete_namespaces(k, NS)


def test_proxy_rollouts_fail_no_request(kube: Kube) -> None:
    started = time.monotonic()
    timings: dict[str, float] = {}
    kube.playbook("install", config(kube)).ok()
    timings["install"] = time.monotonic() - started
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TENANT}})
    backend(kube, TENANT, "echo")
    kube.apply(route("HTTPRoute", TENANT, "shop", "http", HOST, "echo", 80))
    kube.wait(partial(deployment_ready, kube.api, TENANT, "echo"), 120, "backend Ready")
    vip = gateway_address(kube)
    proxy = kube.get(f"/apis/gateway.envoyproxy.io/v1alpha1/namespaces/{NS}/envoyproxies/eg-shared") or {}
    rendered = proxy["spec"]["shutdown"]
    assert rendered == {"drainTimeout": SHUTDOWN["drain_timeout"], "minDrainDuration": SHUTDOWN["min_drain_duration"]}
    with ExitStack() as stack:
        net = stack.enter_context(internet())
        client = Client(vip, 80, HOST, netns=net)
        probe = Client(vip, 80, HOST, netns=net)
        kube.wait(lambda: probe.once() is None, 90, f"a 200 through {vip}:80")
        client.start()
        stack.callback(client.stop)
        time.sleep(2)
        kube.wait(partial(_settled, kube, "deployments"), 120, "the proxy Deployment settled")

        for kind, phase in (("deployments", "Deployment restart"), ("daemonsets", "DaemonSet restart")):
            if kind == "daemonsets":
                client.phase = "switch to DaemonSet (not judged)"
                start = time.monotonic()
                cfg = config(kube, data_plane={"kind": "DaemonSet"}, service={"external_traffic_policy": "Local"})
                kube.playbook("install", cfg).ok()
                kube.wait(partial(_settled, kube, "daemonsets"), 180, "the proxy DaemonSet settled")
                timings["switch to DaemonSet"] = time.monotonic() - start
                client.phase = "DaemonSet steady"
                time.sleep(2)
            before = _pods(kube)
            client.phase = phase
            start = time.monotonic()
            _restart(kube, kind)
            kube.wait(partial(_replaced, kube, before), 180, f"every old proxy pod of the {kind} replaced")
            kube.wait(partial(_settled, kube, kind), 180, f"the {kind} rolled out and drained")
            timings[phase] = time.monotonic() - start
            client.phase = f"after {phase}"
            time.sleep(2)
        client.stop()
    timings["in all"] = time.monotonic() - started
    show(
        f"ROLLOUT failed requests (steady client on the internet -> {vip}:80, 20/s; drain "
        f"min {SHUTDOWN['min_drain_duration']}, timeout {SHUTDOWN['drain_timeout']}): {client.report()}\n"
        "ROLLOUT timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
    )
    judged = [p for p in client.sent if not p.startswith("switch")]
    assert all(client.sent.get(p) for p in judged), client.sent
    for phase in judged:
        assert not client.failed.get(phase), (phase, client.failed[phase][:10])
