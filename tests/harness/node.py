"""A real Kubernetes node beside the control plane: containerd + runc, the bridge CNI, kubelet, kube-proxy,
kube-scheduler, kube-router (NetworkPolicy only) and CoreDNS as a pod, each built from its pinned module
(tools/build-go.sh) or Debian's package (the CNI plugins, iptables, ipset, conntrack).

Everything runs inside a network and mount namespace private to the harness process (`enter_namespaces`,
called before any thread or child exists), so the machine's network, /run, /var/log, cgroup2 mount and
kernel sysctls are never touched:
- the node's address sits on a veth (this kernel has no dummy driver), pods on the `cni0` bridge;
- /run is a tmpfs (containerd's sockets, runc's state, the xtables lock), /var/log a folder of the workdir;
- the six machine-wide sysctls the kubelet sets are files bind-mounted over /proc/sys in this namespace;
- the kubelet's cgroups live under a root of their own in every v1 hierarchy, removed at teardown.

This VM's quirks (../shared/notes/real-node.md): cgroup v1 only (kubelet's `failCgroupV1: false`, cgroupfs),
no CAP_SYS_RESOURCE in the bounding set (containerd's `restrict_oom_score_adj`), Debian's crun too old for
containerd 2.2 (runc, built with seccomp).
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import yaml

from .api import Api, ApiError
from .controlplane import BIN, POD_CIDR, SERVICE_CIDR, binary
from .lan import Holder, Lan, node_ip, sh
from .procs import Proc, wait_until

NODE_NAME = "envoy-node"
NODE_IP = node_ip(1)
NODE_GATEWAY = "10.10.0.1"  # nothing answers there: the nodes reach each other on the lan (lan.py)
# Two zones over the nodes (1, 3, ... in the first), as a cluster spread over two failure domains labels them.
ZONES = ("zone-a", "zone-b")
ZONE_LABEL = "topology.kubernetes.io/zone"
DNS_IP = "10.96.0.10"
API_PORT = 6443
PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"
COREDNS_IMAGE = "localhost/envoy-test/coredns:v1.15.0"
CNI_BIN = Path("/usr/lib/cni")
# The name the tests, the examples and the seed give an operator's own WAF image (waf/BUILD.md: built from
# waf/, pushed to the operator's registry; the default image was never published): the image `make images`
# built from waf/Dockerfile is tagged so, as if pushed there, and runs without a pull.
OWN_WAF_IMAGE = "registry.example.com/platform/envoy-waf:0.4.0"
# The kubelet writes these machine-wide (not per network namespace) at start.
KUBELET_SYSCTLS = (
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
)
CGROUP_FS = Path("/sys/fs/cgroup")
# Per network namespace, on every node: forwarding for the pods, iptables on the bridge (kube-proxy's DNAT and
# kube-router's filters see pod-to-pod traffic), DNAT to loopback.
NODE_NET_SYSCTLS = ("net.ipv4.ip_forward", "net.bridge.bridge-nf-call-iptables", "net.ipv4.conf.all.route_localnet")
_CLONE_NEWNS = 0x00020000
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _sh(*argv: str, check: bool = True) -> None:
    sh(*argv, check=check)


def enter_namespaces(workdir: Path) -> None:
    """Move this (single-threaded) process into a new network and mount namespace and prepare them for a
    node. Every child the harness starts afterwards inherits both."""
    # The machine's mount namespace stays reachable (tools/oci's dockerd starts there: ENVOY_HOST_MOUNT_NS_FD).
    host_mounts = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    os.environ["ENVOY_HOST_MOUNT_NS_FD"] = str(host_mounts)
    if _libc.unshare(_CLONE_NEWNET | _CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET|CLONE_NEWNS) (the real node needs root)")
    _sh("mount", "--make-rprivate", "/")
    _sh("ip", "link", "set", "lo", "up")
    _sh("ip", "link", "add", "node0", "type", "veth", "peer", "name", "node0-peer")
    _sh("ip", "addr", "add", f"{NODE_IP}/24", "dev", "node0")
    _sh("ip", "link", "set", "node0", "up")
    _sh("ip", "link", "set", "node0-peer", "up")
    _sh("ip", "route", "add", "default", "via", NODE_GATEWAY, "dev", "node0", "onlink")
    for key in NODE_NET_SYSCTLS:
        _sh("sysctl", "-qw", f"{key}=1")
    _sh("mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", "/run")
    Path("/run/lock").mkdir()
    varlog = workdir / "varlog"
    varlog.mkdir(parents=True, exist_ok=True)
    _sh("mount", "--bind", str(varlog), "/var/log")
    # cgroup v1 hierarchies, with cgroup2 only as the hybrid `unified` mount: runc and the kubelet would
    # take that mount for a v2 host.
    _sh("umount", str(CGROUP_FS / "unified"), check=False)
    fake = workdir / "sysctl"
    fake.mkdir(exist_ok=True)
    for key in KUBELET_SYSCTLS:
        copy = fake / key.replace("/", ".")
        copy.write_text(Path("/proc/sys", key).read_text(encoding="utf-8"), encoding="utf-8")
        _sh("mount", "--bind", str(copy), f"/proc/sys/{key}")


def _hierarchies() -> list[Path]:
    return [p for p in sorted(CGROUP_FS.iterdir()) if p.is_dir() and p.name not in ("unified",)]


CGROUP_PREFIX = "envoy-node-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _root_pid(name: str) -> int:
    """The harness PID a cgroup root is named after (`envoy-node-<pid>` or `envoy-node-<pid>-<node>`)."""
    return int(name.removeprefix(CGROUP_PREFIX).split("-")[0])


def _shims_by_mount_namespace() -> tuple[dict[int, str], set[str]]:
    """Our shims with their mount namespaces, and every mount namespace some other process lives in."""
    shim = str(BIN / "containerd-shim-runc-v2")
    shims: dict[int, str] = {}
    others: set[str] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                mnt = os.readlink(entry / "ns" / "mnt")
                if os.readlink(entry / "exe") == shim:
                    shims[int(entry.name)] = mnt
                else:
                    others.add(mnt)
    return shims, others


def sweep_dead_runs() -> list[str]:
    """Clean up after harness runs that were killed hard (SIGKILL, a timeout): containerd's shims outlive
    them (they detach), and so do the containers and the cgroup root named after the dead harness's PID.
    A shim whose node still has a live process in its mount namespace (containerd, the harness, a node's
    namespace holder) belongs to a live run, on any of its nodes, and is left alone."""
    swept = []
    for root in sorted((CGROUP_FS / "pids").glob(f"{CGROUP_PREFIX}*")):
        if _alive(_root_pid(root.name)):
            continue
        for stale in cgroup_pids(root.name):
            with contextlib.suppress(ProcessLookupError):
                os.kill(stale, signal.SIGKILL)
        swept.append(root.name)
    shims, others = _shims_by_mount_namespace()
    for pid, mnt in shims.items():
        if mnt not in others:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            swept.append(f"shim {pid}")
    for name in swept:
        if not name.startswith("shim "):
            deadline = time.monotonic() + 5
            while remove_cgroup_root(name) and time.monotonic() < deadline:
                time.sleep(0.2)
    return swept


def make_cgroup_root(name: str) -> None:
    for hierarchy in _hierarchies():
        (hierarchy / name).mkdir(exist_ok=True)
    cpuset = CGROUP_FS / "cpuset"
    if (cpuset / name).is_dir():
        for key in ("cpuset.cpus", "cpuset.mems"):
            (cpuset / name / key).write_text((cpuset / key).read_text(encoding="utf-8"), encoding="utf-8")


def cgroup_pids(name: str) -> set[int]:
    pids: set[int] = set()
    for folder, _, files in os.walk(CGROUP_FS / "pids" / name):
        if "cgroup.procs" in files:
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(line) for line in Path(folder, "cgroup.procs").read_text(encoding="utf-8").split())
    return pids


def remove_cgroup_root(name: str) -> list[str]:
    """Remove the kubelet's cgroup tree, deepest first; returns what could not be removed."""
    left = []
    for hierarchy in _hierarchies():
        root = hierarchy / name
        if not root.is_dir():
            continue
        # Bottom-up; os.walk ignores folders that vanish meanwhile (the shims remove their own).
        for folder, _, _ in os.walk(root, topdown=False):
            with contextlib.suppress(OSError):
                os.rmdir(folder)
        if root.is_dir():
            left.append(f"{root}: still has processes or children")
    return left


