"""What the scenarios on the real node put around the block's pods (tests/cluster/test_real_flows.py,
test_proxy_rollout.py, the upgrade's steady client):

- the internet: a network namespace of its own, plugged into the node's by a veth, so its packets reach the
  LoadBalancer address the way a load balancer's (or a client's) would: through the node's PREROUTING, where
  kube-proxy turns the address into a proxy pod's, and through the filters kube-router keeps for that pod;
- PROXY protocol headers (v1 text, v2 binary) as a load balancer sends them, and HTTP or TLS on top;
- probes from inside a pod's own network namespace (the pod's address, so kube-router judges them as that
  pod's traffic; a probe from the node itself would always pass, kube-router admits the node's addresses);
- the probed targets' readiness, sampled the whole time from their EndpointSlices, so a refused probe counts
  only when its target was ready before, during and after it;
- a steady client that counts failed requests per phase.

Each piece enters a network namespace for one thread only (setns), and only to make a socket: the socket
stays in that namespace, the thread goes back at once.
"""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import json
import os
import socket
import ssl
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.harness.api import Api
from tests.harness.cluster import Cluster
from tests.harness.lan import Holder, sh
from tests.harness.node import CGROUP_FS

_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)

NODE_SIDE = "198.51.100.1"  # TEST-NET-2: the node's end of the veth
CLIENT_IP = "198.51.100.10"  # the internet's end: the load balancer (or client) the node sees


