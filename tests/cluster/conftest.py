"""The REAL playbooks against the REAL cluster of tests/harness (etcd, kube-apiserver, kube-controller-manager
and a real node: kubelet, containerd, runc, CNI, kube-proxy, kube-scheduler, kube-router, CoreDNS) with the
REAL Envoy Gateway controller, certgen, proxies and WAF as pods from the images `make images` built, and the
real charts from shared/.

This pytest process enters the node's network and mount namespace at configure time, before any thread
exists (`enter_node_namespaces`; a test module outside tests/cluster gets it with `-p tests.cluster.conftest`):
the tests, helm, ansible and Polycrate reach the API server at the node's address, and the LoadBalancer
addresses MetalLB assigns are served by kube-proxy there. One cluster per test session (its start costs
about 25 s); every test leaves it as it found it (the `kube` fixture uninstalls). At the session's end no
image pull may have been attempted (every image is imported; pull policy IfNotPresent as users run it).
"""

from __future__ import annotations

import atexit
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import polycrate
from envoy_block.lifecycle.uninstall import FINISHED_PODS_LEFT_OUT
from envoy_block.polycrate import merge_config
from tests.conftest import ROOT
from tests.harness import metallb
from tests.harness.api import ApiError
from tests.harness.cluster import Cluster
from tests.harness.node import enter_namespaces, node_image_archives
from tests.harness.registry import PASSWORD as REGISTRY_PASSWORD
from tests.harness.registry import USER as REGISTRY_USER
from tests.harness.registry import Registry
from tests.support import apiserver, output
from tests.support.shared import shared_dir

BIN = Path(sys.executable).parent
NODE_IMAGES: list[Path] = []


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        # xdist's controller runs no test: it exports the archives once, before its workers start (they reuse
        # them), and each worker enters a node of its own.
        node_image_archives(True)
        return
    enter_node_namespaces()


def enter_node_namespaces() -> None:
    """Export the images' archives on the machine's side (buildah), then enter the node's namespaces (once)."""
    if NODE_IMAGES:
        return
    NODE_IMAGES[:] = node_image_archives(True)
    workdir = Path(tempfile.mkdtemp(prefix="envoy-node-ns-"))
    atexit.register(shutil.rmtree, workdir, ignore_errors=True)
    enter_namespaces(workdir)
    # The children (Ansible's kubernetes.core, helm, Polycrate) get a temp folder of this session's own:
    # kubernetes.core keeps its discovery cache as one file per API-server address in it, and every session's
    # node has the same address, so sessions side by side (`pytest -n 2`) would read each other's CRDs. This
    # process keeps /tmp for pytest's folders (tempfile resolved it above, before the variable changes).
    children = workdir / "tmp"
    children.mkdir()
    os.environ["TMPDIR"] = str(children)


@dataclass(frozen=True)
class PlaybookCost:
    """One playbook run: its test file, the wall time, and the CPU of ansible-playbook and everything it
    started (modules, helm), read as this process's reaped children's CPU before and after, so a thread of
    the test reaping a process of its own (curl, a client) at the same time is counted in as well."""

    test_file: str
    name: str
    wall: float
    cpu: float


PLAYBOOK_COSTS: list[PlaybookCost] = []


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# The longest test files first (their wall time in a warm make test, 2026-12-07, seconds): pytest-xdist's
# loadfile scheduling hands files out in collection order as workers free up, so a long file collected last
# (alphabetically, test_real_flows.py) ran alone at the end while the other session idled. Longest first
# (the classic LPT order) leaves the short files for the end. Only the order changes: a file missing here
# keeps its place after these.
LONG_FILES = {
    "test_examples.py": 1450,
    "test_lifecycle.py": 1450,
    "test_crd_owners.py": 1300,
    "test_real_flows.py": 1000,
    "test_install.py": 600,
    "test_upgrade.py": 450,
    "test_polycrate.py": 350,
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: -LONG_FILES.get(Path(item.nodeid.split("::", 1)[0]).name, 0))