def _containerd_config(state: Path, cni_conf: Path) -> str:
    runc = BIN / "runc"
    return f"""version = 3
root = "{state / "containerd"}"
state = "/run/containerd"
[grpc]
  address = "/run/containerd/containerd.sock"
[ttrpc]
  address = "/run/containerd/containerd.sock.ttrpc"
[plugins]
  [plugins.'io.containerd.internal.v1.opt']
    path = "{state / "containerd-opt"}"
  [plugins.'io.containerd.nri.v1.nri']
    disable = true
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = '{PAUSE_IMAGE}'
    # A registry a test serves images from (Node.trust_registry: its CA); every other image is imported.
    [plugins.'io.containerd.cri.v1.images'.registry]
      config_path = '{state / "certs.d"}'
  [plugins.'io.containerd.cri.v1.runtime']
    enable_cdi = false
    # No CAP_SYS_RESOURCE in this VM's bounding set: a sandbox asking for oom_score_adj -998 would make
    # runc init die ("can't get final child's PID from pipe: EOF").
    restrict_oom_score_adj = true
    tolerate_missing_hugetlb_controller = true
    disable_hugetlb_controller = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = '{runc}'
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ['{CNI_BIN}']
      conf_dir = '{cni_conf}'
      max_conf_num = 1
  [plugins.'io.containerd.grpc.v1.cri']
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'
"""


