"""The envoy-waf image as built from waf/Dockerfile (`make images`), run for real with crun the way the
block's Deployment runs it: the rendered container args, the rendered settings mounted read-only at
/etc/envoy-waf, a tmpfs /tmp, uid 65532, read-only root, no capabilities, the rendered CPU and memory
limits. In front of it the real Envoy on Envoy Gateway's generated configuration (tests/traffic), behind
it a tenant backend. Runs in a network namespace of its own (`make image-test`): the WAF's ports are fixed.

What it does not prove: the real base images (golang, distroless static) are stand-ins here, made under
the tags the Dockerfile names (tools/oci/images.py); see waf/BUILD.md."""

from __future__ import annotations

import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.traffic import deploy, scenario, stack
from tests.translator import configs, tenant
from tools.oci import Running, Store, images, run_image, wait_for

GRPC_PORT, METRICS_PORT = 9002, 9090
# grpc.health.v1.Health/Check with an empty request: one uncompressed gRPC frame of length 0.
HEALTH_REQUEST = b"\x00\x00\x00\x00\x00"
SERVING = b"\x00\x00\x00\x00\x02\x08\x01"  # HealthCheckResponse{status: SERVING}


def quantity(text: str) -> float:
    """A Kubernetes quantity (500m, 2, 256Mi, 1Gi) as a number."""
    units = {"m": 1e-3, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30}
    for suffix, factor in units.items():
        if text.endswith(suffix):
            return float(text.removesuffix(suffix)) * factor
    return float(text)


def grpc_health(tmp: Path) -> bytes:
    """The WAF's gRPC health answer over h2c (curl, no gRPC library needed)."""
    request = tmp / "health-request"
    request.write_bytes(HEALTH_REQUEST)
    proc = subprocess.run(
        ["curl", "-sS", "--http2-prior-knowledge", "-m", "5", "-H", "content-type: application/grpc",
         "-H", "te: trailers", "--data-binary", f"@{request}",
         f"http://127.0.0.1:{GRPC_PORT}/grpc.health.v1.Health/Check"],
        capture_output=True, check=False,
    )  # fmt: skip
    return proc.stdout if proc.returncode == 0 else b""


@dataclass
class Edge:
    deployed: deploy.Deployed  # Envoy and the backends (its `waf` is None: the WAF is the container)
    waf: Running
    pod: dict[str, Any]

    def get(self, path: str = "/", method: str = "GET", body: bytes | None = None, **headers: str) -> int:
        port, host = self.deployed.port("http"), self.deployed.host("http")
        status, _, _ = stack.http_request(port, host, path, method, body, headers)
        return status


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edge]:
    store = Store(offline=True)
    images.waf_image(store)
    built = scenario.build(configs.EXAMPLES["waf"])
    args, mounts = deploy._waf_pod(built)
    pod = next(
        o for o in built.inputs if o["kind"] == "Deployment" and o["metadata"]["labels"].get(deploy.COMPONENT) == "waf"
    )["spec"]["template"]["spec"]
    work = Path(tmp_path_factory.mktemp("waf-image"))
    binds: dict[str, Path] = {}
    for index, (mount_path, files) in enumerate(sorted(mounts.items())):
        binds[mount_path] = work / f"mount-{index}"
        binds[mount_path].mkdir()
        for name, content in files.items():
            (binds[mount_path] / name).write_text(content, encoding="utf-8")
    limits = pod["containers"][0]["resources"]["limits"]
    tmpfs = [m["mountPath"] for m in pod["containers"][0]["volumeMounts"] if m["mountPath"] not in binds]
    with ExitStack() as stop:
        for key, (address, ports) in sorted(built.services.items()):
            namespace, name = key.split("/")
            if namespace == tenant.TENANT_NAMESPACE and ports[0][1] != tenant.BACKEND_PORT["TLS"]:
                stop.callback(stack.HttpBackend(name, address, ports[0][1]).stop)
        waf = stop.enter_context(
            run_image(
                store,
                images.WAF_REF,
                args=args,
                binds=binds,
                tmpfs=tmpfs,
                memory_bytes=int(quantity(limits["memory"])),
                cpu_quota=quantity(limits["cpu"]) if "cpu" in limits else None,
            )
        )
        wait_for(lambda: grpc_health(work) == SERVING, "gRPC health SERVING", waf, timeout=60)
        envoy = stack.Envoy(built.bootstrap)
        stop.callback(envoy.stop)
        yield Edge(deploy.Deployed(built, envoy, None, {}), waf, pod)


def test_image_runs_as_the_pod_says(edge: Edge) -> None:
    """The image's user is the numeric 65532 the pod's securityContext names (runAsNonRoot can check it)."""
    config = Store(offline=True).inspect(images.WAF_REF)["OCIv1"]["config"]
    assert config["User"].split(":")[0] == str(edge.pod["securityContext"]["runAsUser"]) == "65532"
    assert edge.waf.alive()


def test_health_is_serving_and_metrics_answer(edge: Edge, tmp_path: Path) -> None:
    assert grpc_health(tmp_path) == SERVING
    with urllib.request.urlopen(f"http://127.0.0.1:{METRICS_PORT}/metrics", timeout=5) as response:
        assert response.status == 200
        assert b"# TYPE" in response.read()


def test_benign_request_passes_and_attacks_are_refused(edge: Edge) -> None:
    """Over ext_proc from the Envoy Gateway-generated filter: the bundled CRS (/opt/crs) judges."""
    assert edge.get("/api/orders/42") == 200
    assert edge.get("/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E") == 403
    assert edge.get("/search?id=1%27%20OR%20%271%27%3D%271") == 403
    body = b"user=admin&password=%27%20OR%201%3D1--"
    assert edge.get("/login", "POST", body, **{"Content-Type": "application/x-www-form-urlencoded"}) == 403


def test_sigterm_stops_it_cleanly(edge: Edge) -> None:
    """Last: the container exits 0 on SIGTERM (the kubelet's stop) within the pod's grace period."""
    assert edge.waf.stop(timeout=edge.pod["terminationGracePeriodSeconds"]) == 0, edge.waf.output()
