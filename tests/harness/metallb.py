"""A real MetalLB (controller + speaker, L2 mode) as the cluster's LoadBalancer provider.

Installed the way MetalLB documents it, from the pinned module's own files (tools/go/metallb pins
go.universe.tf/metallb; `go list -m -json` there names its folder in the Go module cache, nothing is copied
into this repo): config/manifests/metallb-native.yaml (the CRDs, RBAC, the controller Deployment, the speaker
DaemonSet with hostNetwork, the webhook Service and ValidatingWebhookConfiguration) applied unchanged. Its
images are the ones tools/oci/images.py built and the node imported, under the tags those manifests name
(pull policy IfNotPresent, Kubernetes' default for a versioned tag: nothing is pulled). The controller makes
the webhook's certificate itself and writes its CA into the webhook configuration and the BGPPeer CRD's
conversion webhook; it also creates the speakers' memberlist secret. The API server reaches the webhook
Service through kube-proxy in the namespace it shares with the node.

Then, as a platform team would, an IPAddressPool over a TEST-NET range and an L2Advertisement of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from .api import Api
from .procs import wait_until

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "tools" / "go" / "metallb"
NAMESPACE = "metallb-system"
POOL = "203.0.113.0/24"  # TEST-NET-3: never routed
POOL_NAME = "test-net-3"
# Kinds in metallb-native.yaml -> their resource names (the REST path's last part).
PLURALS = {
    "Namespace": "namespaces",
    "CustomResourceDefinition": "customresourcedefinitions",
    "ServiceAccount": "serviceaccounts",
    "Role": "roles",
    "ClusterRole": "clusterroles",
    "RoleBinding": "rolebindings",
    "ClusterRoleBinding": "clusterrolebindings",
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "Service": "services",
    "Deployment": "deployments",
    "DaemonSet": "daemonsets",
    "ValidatingWebhookConfiguration": "validatingwebhookconfigurations",
    "IPAddressPool": "ipaddresspools",
    "L2Advertisement": "l2advertisements",
}


def module() -> dict[str, Any]:
    """The pinned MetalLB module as `go list -m -json` reports it (Path, Version, Dir in the module cache).
    Offline (GOPROXY=off): `make tools` downloaded it when it built the binaries."""
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=readonly", "GOPROXY": "off"}
    done = subprocess.run(
        ["go", "list", "-m", "-json", "go.universe.tf/metallb"],
        cwd=MODULE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    info = json.loads(done.stdout) if done.returncode == 0 else {}
    if not info.get("Dir"):
        raise RuntimeError(f"go.universe.tf/metallb is not in the Go module cache: run `make tools` ({done.stderr})")
    return dict(info)


def manifests(folder: Path | None = None) -> list[dict[str, Any]]:
    """metallb-native.yaml from the module, every object as MetalLB ships it."""
    folder = folder or Path(module()["Dir"])
    text = (folder / "config" / "manifests" / "metallb-native.yaml").read_text(encoding="utf-8")
    return [doc for doc in yaml.safe_load_all(text) if doc]


def resource_path(obj: dict[str, Any]) -> str:
    api_version = obj["apiVersion"]
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    ns = obj["metadata"].get("namespace")
    return f"{base}{f'/namespaces/{ns}' if ns else ''}/{PLURALS[obj['kind']]}/{obj['metadata']['name']}"


def apply(api: Api, obj: dict[str, Any], manager: str = "metallb-install") -> dict[str, Any]:
    """Server-side apply, as `kubectl apply --server-side` would."""
    return dict(
        api._call(
            "PATCH",
            resource_path(obj),
            params={"fieldManager": manager, "force": "true"},
            data=yaml.safe_dump(obj),
            headers={"Content-Type": "application/apply-patch+yaml"},
        )
    )


def images(objects: list[dict[str, Any]]) -> list[str]:
    """Every container image the manifests run, each checked to be one the node never pulls."""
    found = []
    for obj in objects:
        if obj["kind"] in ("Deployment", "DaemonSet"):
            for container in obj["spec"]["template"]["spec"]["containers"]:
                policy = container.get("imagePullPolicy", "IfNotPresent")
                if policy != "IfNotPresent" or container["image"].endswith(":latest"):
                    raise RuntimeError(f"{obj['kind']}/{obj['metadata']['name']}: {container['image']} would be pulled")
                found.append(container["image"])
    return found


def _deployment_ready(api: Api, name: str) -> bool:
    dep = api.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{name}")
    status = dep.get("status") or {}
    return bool(status.get("readyReplicas", 0) >= dep["spec"].get("replicas", 1))


def _daemonset_ready(api: Api, name: str) -> bool:
    ds = api.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets/{name}")
    status = ds.get("status") or {}
    want = status.get("desiredNumberScheduled", 0)
    return bool(want > 0 and status.get("numberReady", 0) == want and status.get("updatedNumberScheduled", 0) == want)


def pool_objects(pool: str = POOL, interfaces: list[str] | None = None) -> list[dict[str, Any]]:
    """The IPAddressPool and its L2Advertisement (announced on `interfaces` only, else on every interface
    MetalLB does not exclude)."""
    advertisement: dict[str, Any] = {"ipAddressPools": [POOL_NAME]}
    if interfaces:
        advertisement["interfaces"] = list(interfaces)
    meta = {"namespace": NAMESPACE}
    return [
        {
            "apiVersion": "metallb.io/v1beta1",
            "kind": "IPAddressPool",
            "metadata": {"name": POOL_NAME, **meta},
            # Never .0 or .255 of a /24: some clients take them for network and broadcast addresses.
            "spec": {"addresses": [pool], "avoidBuggyIPs": True, "autoAssign": True},
        },
        {
            "apiVersion": "metallb.io/v1beta1",
            "kind": "L2Advertisement",
            "metadata": {"name": POOL_NAME, **meta},
            "spec": advertisement,
        },
    ]


def apply_manifests(api: Api) -> dict[str, Any]:
    """Apply MetalLB's CRDs and native manifests (no webhook judges these: it only judges MetalLB's own
    resources). Right after the control plane is up: the pods start with the node's own, so their readiness
    probes' delays overlap CoreDNS's start. Returns the module's `go list` record."""
    info = module()
    objects = manifests(Path(info["Dir"]))
    from tools.oci.images import metallb_refs

    if sorted(images(objects)) != sorted(metallb_refs()):
        raise RuntimeError(f"MetalLB {info['Version']} runs {images(objects)}; the node imports {metallb_refs()}")
    for obj in objects:
        apply(api, obj)
        if obj["kind"] == "CustomResourceDefinition":
            wait_until(lambda o=obj: _established(api, o["metadata"]["name"]), 30, f"CRD {obj['metadata']['name']}")
    return info