def _cni_config(state: Path, subnet: str) -> dict[str, Any]:
    # No masquerade: the harness routes pod networks between the nodes (lan.py), so a pod's packets keep its
    # address on every node and network policies judge the pod itself (kube-proxy masquerades what leaves
    # the cluster for a Service, as it does on any cluster).
    gateway = str(ipaddress.ip_network(subnet)[1])
    return {
        "cniVersion": "1.0.0",
        "name": "envoy-node",
        "plugins": [
            {
                "type": "bridge",
                "bridge": "cni0",
                "isGateway": True,
                "ipMasq": False,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "dataDir": str(state / "cni-ipam"),
                    "ranges": [[{"subnet": subnet, "gateway": gateway}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                },
            },
            {"type": "portmap", "capabilities": {"portMappings": True}},
        ],
    }


def coredns_objects() -> list[tuple[str, dict[str, Any]]]:
    """CoreDNS as the cluster DNS (the proxies reach the controller's xDS by its Service name). It listens on
    port 53 in its pod, as on a cluster, non-root through the namespaced sysctl that lowers the unprivileged
    port range: network policies that allow DNS to port 53 (the block's) are judged after kube-proxy's DNAT."""
    ns = "kube-system"
    labels = {"k8s-app": "kube-dns"}
    corefile = (
        ".:53 {\n    errors\n    health :8080\n    ready :8181\n"
        "    kubernetes cluster.local in-addr.arpa ip6.arpa {\n        pods insecure\n"
        "        fallthrough in-addr.arpa ip6.arpa\n    }\n    cache 30\n}\n"
    )
    return [
        (
            f"/api/v1/namespaces/{ns}/serviceaccounts",
            {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "coredns", "namespace": ns}},
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": "system:coredns"},
                "rules": [
                    {
                        "apiGroups": [""],
                        "resources": ["endpoints", "services", "pods", "namespaces"],
                        "verbs": ["list", "watch"],
                    },
                    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
                ],
            },
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "system:coredns"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:coredns"},
                "subjects": [{"kind": "ServiceAccount", "name": "coredns", "namespace": ns}],
            },
        ),
        (
            f"/api/v1/namespaces/{ns}/configmaps",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "coredns", "namespace": ns},
                "data": {"Corefile": corefile},
            },
        ),
        (
            f"/apis/apps/v1/namespaces/{ns}/deployments",
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "coredns", "namespace": ns, "labels": labels},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": labels},
                    "template": {
                        "metadata": {"labels": labels},
                        "spec": {
                            "serviceAccountName": "coredns",
                            "dnsPolicy": "Default",
                            "securityContext": {
                                "sysctls": [{"name": "net.ipv4.ip_unprivileged_port_start", "value": "53"}]
                            },
                            "containers": [
                                {
                                    "name": "coredns",
                                    "image": COREDNS_IMAGE,
                                    "imagePullPolicy": "IfNotPresent",
                                    "args": ["-conf", "/etc/coredns/Corefile"],
                                    "ports": [
                                        {"containerPort": 53, "name": "dns", "protocol": "UDP"},
                                        {"containerPort": 53, "name": "dns-tcp", "protocol": "TCP"},
                                    ],
                                    "readinessProbe": {
                                        "httpGet": {"path": "/ready", "port": 8181},
                                        "periodSeconds": 2,
                                    },
                                    "livenessProbe": {"httpGet": {"path": "/health", "port": 8080}},
                                    "volumeMounts": [{"name": "config", "mountPath": "/etc/coredns", "readOnly": True}],
                                    "securityContext": {
                                        "runAsNonRoot": True,
                                        "readOnlyRootFilesystem": True,
                                        "allowPrivilegeEscalation": False,
                                        "capabilities": {"drop": ["ALL"]},
                                    },
                                }
                            ],
                            "volumes": [{"name": "config", "configMap": {"name": "coredns"}}],
                        },
                    },
                },
            },
        ),
        (
            f"/api/v1/namespaces/{ns}/services",
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": "kube-dns", "namespace": ns, "labels": labels},
                "spec": {
                    "clusterIP": DNS_IP,
                    "selector": labels,
                    "ports": [
                        {"name": "dns", "port": 53, "targetPort": 53, "protocol": "UDP"},
                        {"name": "dns-tcp", "port": 53, "targetPort": 53, "protocol": "TCP"},
                    ],
                },
            },
        ),
    ]


