"""etcd, kube-apiserver and kube-controller-manager as host processes in the real node's network namespace
(node.py): etcd on loopback, the API server on the node's address."""

from __future__ import annotations

import socket
import ssl
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from . import pki as pki_mod
from .procs import Proc, wait_until

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"
BIN = TOOLS / "bin"
SERVICE_CIDR = "10.96.0.0/16"
SERVICE_IP = "10.96.0.1"  # the `kubernetes` Service's ClusterIP: the first address of SERVICE_CIDR
POD_CIDR = "10.244.0.0/16"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def binary(name: str) -> str:
    path = BIN / name
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: run `make tools` (tools/build-go.sh builds it from Go modules)")
    return str(path)


@dataclass
class ControlPlane:
    """Start order etcd -> apiserver -> controller-manager; stop in reverse.

    The API server listens on the node's address (`node_ip`, in the harness's own network namespace) at the
    fixed port 6443 and advertises it, so the `kubernetes` Service reaches it from pods; the
    controller-manager allocates the node's pod CIDR."""

    workdir: Path
    node_ip: str
    procs: list[Proc] = field(default_factory=list)
    api_port: int = 6443

    @property
    def url(self) -> str:
        return f"https://{self.node_ip}:{self.api_port}"

    @property
    def kubeconfig(self) -> Path:
        return self.workdir / "kubeconfig.yml"

    @property
    def pki_dir(self) -> Path:
        return self.workdir / "pki"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pki = pki_mod.create(self.pki_dir, SERVICE_IP, self.node_ip)
        self._etcd()
        self._apiserver()
        self._write_kubeconfig()
        self._controller_manager()

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()
        self.procs.clear()

    def _spawn(self, name: str, argv: list[str]) -> Proc:
        proc = Proc(name, argv, self.workdir / f"{name}.log")
        self.procs.append(proc)
        return proc

    def _etcd(self) -> None:
        client, peer = free_port(), free_port()
        self.etcd_url = f"http://127.0.0.1:{client}"
        proc = self._spawn(
            "etcd",
            [
                binary("etcd"),
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=default=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync=true",
                "--log-level=warn",
            ],
        )
        self._wait_http(proc, f"{self.etcd_url}/health", 60)

    @property
    def audit_log(self) -> Path:
        return self.workdir / "audit.log"

    def _apiserver(self) -> None:
        p = self.pki
        # Pods reach the API server through the `kubernetes` Service (kube-proxy); `kubectl logs/exec` reach
        # the kubelet on the node's address with the admin certificate.
        where = [
            "--bind-address=0.0.0.0",
            f"--advertise-address={self.node_ip}",
            f"--kubelet-client-certificate={p.admin_crt}",
            f"--kubelet-client-key={p.admin_key}",
            "--kubelet-preferred-address-types=InternalIP",
        ]
        # The audit log is the API server's own journal of writes: tests read creation and deletion order
        # from it, not from the playbook text.
        policy = self.workdir / "audit-policy.yaml"
        policy.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "audit.k8s.io/v1",
                    "kind": "Policy",
                    "omitStages": ["RequestReceived", "ResponseStarted"],
                    "rules": [
                        {"level": "None", "verbs": ["get", "list", "watch"]},
                        {"level": "None", "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}]},
                        {"level": "None", "resources": [{"group": "", "resources": ["events"]}]},
                        {"level": "Metadata"},
                    ],
                }
            ),
            encoding="utf-8",
        )
        proc = self._spawn(
            "kube-apiserver",
            [
                binary("kube-apiserver"),
                f"--etcd-servers={self.etcd_url}",
                *where,
                f"--secure-port={self.api_port}",
                f"--tls-cert-file={p.server_crt}",
                f"--tls-private-key-file={p.server_key}",
                f"--client-ca-file={p.ca_crt}",
                f"--service-account-key-file={p.sa_pub}",
                f"--service-account-signing-key-file={p.sa_key}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--authorization-mode=Node,RBAC",
                # The default plugin set (ServiceAccount, NamespaceLifecycle, ... ValidatingAdmissionPolicy,
                # webhooks) stays on: admission is part of what the tests prove.
                "--allow-privileged=true",
                f"--cert-dir={self.workdir / 'apiserver-certs'}",
                f"--audit-policy-file={policy}",
                f"--audit-log-path={self.audit_log}",
                "--audit-log-format=json",
                "--v=1",
            ],
        )
        self._wait_http(proc, f"{self.url}/readyz", 120, authed=True)

    def _write_kubeconfig(self) -> None:
        cfg = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "local", "cluster": {"server": self.url, "certificate-authority": str(self.pki.ca_crt)}}
            ],
            "users": [
                {
                    "name": "admin",
                    "user": {
                        "client-certificate": str(self.pki.admin_crt),
                        "client-key": str(self.pki.admin_key),
                    },
                }
            ],
            "contexts": [{"name": "local", "context": {"cluster": "local", "user": "admin"}}],
            "current-context": "local",
        }
        self.kubeconfig.write_text(yaml.safe_dump(cfg), encoding="utf-8")
        self.kubeconfig.chmod(0o600)

    def _controller_manager(self) -> None:
        # The node's pod CIDR comes from node IPAM, as on a cluster (node.POD_SUBNET is its first /24). No cloud
        # here: MetalLB is the LoadBalancer provider (metallb.py).
        ipam = ["--controllers=*,-cloud-node-lifecycle,-service-lb-controller,-node-route-controller"]
        ipam += ["--allocate-node-cidrs=true", "--node-cidr-mask-size=24"]
        self._spawn(
            "kube-controller-manager",
            [
                binary("kube-controller-manager"),
                f"--kubeconfig={self.kubeconfig}",
                f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                f"--service-account-private-key-file={self.pki.sa_key}",
                f"--root-ca-file={self.pki.ca_crt}",
                f"--cluster-signing-cert-file={self.pki.ca_crt}",
                f"--cluster-signing-key-file={self.pki.ca_key}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                f"--cluster-cidr={POD_CIDR}",
                *ipam,
                "--use-service-account-credentials=true",
                "--v=1",
            ],
        )

    def _wait_http(self, proc: Proc, url: str, timeout: float, authed: bool = False) -> None:
        ctx: ssl.SSLContext | None = None
        if authed:
            ctx = ssl.create_default_context(cafile=str(self.pki.ca_crt))
            ctx.load_cert_chain(str(self.pki.admin_crt), str(self.pki.admin_key))

        def ok() -> bool:
            if not proc.alive():
                raise RuntimeError(f"{proc.name} exited:\n{proc.tail()}")
            with urllib.request.urlopen(url, timeout=2, context=ctx) as resp:
                return bool(resp.status == 200)

        try:
            wait_until(ok, timeout, proc.name)
        except (TimeoutError, RuntimeError) as exc:
            raise RuntimeError(f"{exc}\n--- {proc.name} log ---\n{proc.tail()}") from None
