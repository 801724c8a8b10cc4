"""The real node works as a cluster's node does: it is Ready, runs a Deployment whose real HTTP probes gate
its readiness, serves a ClusterIP Service through kube-proxy, resolves Service names through CoreDNS, and
never pulls an image (every image is imported; pull policy IfNotPresent as users run it)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
import requests

from tests.harness.api import Api, ApiError
from tests.harness.node import NODE_NAME, ctr_command, deployment_ready, pull_attempts
from tests.harness.procs import wait_until
from tools.oci.images import ECHO_REF, EG_REPOSITORY, ENVOY_REPOSITORY

READY_DELAY = 4  # seconds the echo backend answers 503 on /healthz after start


def restricted() -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "readOnlyRootFilesystem": True,
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }


@pytest.fixture(scope="module")
def namespace(api: Api) -> Iterator[str]:
    name = f"node-{uuid.uuid4().hex[:6]}"
    api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    api.delete(f"/api/v1/namespaces/{name}")


def when(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def post_deployment(api: Api, namespace: str, container: dict[str, Any], replicas: int) -> None:
    """A Deployment `web` (pods labelled app=web) of one container."""
    labels = {"app": "web"}
    api.post(
        f"/apis/apps/v1/namespaces/{namespace}/deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"containers": [container]}},
            },
        },
    )


def test_node_ready_with_its_runtime(api: Api) -> None:
    node = api.get(f"/api/v1/nodes/{NODE_NAME}")
    ready = {c["type"]: c["status"] for c in node["status"]["conditions"]}
    assert ready["Ready"] == "True", node["status"]["conditions"]
    info = node["status"]["nodeInfo"]
    assert info["containerRuntimeVersion"] == "containerd://2.2.1", info
    assert info["kubeletVersion"] == "v1.36.3", info
    assert node["spec"].get("podCIDR") == "10.244.0.0/24", node["spec"]


def test_deployment_with_real_probes_service_and_dns(api: Api, namespace: str) -> None:
    labels = {"app": "web"}
    container = {
        "name": "web",
        "image": ECHO_REF,
        "imagePullPolicy": "IfNotPresent",
        "env": [{"name": "READY_DELAY", "value": f"{READY_DELAY}s"}],
        "ports": [{"containerPort": 8080, "name": "http"}],
        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 1},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "initialDelaySeconds": 10},
        "securityContext": restricted(),
        "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}},
    }
    post_deployment(api, namespace, container, replicas=2)
    api.post(
        f"/api/v1/namespaces/{namespace}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "web", "namespace": namespace},
            "spec": {"selector": labels, "ports": [{"port": 80, "targetPort": "http", "name": "http"}]},
        },
    )
    start = time.monotonic()
    wait_until(lambda: deployment_ready(api, namespace, "web"), 120, "web Deployment Ready")
    print(f"\n2-replica Deployment with real probes Ready in {time.monotonic() - start:.1f} s")
    pods = api.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector="app=web")
    assert len(pods) == 2
    for pod in pods:
        status = pod["status"]
        (state,) = status["containerStatuses"]
        assert state["ready"], state
        assert state["restartCount"] == 0, state
        ready = next(c for c in status["conditions"] if c["type"] == "Ready")
        # The readiness probe is real: the pod turned Ready only once /healthz answered 200.
        assert when(ready["lastTransitionTime"]) - when(state["state"]["running"]["startedAt"]) >= READY_DELAY - 1

    # From the node (this process lives in its network namespace): the ClusterIP through kube-proxy.
    svc = api.get(f"/api/v1/namespaces/{namespace}/services/web")
    http = requests.Session()
    http.trust_env = False  # never a proxy from the environment: the ClusterIP exists only here
    cluster_ip = f"http://{svc['spec']['clusterIP']}/"

    # kube-proxy rewrites its rules after the EndpointSlice turns ready, a moment after the Deployment does;
    # until then the Service's REJECT rule answers "no route to host" (wait_until takes that as "not yet").
    wait_until(lambda: http.get(cluster_ip, timeout=5).ok, 30, "the ClusterIP served by kube-proxy")
    answered = {http.get(cluster_ip, timeout=5).json()["pod"] for _ in range(12)}
    assert answered <= {p["metadata"]["name"] for p in pods}
    assert answered

    # From a pod: the Service by its DNS name, through CoreDNS.
    url = f"http://web.{namespace}.svc.cluster.local/"
    client: dict[str, Any] = {"name": "client", "image": ECHO_REF, "imagePullPolicy": "IfNotPresent"}
    client.update(args=["get", url], securityContext=restricted())
    api.post(
        f"/api/v1/namespaces/{namespace}/pods",
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "client", "namespace": namespace},
            "spec": {"restartPolicy": "Never", "containers": [client]},
        },
    )

    def finished() -> str | None:
        phase: str | None = api.get(f"/api/v1/namespaces/{namespace}/pods/client")["status"].get("phase")
        return phase if phase in ("Succeeded", "Failed") else None

    wait_until(finished, 90, "client pod finished")
    log = api.session.get(
        f"{api.url}/api/v1/namespaces/{namespace}/pods/client/log", verify=api.ca, timeout=10
    ).text.strip()
    print(f"client pod: GET {url} -> {log[:120]}")
    assert finished() == "Succeeded", log
    status, _, body = log.partition(" ")
    assert status == "200"
    assert json.loads(body)["pod"] in {p["metadata"]["name"] for p in pods}


def test_no_image_was_pulled(api: Api) -> None:
    assert pull_attempts(api) == []
    try:
        events = api.items("/api/v1/events", fieldSelector="reason=Pulled")
    except ApiError:
        events = []
    # IfNotPresent with the image imported: the kubelet says so instead of pulling.
    assert events
    assert all("already present on machine" in e["message"] for e in events), [e["message"] for e in events]


def ctr(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The node's containerd (the test runs in its namespaces)."""
    return subprocess.run(ctr_command(*args), capture_output=True, text=True, check=check)


def content(blob: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ctr("content", "get", blob).stdout)
    return data


def unpacked(manifest: str) -> bool:
    """Whether the image's top snapshot exists (its chain id: the layers' diff ids folded by sha256)."""
    diff_ids = content(content(manifest)["config"]["digest"])["rootfs"]["diff_ids"]
    chain = diff_ids[0]
    for diff in diff_ids[1:]:
        chain = "sha256:" + hashlib.sha256(f"{chain} {diff}".encode()).hexdigest()
    done = ctr("snapshots", "--snapshotter", "overlayfs", "info", chain, check=False)
    return done.returncode == 0


def test_the_node_stores_each_image_once_and_unpacks_only_what_runs() -> None:
    """The node's disk: every Envoy tag is one image (one set of blobs), and an image no pod has run is imported
    but not unpacked (seven nodes at once each unpacking every image had filled CI's disk)."""
    digests = {}
    for line in ctr("images", "ls").stdout.splitlines()[1:]:
        name, _, digest = line.split()[:3]
        digests[name] = digest
    assert unpacked(digests[ECHO_REF]), "the echo backend ran above: its snapshot must exist"
    idle = [n for n in digests if n.startswith(f"{EG_REPOSITORY}:")]
    assert idle
    assert not any(unpacked(digests[n]) for n in idle), "no Envoy Gateway pod runs here: nothing to unpack"
    envoy = {d for n, d in digests.items() if n.startswith(f"{ENVOY_REPOSITORY}:")}
    assert len(envoy) == 1, sorted(n for n in digests if n.startswith(ENVOY_REPOSITORY))
