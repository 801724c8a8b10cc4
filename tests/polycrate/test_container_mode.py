"""The block's life cycle through the real Polycrate CLI v0.23.3 in container mode, Polycrate's default and what
most users run: `polycrate run envoy ...` without --local starts every action in Polycrate's image with
`docker run --network host -v <workspace>:/workspace --workdir /workspace/blocks/envoy`.

The engine is Debian's dockerd 20.10, started here on a socket of its own (tools/oci.dockerd); the image is a
stand-in of Polycrate's, built by `make images` from the release's Dockerfile.goreleaser (tools/oci/images.py:
what it leaves out, and why) and loaded under the tag Polycrate runs (cargo.ayedo.cloud/library/polycrate:
0.23.3). Polycrate pulls through the Docker SDK at API 1.47, which dockerd 20.10 refuses, so it runs with
--pull=false. The cluster is the real node's (tests/harness; this pytest enters its network and mount namespace
through `-p tests.cluster.conftest`, which `make container-mode-test` passes), and dockerd runs in that
namespace, so its containers' host network is the node's: they reach the API server and the chart registry
there. The kubeconfig goes in with its certificates inlined (the harness's names files outside the workspace)
and the registry's CA through SSL_CERT_FILE, passed with Polycrate's --env.

Guards: in the image's Python (jsonschema 3.2, kubernetes 17, PyYAML 5.3) and with its
helm 3.17.0, render, plan, install, install again (changed=0), status and uninstall --force pass, the
artifacts land in the block's artifacts folder, and the summary shows the Gateway's address. Nothing on the
test's PATH runs a playbook, so every action that passes ran in the image. Seen red for real: render in the
image failed on jsonschema 3.2 (`module 'jsonschema' has no attribute 'Draft202012Validator'`) and plan in the
kubernetes 17 client until the block supported both.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.cluster.conftest import Kube, chart_registry, cluster, kube, registry  # noqa: F401  # the local control plane
from tests.harness.cluster import Cluster
from tests.harness.pki import CONTAINER_ADDRESS
from tests.harness.registry import Registry
from tests.polycrate.workspace import NS, POLYCRATE, Workspace, create, environment, lifecycle
from tools.oci import Dockerd, Store, dockerd, images

# Needs dockerd and the real node's namespaces: make container-mode-test runs it, make unit-go leaves it out.
pytestmark = [pytest.mark.playbook, pytest.mark.container_mode]


@pytest.fixture(scope="module")
def docker() -> Iterator[Dockerd]:
    store = Store(offline=True)
    images.polycrate_image(store)
    with dockerd(store) as daemon:
        daemon.load(store, images.POLYCRATE_REF)
        yield daemon


@pytest.fixture(scope="module")
def image_registry(cluster: Cluster) -> Iterator[Registry]:  # noqa: F811
    """The charts on a registry at a non-loopback address of the node's private network namespace: helm 3.17
    (the image's) speaks plain HTTP to a loopback registry, which answers 400 over TLS; a real registry is never
    on loopback. The address goes on the namespace's lo (the `cluster` fixture fails outside it)."""
    subprocess.run(["ip", "addr", "replace", f"{CONTAINER_ADDRESS}/32", "dev", "lo"], check=True)
    with chart_registry(cluster, "image-registry", CONTAINER_ADDRESS) as reg:
        yield reg


def inline_kubeconfig(source: Path, dest: Path) -> Path:
    """`source` with every certificate and key file it names inlined (*-data), so it works in a container."""
    config = yaml.safe_load(source.read_text(encoding="utf-8"))
    for section, keys in (("clusters", ("certificate-authority",)), ("users", ("client-certificate", "client-key"))):
        for entry in config.get(section, []):
            body = entry.get(section.rstrip("s"), {})
            for key in keys:
                if key in body:
                    body[f"{key}-data"] = base64.b64encode(Path(body.pop(key)).read_bytes()).decode()
    dest.write_text(yaml.safe_dump(config), encoding="utf-8")
    dest.chmod(0o600)
    return dest


def test_lifecycle_in_container_mode(
    docker: Dockerd,
    image_registry: Registry,
    kube: Kube,  # noqa: F811
    tmp_path: Path,
) -> None:
    oci = f"oci://{image_registry.host}/envoyproxy"
    cfg = kube.config(
        chart={"repo": {"url": f"{oci}/gateway-helm"}},
        crds={"chart_url": f"{oci}/gateway-crds-helm"},
        default_gateway={"enabled": True},
        service={"loadbalancer_ip": "203.0.113.78", "loadbalancer_provider": "metallb"},
    )
    kubeconfig = inline_kubeconfig(kube.cluster.kubeconfig, tmp_path / "kubeconfig.yml")
    path = create(tmp_path / "ws", cfg, kubeconfig)
    (path / "ca-bundle.crt").write_bytes(kube.registry.ca_bundle.read_bytes())
    env = environment(tmp_path / "home", Path("/usr/local/bin"), {"DOCKER_HOST": docker.host})
    command = [str(POLYCRATE), "--pull=false", "--env", "SSL_CERT_FILE=/workspace/ca-bundle.crt"]
    # Nothing on this PATH runs a playbook: every action that passes ran in the image.
    assert shutil.which("ansible-playbook", path=env["PATH"]) is None
    ws = Workspace(path, env, command=command)
    lifecycle(ws, f"Gateway {NS}/eg-shared: 203.0.113.78")
    assert kube.get(f"/api/v1/namespaces/{NS}") is None, "uninstall removes the namespace it created"