def deployment_ready(api: Api, namespace: str, name: str) -> bool:
    dep = api.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")
    want = dep["spec"].get("replicas", 1)
    status = dep.get("status") or {}
    return bool(
        status.get("observedGeneration", 0) >= dep["metadata"]["generation"]
        and status.get("updatedReplicas", 0) == want
        and status.get("readyReplicas", 0) == want
        and status.get("replicas", 0) == want
    )


def pull_attempts(api: Api) -> list[str]:
    """Every image pull the kubelet started (an Event `Pulling`) or failed: with every image imported and
    `IfNotPresent`, there must be none."""
    seen = []
    for event in api.items("/api/v1/events"):
        if event.get("reason") in ("Pulling", "Failed", "ErrImagePull", "BackOff") and "image" in str(
            event.get("message", "")
        ):
            obj = event.get("involvedObject") or {}
            seen.append(f"{obj.get('namespace')}/{obj.get('name')}: {event.get('reason')}: {event.get('message')}")
    return seen


def ctr_command(*args: str) -> list[str]:
    """`ctr` against the node's containerd, in the CRI's namespace (run where the node's /run is)."""
    return [binary("ctr"), "--address", "/run/containerd/containerd.sock", "-n", "k8s.io", *args]


def node_image_archives(with_block_images: bool) -> list[Path]:
    """OCI archives of the images the node imports, from the store `make images` fills (never built here:
    the node's namespace has no way out). Without `with_block_images`, only the node's own (pause, CoreDNS, the
    echo backend) and MetalLB's controller and speaker (node_image_refs holds them too)."""
    from tools.oci import OCIError, Store, images

    refs = images.node_image_refs() if with_block_images else [*images.NODE_OWN_REFS, *images.metallb_refs()]
    store = Store(offline=True)
    try:
        return [store.archive(ref) for ref in refs]
    except OCIError as exc:
        raise RuntimeError(f"{exc}: run `make images`") from None