def _ip(*args: str, netns: Path | None = None, check: bool = True) -> None:
    command = ["ip", *args] if netns is None else ["nsenter", f"--net={netns}", "ip", *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {done.stderr.strip()}")


@contextlib.contextmanager
def internet() -> Iterator[Path]:
    """The internet namespace, for the duration; yields its path (for `entered`). Needs this process in the
    node's namespaces (tests/cluster/conftest.py enters them): nothing here touches the machine's network.

    The namespace is held by a process of its own, not named with `ip netns add`: that bind-mounts /run/netns
    over itself, which hides the mounts containerd made there for the pods' namespaces, and containerd then
    cannot remove them (`unlinkat /var/run/netns/cni-...: device or resource busy`): the pods never go."""
    if "node0:" not in Path("/proc/self/net/dev").read_text(encoding="utf-8"):
        raise RuntimeError("not in the real node's network namespace: run under tests/cluster")
    _ip("link", "del", "inet0", check=False)  # a run killed before its teardown
    holder = subprocess.Popen(["unshare", "--net", "sleep", "infinity"])
    netns = Path(f"/proc/{holder.pid}/ns/net")
    try:
        deadline = time.monotonic() + 10
        while os.readlink(netns) == os.readlink("/proc/self/ns/net"):  # until unshare has run
            if time.monotonic() > deadline:
                raise RuntimeError("the internet namespace did not come up")
            time.sleep(0.01)
        _ip("link", "add", "inet0", "type", "veth", "peer", "name", "inet0-lb")
        _ip("link", "set", "inet0-lb", "netns", str(holder.pid))
        _ip("addr", "add", f"{NODE_SIDE}/24", "dev", "inet0")
        _ip("link", "set", "inet0", "up")
        _ip("link", "set", "lo", "up", netns=netns)
        _ip("addr", "add", f"{CLIENT_IP}/24", "dev", "inet0-lb", netns=netns)
        _ip("link", "set", "inet0-lb", "up", netns=netns)
        _ip("route", "add", "default", "via", NODE_SIDE, netns=netns)
        yield netns
    finally:
        holder.kill()
        holder.wait()
        _ip("link", "del", "inet0", check=False)


ROUTER_IP = "10.10.0.254"  # the internet's router on the lan, in front of the rack
LB_POOL = "203.0.113.0/24"  # where the LoadBalancer addresses come from (the harness's pool, MetalLB's)


@contextlib.contextmanager
def internet_on_lan(cluster: Cluster) -> Iterator[Path]:
    """The internet as a router in front of a rack sees it: a namespace plugged into the nodes' L2 segment
    (lan.py), reaching the LoadBalancer pool as on-link (it ARPs for each address: whichever node answers, as
    MetalLB's speaker does, gets the packets), its clients' addresses (TEST-NET-2) routed back to it by every
    node. Yields the namespace's path (for `entered`)."""
    assert cluster.lan is not None
    holder = Holder("internet", cluster.workdir / "internet.log", mount=False)
    try:
        sh("ip", "link", "add", "inet0", "type", "veth", "peer", "name", "inet0-lan")
        sh("ip", "link", "set", "inet0", "netns", str(holder.pid))
        cluster.lan.plug("inet0-lan")
        holder.sh("ip", "link", "set", "lo", "up")
        holder.sh("ip", "addr", "add", f"{ROUTER_IP}/24", "dev", "inet0")
        holder.sh("ip", "addr", "add", f"{CLIENT_IP}/32", "dev", "inet0")
        holder.sh("ip", "link", "set", "inet0", "up")
        holder.sh("ip", "route", "add", LB_POOL, "dev", "inet0", "src", CLIENT_IP)
        for node in cluster.nodes:
            node.sh("ip", "route", "replace", "198.51.100.0/24", "via", ROUTER_IP, "dev", "node0")
        yield holder.netns
    finally:
        for node in cluster.nodes:
            node.sh("ip", "route", "del", "198.51.100.0/24", check=False)
        holder.stop()


@contextlib.contextmanager
def entered(netns: Path | None) -> Iterator[None]:
    """This thread in the network namespace `netns` (None: where it is) until the block ends."""
    if netns is None:
        yield
        return
    home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    there = os.open(netns, os.O_RDONLY)
    try:
        if _libc.setns(there, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns {netns}")
        try:
            yield
        finally:
            if _libc.setns(home, _CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back to the node's network namespace")
    finally:
        os.close(there)
        os.close(home)


def socket_in(netns: Path | None, timeout: float) -> socket.socket:
    with entered(netns):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    return sock


def pod_netns(api: Api, cgroup_root: str, namespace: str, name: str) -> Path:
    """The network namespace of a running pod, found through its cgroup (the kubelet's cgroupfs layout:
    <root>/kubepods/<qos>/pod<uid>/<container>); every container of the pod shares it."""
    uid = api.get(f"/api/v1/namespaces/{namespace}/pods/{name}")["metadata"]["uid"]
    wanted = {f"pod{uid}", f"pod{uid.replace('-', '_')}"}
    for folder, dirs, _ in os.walk(CGROUP_FS / "pids" / cgroup_root):
        for found in dirs:
            if found in wanted:
                pids = sorted(
                    int(pid)
                    for inner, _, files in os.walk(Path(folder, found))
                    if "cgroup.procs" in files
                    for pid in Path(inner, "cgroup.procs").read_text(encoding="utf-8").split()
                )
                if pids:
                    return Path(f"/proc/{pids[0]}/ns/net")
    raise RuntimeError(f"pod {namespace}/{name}: no process in its cgroup")


def dial(netns: Path | None, address: str, port: int, timeout: float = 2) -> str:
    """A TCP connection from `netns`: "open", or how it failed ("refused", "timeout", the error)."""
    sock = socket_in(netns, timeout)
    try:
        sock.connect((address, port))
        return "open"
    except ConnectionRefusedError:
        return "refused"
    except TimeoutError:
        return "timeout"
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    finally:
        sock.close()


def proxy_v1(source: str, destination: str, source_port: int, destination_port: int) -> bytes:
    return f"PROXY TCP4 {source} {destination} {source_port} {destination_port}\r\n".encode()


def proxy_v2(source: str, destination: str, source_port: int, destination_port: int) -> bytes:
    """The binary header: signature, version 2 + PROXY, TCP over IPv4, the addresses and ports."""
    addresses = socket.inet_aton(source) + socket.inet_aton(destination)
    addresses += struct.pack("!HH", source_port, destination_port)
    return b"\r\n\r\n\x00\r\nQUIT\n" + bytes((0x21, 0x11)) + struct.pack("!H", len(addresses)) + addresses


class Connection(http.client.HTTPConnection):
    """An HTTP connection made in `netns` that first sends `header` (a PROXY protocol header), as a load
    balancer in front of the node does; with `sni`, TLS on top (the certificate is the backend's own: a
    Passthrough listener has none, so it is not verified, only read)."""

    def __init__(
        self,
        address: str,
        port: int,
        *,
        netns: Path | None,
        header: bytes = b"",
        sni: str | None = None,
        timeout: float = 5,
    ) -> None:
        super().__init__(address, port, timeout=timeout)
        self.netns = netns
        self.header = header
        self.sni = sni
        self.peer_certificate: bytes | None = None

    def connect(self) -> None:
        sock = socket_in(self.netns, self.timeout or 5)
        sock.connect((self.host, self.port))
        if self.header:
            sock.sendall(self.header)
        if self.sni:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
            sock = context.wrap_socket(sock, server_hostname=self.sni)
            self.peer_certificate = sock.getpeercert(binary_form=True)
        self.sock = sock


@dataclass
class Answer:
    status: int
    body: bytes
    certificate: bytes | None = None

    def json(self) -> dict[str, Any]:
        return dict(json.loads(self.body))


def fetch(
    address: str,
    port: int,
    host: str,
    path: str = "/",
    *,
    netns: Path | None,
    header: bytes = b"",
    sni: str | None = None,
    timeout: float = 5,
) -> Answer:
    """One GET on a new connection."""
    connection = Connection(address, port, netns=netns, header=header, sni=sni, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Host": host})
        response = connection.getresponse()
        return Answer(response.status, response.read(), connection.peer_certificate)
    finally:
        connection.close()


# How long a steady client's request may take. A dropped request fails at once (reset, refused, a 5xx); one
# sent where nothing answers (a VIP announced from a node without a proxy) never answers and fails here. Only a
# slow answer is told apart by this bound: 3 s timed out on a machine running make test's four jobs on 2 cores.
STEADY_TIMEOUT = 10.0


class Client:
    """A steady client: one request on a new connection every 50 ms, each failure noted with its phase. From
    `netns` (None: this process's own), with a PROXY protocol header from `header` (per request) if given.
    With `sni`, each request is a TLS handshake first; with `certificate` (DER) too, a handshake that shows
    any other certificate is a failure ("wrong certificate"), as a browser would refuse it."""

    def __init__(
        self,
        address: str,
        port: int,
        host: str = "own.example.com",
        *,
        netns: Path | None = None,
        header: Callable[[], bytes] | None = None,
        sni: str | None = None,
        certificate: bytes | None = None,
    ) -> None:
        self.address = address
        self.port = port
        self.host = host
        self.netns = netns
        self.header = header
        self.sni = sni
        self.certificate = certificate
        self.phase = "before"
        self.sent: dict[str, int] = {}
        self.failed: dict[str, list[str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Client:
        self._thread.start()
        return self

    def once(self) -> str | None:
        try:
            header = self.header() if self.header else b""
            answer = fetch(
                self.address,
                self.port,
                self.host,
                "/steady",
                netns=self.netns,
                header=header,
                sni=self.sni,
                timeout=STEADY_TIMEOUT,
            )
            if self.certificate is not None and answer.certificate != self.certificate:
                return f"wrong certificate ({_subject(answer.certificate)})"
            return None if answer.status == 200 else f"HTTP {answer.status}"
        except OSError as exc:
            return f"{type(exc).__name__}: {exc}"
        except http.client.HTTPException as exc:
            return f"{type(exc).__name__}: {exc}"

    def _run(self) -> None:
        while not self._stop.is_set():
            phase, error = self.phase, self.once()
            self.sent[phase] = self.sent.get(phase, 0) + 1
            if error:
                self.failed.setdefault(phase, []).append(f"{time.strftime('%H:%M:%S')} {error}")
            self._stop.wait(0.05)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def report(self) -> str:
        return "; ".join(
            f"{phase}: {len(self.failed.get(phase, []))} failed of {sent}" for phase, sent in self.sent.items()
        )

    def wrong_certificates(self) -> list[str]:
        """Every handshake, in any phase, that showed a certificate other than `certificate`."""
        return [f for failed in self.failed.values() for f in failed if "wrong certificate" in f]


def _subject(der: bytes | None) -> str:
    """The certificate's subject, for a failure line (none: no TLS, or no certificate shown)."""
    if not der:
        return "none"
    from cryptography import x509

    return x509.load_der_x509_certificate(der).subject.rfc4514_string()


def endpoints_ready(api: Api, namespace: str, service: str) -> bool:
    """The Service has endpoints and every one of them is ready."""
    slices = api.items(
        f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices",
        labelSelector=f"kubernetes.io/service-name={service}",
    )
    endpoints = [e for s in slices for e in s.get("endpoints") or []]
    return bool(endpoints) and all((e.get("conditions") or {}).get("ready") for e in endpoints)


class Readiness:
    """Samples the EndpointSlices of `services` (key -> (namespace, name)) every 0.3 s with its own API
    client, in a thread of its own, while the probes run."""

    def __init__(self, api: Api, services: dict[str, tuple[str, str]]) -> None:
        self.api = api
        self.services = services
        self.samples: list[tuple[float, dict[str, bool]]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Readiness:
        self._thread.start()
        self.wait_past(time.monotonic())
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            sample = {}
            for key, (namespace, name) in self.services.items():
                try:
                    sample[key] = endpoints_ready(self.api, namespace, name)
                except Exception:  # noqa: BLE001 - an unanswered sample counts as not ready
                    sample[key] = False
            with self._lock:
                self.samples.append((now, sample))
            self._stop.wait(0.3)

    def wait_past(self, moment: float, timeout: float = 10) -> None:
        """Until a sample taken after `moment` exists."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self.samples and self.samples[-1][0] > moment:
                    return
            time.sleep(0.05)
        raise RuntimeError("the readiness sampler stopped")

    def gate(self, key: str, start: float, end: float) -> str | None:
        """None when `key` was ready in the last sample before `start`, every sample during, and the first
        after `end`; else why not."""
        self.wait_past(end)
        with self._lock:
            samples = list(self.samples)
        before = [s for t, s in samples if t <= start][-1:]
        during = [s for t, s in samples if start < t <= end]
        after = [s for t, s in samples if t > end][:1]
        if not before or not after:
            return f"{key}: not sampled before and after"
        for label, group in (("before", before), ("during", during), ("after", after)):
            if not all(s.get(key) for s in group):
                return f"{key} not ready {label} the probe"
        return None


class PodWatch:
    """Every pod of `namespace` while it runs (a thread of its own, its own API client, every 0.5 s): for each
    pod its labels, containers and whether it was ever Ready (all containers ready) or Succeeded. Pods that
    come and go within an install (the certgen Job's, deleted 30 s after it finishes) are seen too."""

    def __init__(self, api: Api, namespace: str) -> None:
        self.api = api
        self.namespace = namespace
        self.pods: dict[str, dict[str, Any]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> PodWatch:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                pods = self.api.items(f"/api/v1/namespaces/{self.namespace}/pods")
            except Exception:  # noqa: BLE001 - the namespace may not exist yet; the next sample will tell
                pods = []
            for pod in pods:
                status = pod.get("status") or {}
                ready = any(c["type"] == "Ready" and c["status"] == "True" for c in status.get("conditions") or [])
                seen = self.pods.setdefault(
                    pod["metadata"]["name"],
                    {"ready": False, "succeeded": False, "restarts": 0},
                )
                seen["labels"] = pod["metadata"].get("labels") or {}
                seen["containers"] = [c["name"] for c in pod["spec"]["containers"]]
                seen["phase"] = status.get("phase")
                seen["ready"] = seen["ready"] or ready
                seen["succeeded"] = seen["succeeded"] or status.get("phase") == "Succeeded"
                seen["restarts"] = max(
                    [seen["restarts"], *(c.get("restartCount", 0) for c in status.get("containerStatuses") or [])]
                )
            self._stop.wait(0.5)