def configure(
    api: Api, *, pool: str = POOL, interfaces: list[str] | None = None, timeout: float = 180
) -> dict[str, float]:
    """Wait until the controller and every speaker are Ready, then create the pool and its L2Advertisement
    (through MetalLB's own validating webhook). Returns how long each step took (seconds since the call)."""
    start = time.monotonic()
    timings: dict[str, float] = {}
    wait_until(lambda: _deployment_ready(api, "controller"), timeout, "MetalLB controller Ready")
    timings["controller Ready"] = time.monotonic() - start
    wait_until(lambda: _daemonset_ready(api, "speaker"), timeout, "MetalLB speakers Ready")
    timings["speakers Ready"] = time.monotonic() - start
    for obj in pool_objects(pool, interfaces):
        # The webhook answers once the controller has written its certificate's CA into the configuration.
        wait_until(lambda o=obj: apply(api, o), 60, f"MetalLB {obj['kind']} accepted by its webhook", interval=1)
    timings["pool created"] = time.monotonic() - start
    return timings


def _established(api: Api, name: str) -> bool:
    crd = api.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    conditions = (crd.get("status") or {}).get("conditions") or []
    return any(c["type"] == "Established" and c["status"] == "True" for c in conditions)


def events(api: Api, namespace: str, name: str) -> list[tuple[str, str, str]]:
    """The events about a Service: (source component, reason, message), MetalLB's among them."""
    found = []
    for event in api.items(f"/api/v1/namespaces/{namespace}/events", fieldSelector=f"involvedObject.name={name}"):
        source = (event.get("source") or {}).get("component") or event.get("reportingComponent") or ""
        found.append((str(source), str(event.get("reason")), str(event.get("message"))))
    return found