class Node:
    """One node's daemons, started after the control plane (whose kubeconfig and CA they use).

    Node 1 lives in the harness's own namespaces (`enter_namespaces`); node 2, 3, ... each in a network and
    mount namespace of its own (a `Holder`), with their own /run, /var/log, containerd, kubelet, kube-proxy
    and kube-router, all plugged into the lan. The scheduler and CoreDNS are the cluster's: node 1 starts
    them. Cluster runs each phase (prepare, runtime, kubelet, network, services) across all nodes in turn."""

    def __init__(
        self, workdir: Path, api: Api, kubeconfig: Path, pki_dir: Path, *, index: int = 1, lan: Lan | None = None
    ) -> None:
        self.workdir = workdir
        self.api = api
        self.kubeconfig = kubeconfig
        self.pki_dir = pki_dir
        self.index = index
        self.lan = lan
        self.name = NODE_NAME if index == 1 else f"{NODE_NAME}-{index}"
        self.ip = node_ip(index)
        self.zone = ZONES[(index - 1) % len(ZONES)]
        # Node 1 keeps the paths the single-node harness always had (logs beside the control plane's).
        self.state = workdir / ("node" if index == 1 else f"node{index}")
        self.logdir = workdir if index == 1 else self.state
        self.cgroup_root = f"{CGROUP_PREFIX}{os.getpid()}" + ("" if index == 1 else f"-{index}")
        self.holder: Holder | None = None
        self.pod_cidr = ""
        self.procs: list[Proc] = []
        self.timings: dict[str, float] = {}

    @property
    def port(self) -> str:
        """This node's port on the lan's bridge (cut it and the node has lost its network)."""
        return "node0-peer" if self.index == 1 else f"node{self.index}-lan"

    def _prefix(self) -> list[str]:
        return self.holder.prefix() if self.holder else []

    def sh(self, *argv: str, check: bool = True) -> str:
        """Run a command in this node's namespaces."""
        return sh(*self._prefix(), *argv, check=check)

    def _spawn(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> Proc:
        proc = Proc(name, [*self._prefix(), *argv], self.logdir / f"{name}.log", env=env)
        self.procs.append(proc)
        return proc

    def _wait(self, proc: Proc, check: Any, timeout: float) -> None:
        def alive_and(check_: Any = check) -> bool:
            if not proc.alive():
                raise RuntimeError(f"{proc.name} exited")
            return bool(check_())

        try:
            wait_until(alive_and, timeout, f"{self.name}: {proc.name}")
        except (TimeoutError, RuntimeError) as exc:
            raise RuntimeError(f"{exc}\n--- {proc.name} log ---\n{proc.tail()}") from None

    def ctr(self, *args: str) -> str:
        done = subprocess.run(
            [*self._prefix(), *ctr_command(*args)],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"{self.name}: ctr {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def prepare(self) -> None:
        """The node's namespaces (node 2, 3, ...) and its port on the lan."""
        self.state.mkdir(parents=True, exist_ok=True)
        if self.index == 1:
            swept = sweep_dead_runs()
            if swept:
                print(f"harness: cleaned up after killed runs: {', '.join(swept)}", flush=True)
        else:
            self._namespaces()
        if self.lan is not None:
            self.lan.plug(self.port)

    def _namespaces(self) -> None:
        """What enter_namespaces does for node 1, for a node of its own: a private /run and /var/log (the
        machine-wide sysctl files are already bound over /proc/sys in the mount namespace it copies), its
        address on a veth whose other end goes to the lan."""
        self.holder = Holder(f"{self.name}-namespaces", self.state / "namespaces.log", mount=True)
        h = self.holder
        h.sh("mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", "/run")
        h.sh("mkdir", "-p", "/run/lock")
        varlog = self.state / "varlog"
        varlog.mkdir(parents=True, exist_ok=True)
        h.sh("mount", "--bind", str(varlog), "/var/log")
        h.sh("ip", "link", "set", "lo", "up")
        inside = f"node{self.index}-eth"
        sh("ip", "link", "add", inside, "type", "veth", "peer", "name", self.port)
        sh("ip", "link", "set", inside, "netns", str(h.pid))
        h.sh("ip", "link", "set", inside, "name", "node0")
        h.sh("ip", "addr", "add", f"{self.ip}/24", "dev", "node0")
        h.sh("ip", "link", "set", "node0", "up")
        h.sh("ip", "route", "add", "default", "via", NODE_GATEWAY, "dev", "node0", "onlink")
        for key in NODE_NET_SYSCTLS:
            h.sh("sysctl", "-qw", f"{key}=1")

    def runtime(self, images: list[Path]) -> None:
        """containerd, with every image imported (never pulled). Not unpacked: the CRI unpacks an image when a
        container first needs it, so a node holds only its layers' blobs for the images no pod of its runs (the
        older releases, the conformance backends): seven nodes at once had filled CI's disk."""
        make_cgroup_root(self.cgroup_root)
        self._containerd()
        for archive in images:
            self.ctr("images", "import", "--local", "--no-unpack", str(archive))
        from tools.oci.images import WAF_REF

        if WAF_REF in self.ctr("images", "ls", "-q").split():
            self.ctr("images", "tag", WAF_REF, OWN_WAF_IMAGE)

    def _containerd(self) -> None:
        (self.state / "cni").mkdir(exist_ok=True)
        config = self.state / "containerd.toml"
        config.write_text(_containerd_config(self.state, self.state / "cni"), encoding="utf-8")
        # containerd finds its shim (containerd-shim-runc-v2) on PATH.
        env = {**os.environ, "PATH": f"{BIN}:/usr/sbin:/usr/bin:/sbin:/bin"}
        proc = self._spawn("containerd", [binary("containerd"), "--config", str(config)], env=env)
        self._wait(proc, lambda: self.ctr("version"), 60)

    def kubelet(self) -> None:
        """Start the kubelet; it registers the node, node IPAM gives it a pod CIDR, and the CNI config is
        written for that CIDR (containerd picks it up; the node turns Ready then)."""
        self._kubelet()
        self._wait(self.procs[-1], self._pod_cidr, 120)
        cni = self.state / "cni" / "10-envoy-node.conflist"
        cni.write_text(json.dumps(_cni_config(self.state, self.pod_cidr), indent=2), encoding="utf-8")

    def network(self, nodes: list[Node]) -> None:
        """Routes to the other nodes' pod networks (as a cluster's CNI sets them), then wait for Ready."""
        for other in nodes:
            if other is not self:
                self.sh("ip", "route", "replace", other.pod_cidr, "via", other.ip, "dev", "node0")
        kubelet = next(p for p in self.procs if p.name == "kubelet")
        self._wait(kubelet, self._node_ready, 180)

    def services(self) -> None:
        """The node's own network services: kube-proxy and kube-router."""
        self._kube_proxy()
        self._kube_router()

    def cluster_services(self) -> None:
        self._scheduler()
        self._coredns()

    def _pod_cidr(self) -> bool:
        node = self.api.get(f"/api/v1/nodes/{self.name}")
        self.pod_cidr = str((node.get("spec") or {}).get("podCIDR") or "")
        return bool(self.pod_cidr)

    def _kubelet(self) -> None:
        p = self.pki_dir
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            # This host has cgroup v1 only: kubelet >= 1.35 refuses it unless told not to.
            "failCgroupV1": False,
            "cgroupDriver": "cgroupfs",
            "cgroupRoot": f"/{self.cgroup_root}",
            "cgroupsPerQOS": True,
            "containerRuntimeEndpoint": "unix:///run/containerd/containerd.sock",
            "address": self.ip,
            "port": 10250,
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": 10248,
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": True},
                "x509": {"clientCAFile": str(p / "ca.crt")},
            },
            "authorization": {"mode": "Webhook"},
            "clusterDomain": "cluster.local",
            "clusterDNS": [DNS_IP],
            "resolvConf": str(self._resolv_conf()),
            "podLogsDir": str(self.state / "pod-logs"),
            "failSwapOn": False,
            # The disk is shared with other jobs: never evict or collect images because of it.
            "evictionHard": {"memory.available": "100Mi"},
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "serializeImagePulls": False,
            "nodeStatusReportFrequency": "10s",
            "nodeStatusUpdateFrequency": "5s",
            "syncFrequency": "10s",
            "fileCheckFrequency": "10s",
            # HARNESS_MAX_PODS: the Gateway API conformance suite runs dozens of Gateways, each with its proxy pod
            # (tests/conformance), past 40 at once; the node's /24 holds 254.
            "maxPods": int(os.environ.get("HARNESS_MAX_PODS", "40")),
        }
        path = self.state / "kubelet.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        self._spawn(
            "kubelet",
            [
                binary("kubelet"),
                f"--config={path}",
                f"--kubeconfig={self.kubeconfig}",
                f"--hostname-override={self.name}",
                f"--node-ip={self.ip}",
                f"--node-labels={ZONE_LABEL}={self.zone}",
                f"--root-dir={self.state / 'kubelet'}",
                f"--cert-dir={self.state / 'kubelet-pki'}",
                "--v=1",
            ],
        )

    def _resolv_conf(self) -> Path:
        # Pods with dnsPolicy Default (CoreDNS itself) get this; there is no upstream resolver here.
        path = self.state / "resolv.conf"
        path.write_text(f"nameserver {DNS_IP}\n", encoding="utf-8")
        return path

    def _node_ready(self) -> bool:
        node = self.api.get(f"/api/v1/nodes/{self.name}")
        conditions = (node.get("status") or {}).get("conditions") or []
        return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)

    def _kube_proxy(self) -> None:
        config = {
            "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
            "kind": "KubeProxyConfiguration",
            "clientConnection": {"kubeconfig": str(self.kubeconfig)},
            "hostnameOverride": self.name,
            "bindAddress": self.ip,
            "healthzBindAddress": "127.0.0.1:10256",
            "metricsBindAddress": "127.0.0.1:10249",
            "clusterCIDR": POD_CIDR,
            "mode": "iptables",
            # Leave the kernel's (machine-wide) conntrack table sizes and timeouts alone.
            "conntrack": {"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
        }
        path = self.state / "kube-proxy.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        proc = self._spawn("kube-proxy", [binary("kube-proxy"), f"--config={path}", "--v=1"])
        self._wait(proc, lambda: _http_ok("http://127.0.0.1:10256/healthz"), 60)

    def _scheduler(self) -> None:
        kc = str(self.kubeconfig)
        self._spawn(
            "kube-scheduler",
            [
                binary("kube-scheduler"),
                f"--kubeconfig={kc}",
                f"--authentication-kubeconfig={kc}",
                f"--authorization-kubeconfig={kc}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                "--secure-port=10259",
                "--v=1",
            ],
        )

    def _kube_router(self) -> None:
        # NetworkPolicy enforcement only: routing, the service proxy and CNI config stay with the bridge
        # plugin and kube-proxy.
        proc = self._spawn(
            "kube-router",
            [
                binary("kube-router"),
                f"--kubeconfig={self.kubeconfig}",
                f"--hostname-override={self.name}",
                "--run-firewall=true",
                "--run-router=false",
                "--run-service-proxy=false",
                "--run-loadbalancer=false",
                "--enable-cni=false",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--health-port=20244",
                "--metrics-port=0",
                "--v=1",
            ],
        )
        self._wait(proc, lambda: _http_ok("http://127.0.0.1:20244/healthz"), 60)

    def _coredns(self) -> None:
        for path, body in coredns_objects():
            try:
                self.api.post(path, body)
            except ApiError as exc:
                if exc.status != 409:
                    raise
        wait_until(lambda: deployment_ready(self.api, "kube-system", "coredns"), 120, "CoreDNS Ready")

    def trust_registry(self, host: str, ca: Path) -> None:
        """Let containerd pull from https://`host` with `ca` (hosts.toml under the config_path above; read at
        each pull, no restart). The credentials come from the pod's imagePullSecrets, as on any cluster."""
        folder = self.state / "certs.d" / host
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "ca.crt").write_bytes(ca.read_bytes())
        (folder / "hosts.toml").write_text(
            f'server = "https://{host}"\n[host."https://{host}"]\n  capabilities = ["pull", "resolve"]\n'
            f'  ca = "{folder / "ca.crt"}"\n',
            encoding="utf-8",
        )

    def pulls(self) -> list[str]:
        """Every image pull the kubelet asked containerd for (containerd logs each `PullImage` request at info
        level, also one that fails for want of a network). With every image imported and `IfNotPresent`, as
        users run it, there must be none: the kubelet finds the image present and says so instead."""
        log = self.logdir / "containerd.log"
        if not log.is_file():
            return []
        return [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if "PullImage" in line]

    def stop(self) -> list[str]:
        """Stop the daemons, the pods' processes and shims, unmount what they mounted, remove the cgroups.
        Returns what could not be cleaned up."""
        by_name = {p.name: p for p in self.procs}
        for name in ("kube-router", "kube-proxy", "kube-scheduler", "kubelet"):
            if name in by_name:
                by_name[name].stop()
        # The containers: every process in the kubelet's cgroup tree.
        for pid in cgroup_pids(self.cgroup_root):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        # The shims detach from containerd's process group; ours are the ones in this node's mount namespace.
        mine = os.readlink(self.holder.mntns if self.holder else "/proc/self/ns/mnt")
        shims, _ = _shims_by_mount_namespace()
        for pid, mnt in shims.items():
            if mnt == mine:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if "containerd" in by_name:
            by_name["containerd"].stop()
        self.procs.clear()
        if self.holder is None:
            self._unmount()
        else:
            # Its mounts go with its mount namespace, once its last process (the holder) is gone.
            self.holder.stop()
        # containerd's root holds every image twice (content and overlay snapshots: about 2 GiB). A run keeps
        # its logs for reading afterwards, not that: CI ran out of disk with several runs' roots kept.
        shutil.rmtree(self.state / "containerd", ignore_errors=True)
        left: list[str] = []
        deadline = time.monotonic() + 10
        while True:
            left = remove_cgroup_root(self.cgroup_root)
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        return left

    def lose_network(self) -> None:
        """The node loses its network (its port on the lan cut) and its kubelet stops: what a dead node is
        to the rest of the cluster. Its pods keep running in the dark, as on a machine that lost its link."""
        assert self.lan is not None, "a node without a lan cannot lose it"
        self.lan.cut(self.port)
        next(p for p in self.procs if p.name == "kubelet").stop()

    def come_back(self) -> None:
        """The link back and the kubelet started again (same config): the node rejoins."""
        assert self.lan is not None
        self.procs = [p for p in self.procs if p.name != "kubelet"]
        self.lan.mend(self.port)
        self._kubelet()
        self._wait(self.procs[-1], self._node_ready, 180)

    def _unmount(self) -> None:
        """Unmount what containerd and the kubelet mounted under the workdir (overlay snapshots, volumes,
        sandbox namespaces), deepest first. Everything else goes with the mount namespace."""
        prefix = str(self.workdir)
        targets = []
        for line in Path("/proc/self/mounts").read_text(encoding="utf-8").splitlines():
            target = line.split()[1].replace("\\040", " ")
            if target.startswith(prefix) and not target.startswith(str(self.workdir / "sysctl")):
                targets.append(target)
        for target in sorted(targets, key=len, reverse=True):
            _sh("umount", "-l", target, check=False)


def _http_ok(url: str) -> bool:
    import urllib.request

    with urllib.request.urlopen(url, timeout=2) as resp:
        return bool(resp.status == 200)