# Each test file's wall time in this session (setup, call and teardown of its tests), in the order it ran: with
# two sessions side by side (make cluster-test), whether one of them ends long after the other.
FILE_WALL: dict[str, float] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    started = time.monotonic()
    yield
    name = item.nodeid.split("::", 1)[0]
    FILE_WALL[name] = FILE_WALL.get(name, 0.0) + time.monotonic() - started


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist hands this worker's output to the controller
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Show what the playbooks under test cost in this session, per test file: the largest share of make
    test's CPU (docs/testing.md), so where a cut has to come from; and each file's wall time."""
    if PLAYBOOK_COSTS:
        output.show(playbook_costs(PLAYBOOK_COSTS))
    if FILE_WALL:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "session")
        files = ", ".join(f"{Path(name).name} {wall:.0f} s" for name, wall in FILE_WALL.items())
        output.show(f"test files of {worker}, in order: {files}; {sum(FILE_WALL.values()):.0f} s in all")


def playbook_costs(costs: list[PlaybookCost]) -> str:
    files: dict[str, list[PlaybookCost]] = {}
    for cost in costs:
        files.setdefault(cost.test_file, []).append(cost)
    ranked = sorted(files.items(), key=lambda item: -sum(c.cpu for c in item[1]))
    lines = [
        f"playbook runs: {len(costs)}, {sum(c.wall for c in costs):.0f} s wall, "
        f"{sum(c.cpu for c in costs):.0f} s CPU (ansible-playbook, its modules and helm); by test file:"
    ]
    lines += [
        f"  {name}: {len(runs)} runs, {sum(c.wall for c in runs):.0f} s wall, {sum(c.cpu for c in runs):.0f} s CPU"
        for name, runs in ranked
    ]
    return "\n".join(lines)


BLOCK_POLY = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
CHARTS = shared_dir() / "charts"


@dataclass
class Run:
    returncode: int
    output: str
    helm: list[str] = field(default_factory=list)

    @property
    def recap(self) -> dict[str, int]:
        match = re.search(r"localhost\s+:\s+(.*)", self.output)
        assert match, self.output[-3000:]
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}

    def ok(self) -> Run:
        assert self.returncode == 0, self.output[-6000:]
        return self


class Kube:
    """The running cluster and chart registry, plus the block's playbooks pointed at them."""

    def __init__(self, cluster: Cluster, registry: Registry | None, workdir: Path) -> None:
        """`registry` None: for scenarios that pull no chart (controller.install false, crds.directory)."""
        self.cluster = cluster
        self._registry = registry
        self.api = cluster.api
        self.workdir = workdir
        self.runs = 0

    @property
    def registry(self) -> Registry:
        assert self._registry is not None, "a Kube without a chart registry runs configs that pull no chart"
        return self._registry

    def config(self, **extra: Any) -> dict[str, Any]:
        """The real charts from the local OCI registry (with chart.auth), merged with `extra` the way
        Polycrate merges a workspace config over the block's."""
        oci = f"oci://{self.registry.host}/envoyproxy"
        cfg: dict[str, Any] = {
            "chart": {
                "repo": {"url": f"{oci}/gateway-helm"},
                "auth": {"username": REGISTRY_USER, "password": REGISTRY_PASSWORD},
            },
            "crds": {"chart_url": f"{oci}/gateway-crds-helm"},
            "wait": {"timeout": 180},
            # Every uninstall waits for the proxy pods' graceful shutdown, at least min_drain_duration (30 s by
            # default, for a cloud load balancer's health checks; kube-proxy here follows in about a second).
            # The defaults are rendered and checked by tests/cluster/test_proxy_availability.py.
            "data_plane": {"shutdown": {"min_drain_duration": "3s", "drain_timeout": "15s"}},
        }
        return dict(merge_config(cfg, extra))

    def playbook(
        self,
        name: str,
        config: dict[str, Any],
        *extra: str,
        kubeconfig: Path | None = None,
        record_helm: bool = False,
        watch: Callable[[str], None] | None = None,
    ) -> Run:
        """Run playbooks/<name>.yml; with record_helm, every helm command it starts is listed in Run.helm; with
        watch, each line of the output (stdout and stderr together) is handed to it as Ansible prints it."""
        kubeconfig = kubeconfig or self.cluster.kubeconfig
        snap = polycrate.snapshot(BLOCK_POLY, {"config": config}, str(self.workdir / "artifacts"), str(kubeconfig))
        snap_file = self.workdir / "snapshot.yml"
        snap_file.write_text(yaml.safe_dump(snap), encoding="utf-8")
        env = {
            **os.environ,
            "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
            "ANSIBLE_NOCOLOR": "1",
            "PATH": f"{BIN}{os.pathsep}{ROOT / '.tools/bin'}{os.pathsep}{os.environ['PATH']}",
            "KUBECONFIG": str(kubeconfig),
            "HOME": str(self.workdir),
            **({"SSL_CERT_FILE": str(self._registry.ca_bundle)} if self._registry else {}),
        }
        helm_log = self.workdir / "helm-calls.log"
        if record_helm:
            # A helm first on PATH that notes its arguments and runs the real one.
            wrapper = self.workdir / "helm-recorder"
            wrapper.mkdir(exist_ok=True)
            (wrapper / "helm").write_text(
                f'#!/bin/sh\necho "$*" >>{helm_log}\nexec {ROOT / ".tools/bin/helm"} "$@"\n', encoding="utf-8"
            )
            (wrapper / "helm").chmod(0o755)
            helm_log.write_text("", encoding="utf-8")
            env["PATH"] = f"{wrapper}{os.pathsep}{env['PATH']}"
        command = [str(BIN / "ansible-playbook"), "-e", f"@{snap_file}", f"playbooks/{name}.yml", *extra]
        started, cpu = time.monotonic(), _children_cpu()
        if watch is None:
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
            returncode, output = done.returncode, done.stdout + done.stderr
        else:
            lines: list[str] = []
            with subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            ) as process:
                assert process.stdout is not None
                for line in process.stdout:
                    lines.append(line)
                    watch(line)
            returncode, output = process.returncode, "".join(lines)
        test_file = os.environ.get("PYTEST_CURRENT_TEST", "outside a test").split("::", 1)[0]
        PLAYBOOK_COSTS.append(PlaybookCost(test_file, name, time.monotonic() - started, _children_cpu() - cpu))
        calls = helm_log.read_text(encoding="utf-8").splitlines() if record_helm else []
        run = Run(returncode, output, calls)
        # Every run's full output stays beside the test for diagnosis (assertions show only the tail).
        self.runs += 1
        (self.workdir / f"{self.runs:02d}-{name}.log").write_text(run.output, encoding="utf-8")
        return run

    def get(self, path: str) -> dict[str, Any] | None:
        try:
            return dict(self.api.get(path))
        except ApiError as err:
            if err.status == 404:
                return None
            raise

    def items(self, path: str, **params: str) -> list[dict[str, Any]]:
        return self.api.items(path, **params)

    def apply(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create an object as a tenant would (server-side apply with the tenant's own field manager)."""
        path = resource_path(obj)
        resp = self.api._call(
            "PATCH",
            f"{path}/{obj['metadata']['name']}",
            params={"fieldManager": "tenant", "force": "true"},
            data=yaml.safe_dump(obj),
            headers={"Content-Type": "application/apply-patch+yaml"},
        )
        return dict(resp)

    def delete(self, obj: dict[str, Any]) -> None:
        apiserver.delete(self.api, f"{resource_path(obj)}/{obj['metadata']['name']}")

    def delete_namespace(self, name: str, timeout: float = 180) -> None:
        """Delete a namespace nothing recreates pods in any more, and wait until it is gone. Its pods go first:
        the namespace controller, finding pods still terminating, looks again only after their grace period
        (Envoy Gateway gives a proxy drainTimeout + 300 s), long after they are gone. Finished pods (certgen's,
        kept until its Job's 30 s TTL) it deletes at once, as uninstall knows (FINISHED_PODS_LEFT_OUT)."""
        path = f"/api/v1/namespaces/{name}"
        if self.get(path) is None:
            return
        running = ",".join(FINISHED_PODS_LEFT_OUT)
        self.wait(
            lambda: not self.items(f"{path}/pods", fieldSelector=running),
            timeout,
            f"the pods left in namespace {name} gone",
        )
        self.delete({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        self.wait(lambda: self.get(path) is None, timeout, f"namespace {name} deleted")

    def wait(self, check: Callable[[], Any], timeout: float, what: str) -> Any:
        try:
            return apiserver.wait(check, what, timeout)
        except AssertionError as err:
            raise AssertionError(f"{err}\n{self.diagnostics()}") from None

    def diagnostics(self) -> str:
        """What MetalLB said about each LoadBalancer Service still without an address (a wait on a Gateway's
        address is the usual one to time out)."""
        try:
            said = {}
            for svc in self.items("/api/v1/services"):
                meta, status = svc["metadata"], svc.get("status") or {}
                if svc["spec"].get("type") == "LoadBalancer" and not (status.get("loadBalancer") or {}).get("ingress"):
                    said[f"{meta['namespace']}/{meta['name']}"] = metallb.events(
                        self.api, meta["namespace"], meta["name"]
                    )
        except (ApiError, OSError) as err:
            return f"(no diagnostics: {err})"
        return f"LoadBalancer Services without an address, and what MetalLB said: {said}" if said else ""


PLURALS = {
    "Gateway": "gateways",
    "GatewayClass": "gatewayclasses",
    "HTTPRoute": "httproutes",
    "TLSRoute": "tlsroutes",
    "ClientTrafficPolicy": "clienttrafficpolicies",
    "BackendTrafficPolicy": "backendtrafficpolicies",
    "EnvoyExtensionPolicy": "envoyextensionpolicies",
    "EnvoyProxy": "envoyproxies",
    "Namespace": "namespaces",
    "Service": "services",
    "ConfigMap": "configmaps",
    "Secret": "secrets",
    "NetworkPolicy": "networkpolicies",
    "Deployment": "deployments",
    "Pod": "pods",
    "CustomResourceDefinition": "customresourcedefinitions",
}


def resource_path(obj: dict[str, Any]) -> str:
    api_version = obj["apiVersion"]
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    ns = obj["metadata"].get("namespace")
    return f"{base}{f'/namespaces/{ns}' if ns else ''}/{PLURALS[obj['kind']]}"


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if not NODE_IMAGES:
        pytest.fail("the node's namespaces were not entered: run with `-p tests.cluster.conftest`")
    workdir = tmp_path_factory.mktemp("cluster")
    # HARNESS_NODES=3: the multi-node scenarios (tests/cluster/test_nodes.py, `make cluster-test-nodes`).
    nodes = int(os.environ.get("HARNESS_NODES", "1"))
    running = Cluster(workdir, images=NODE_IMAGES, nodes=nodes).start()
    try:
        yield running
    finally:
        running.stop()
    assert not running.leftovers, f"left after the real node's teardown: {running.leftovers}"
    pulls = running.pulls()
    assert not pulls, "image pulls attempted (every image is imported, pull policy IfNotPresent):\n" + "\n".join(
        pulls[:10]
    )


@contextmanager
def chart_registry(cluster: Cluster, name: str, address: str = "127.0.0.1") -> Iterator[Registry]:
    """A registry (TLS, with the cluster's CA) holding the v1.9.1 charts install pulls; stopped afterwards."""
    reg = Registry(cluster.workdir / name, cluster.plane.pki, address=address).start()
    try:
        for chart in ("gateway-helm-v1.9.1.tgz", "gateway-crds-helm-v1.9.1.tgz"):
            reg.push(CHARTS / chart)
        yield reg
    finally:
        reg.stop()


@pytest.fixture(scope="session")
def registry(cluster: Cluster) -> Iterator[Registry]:
    with chart_registry(cluster, "registry") as reg:
        yield reg


@pytest.fixture
def kube(cluster: Cluster, registry: Registry, tmp_path: Path) -> Iterator[Kube]:
    """The cluster for one test; afterwards the block is uninstalled (CRDs kept) so the next test starts clean."""
    k = Kube(cluster, registry, tmp_path)
    yield k
    crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gateways.gateway.networking.k8s.io"
    gateways = k.items("/apis/gateway.networking.k8s.io/v1/gateways") if k.get(crd) else []
    for gw in gateways:
        if not (gw["metadata"].get("labels") or {}).get("app.kubernetes.io/managed-by"):
            k.delete(gw)  # a tenant's Gateway the test left behind would block uninstall
    ns = "/api/v1/namespaces/envoy-gateway-system"
    installed = k.get(ns) or gateways
    if installed:
        k.playbook("uninstall", k.config()).ok()
    if k.get(ns):
        # The test created the namespace itself, as an operator would (test_examples, for TLS Secrets): the
        # block rightly keeps a namespace it did not create, so remove it here or the next test sees it.
        k.delete_namespace("envoy-gateway-system")
