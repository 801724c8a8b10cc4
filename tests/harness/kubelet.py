"""The harness as scheduler and kubelet.

- Binder: there is no kube-scheduler; every unscheduled pod is bound (pods/binding, as the scheduler does)
  to the harness's node when the harness runs it, else to the kwok node.
- Kubelet for the two pods that matter: the chart's certgen hook pod and the Envoy Gateway controller pod
  run the real `envoy-gateway` binary of the image's tag (v1.9.1, or v1.9.0 and v1.8.3 for the upgrade scenario, each
  built from its own Go module) with the pod's command, args and env, its volumes (ConfigMaps,
  Secrets, the projected service-account token, emptyDirs) written where the container would see them, in
  a private mount namespace chrooted into the pod's own root (nothing is written into the machine's root).
  The process talks to the API server the in-cluster way (KUBERNETES_SERVICE_HOST/PORT and the pod's
  service-account token), so the chart's RBAC is exercised for real. Pod phase, container state and
  readiness (the pod's own readinessProbe) are reported from the real process.
kwok plays every other pod (proxies, the WAF): Running and Ready without a process behind them.

One network for every pod run here: the controller listens on fixed ports, so two controller pods cannot
run at once. In a rolling update the pod of the newer ReplicaSet revision takes the ports: the older one's
process stops (the pod stays, not ready, until the Deployment scales it away), as if the node had only
room for one. Without that the new pod could never become ready and the rollout (maxUnavailable 0 for one
replica) would never finish.
"""

from __future__ import annotations

import base64
import shlex
import shutil
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .api import Api, ApiError
from .controlplane import BIN, HARNESS_NODE, KWOK_NODE, TOOLS
from .procs import Proc

# The Envoy Gateway images the harness can "pull": each tag is the binary built from that module version
# (tools/build-go.sh), so an upgrade runs the old and the new controller for real.
EG_IMAGE_REPOSITORY = "envoyproxy/gateway"
EG_VERSION = "v1.9.1"
EG_BINARIES = {
    EG_VERSION: BIN / "envoy-gateway",
    **{old: TOOLS / f"envoy-gateway-{old}" / "envoy-gateway" for old in ("v1.9.0", "v1.8.3")},
}
REVISION = "deployment.kubernetes.io/revision"
CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def runs_here(pod: dict[str, Any]) -> bool:
    """The pods the harness runs for real: certgen (helm hook) and the controller."""
    labels = pod["metadata"].get("labels") or {}
    return labels.get("app") == "certgen" or labels.get("control-plane") == "envoy-gateway"


def controller_binary(image: str) -> Path | None:
    """The binary standing in for an Envoy Gateway image, None for any other image or tag."""
    repo, _, tag = image.rpartition(":")
    return EG_BINARIES.get(tag) if repo.endswith(EG_IMAGE_REPOSITORY) else None


def is_controller(pod: dict[str, Any]) -> bool:
    return (pod["metadata"].get("labels") or {}).get("control-plane") == "envoy-gateway"


@dataclass
class PodRun:
    pod: dict[str, Any]
    root: Path
    proc: Proc | None = None
    restarts: int = 0
    ready: bool = False
    exit_code: int | None = None
    started_at: str = ""
    finished_at: str = ""
    next_start: float = 0.0
    waiting: tuple[str, str] = ("ContainerCreating", "")
    ip: str = ""
    last_status: str = ""
    revision: int | None = None  # of the pod's ReplicaSet, for controller pods

    @property
    def key(self) -> str:
        return str(self.pod["metadata"]["uid"])


class Kubelet:
    def __init__(self, api: Api, workdir: Path, api_host: str, api_port: int, ca_crt: Path) -> None:
        self.api = api
        self.workdir = workdir
        self.api_host = api_host
        self.api_port = api_port
        self.ca_crt = ca_crt
        self.runs: dict[str, PodRun] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="kubelet", daemon=True)
        self._ip_seq = 10
        self.errors: list[str] = []
        # Pods for which this returns True stay unscheduled, as on a node without room: a test holds a
        # rollout half-way (the upgrade scenario's proxies) and lets it go on by setting it back to None.
        self.hold: Callable[[dict[str, Any]], bool] | None = None

    def start(self) -> None:
        self._ensure_nodes()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)

    # Nodes: kwok heartbeats both (annotation); its pod stages skip the harness node's pods.
    def _ensure_nodes(self) -> None:
        for name in (KWOK_NODE, HARNESS_NODE):
            node = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {
                    "name": name,
                    "annotations": {"kwok.x-k8s.io/node": "fake"},
                    "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"},
                },
                "spec": {},
            }
            try:
                self.api.post("/api/v1/nodes", node)
            except ApiError as err:
                if err.status != 409:
                    raise

    def _loop(self) -> None:
        # Processes are started from this thread only: it lives as long as the harness, so the children's
        # parent-death signal fires only when the harness itself goes.
        while not self._stop.is_set():
            try:
                self._bind_pending()
                self._sync()
            except Exception as exc:  # noqa: BLE001 - a loop error is recorded, the loop goes on
                self.errors.append(repr(exc))
            self._stop.wait(0.3)
        for run in self.runs.values():
            if run.proc is not None:
                run.proc.stop(grace=5)

    def _bind_pending(self) -> None:
        for pod in self.api.items("/api/v1/pods", fieldSelector="spec.nodeName="):
            meta = pod["metadata"]
            if meta.get("deletionTimestamp") or (self.hold is not None and self.hold(pod)):
                continue
            target = HARNESS_NODE if runs_here(pod) else KWOK_NODE
            binding = {
                "apiVersion": "v1",
                "kind": "Binding",
                "metadata": {"name": meta["name"], "namespace": meta["namespace"]},
                "target": {"apiVersion": "v1", "kind": "Node", "name": target},
            }
            try:
                self.api.post(f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/binding", binding)
            except ApiError as err:
                if err.status not in (404, 409):
                    raise

    def _sync(self) -> None:
        pods = self.api.items("/api/v1/pods", fieldSelector=f"spec.nodeName={HARNESS_NODE}")
        seen = set()
        for pod in pods:
            uid = pod["metadata"]["uid"]
            seen.add(uid)
            run = self.runs.get(uid)
            if run is None:
                run = self.runs[uid] = PodRun(pod=pod, root=self.workdir / "pods" / uid / "root")
            run.pod = pod
            if pod["metadata"].get("deletionTimestamp"):
                self._terminate(run)
                continue
            self._drive(run)
            self._report(run)
        for uid in list(self.runs):
            if uid not in seen:
                run = self.runs.pop(uid)
                if run.proc is not None:
                    run.proc.stop(grace=5)

    def _terminate(self, run: PodRun) -> None:
        if run.proc is not None:
            grace = float(run.pod["spec"].get("terminationGracePeriodSeconds", 30))
            run.proc.stop(grace=min(grace, 10))
            run.proc = None
        meta = run.pod["metadata"]
        try:
            self.api.delete(
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}",
                {"gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}},
            )
        except ApiError as err:
            if err.status not in (404, 409):
                raise

    def _drive(self, run: PodRun) -> None:
        spec = run.pod["spec"]
        policy = spec.get("restartPolicy", "Always")
        if run.proc is not None and not run.proc.alive():
            run.exit_code = run.proc.stop(grace=1)
            run.finished_at = now()
            run.proc = None
            run.ready = False
            if policy == "Always" or (policy == "OnFailure" and run.exit_code != 0):
                run.restarts += 1
                run.next_start = time.monotonic() + min(10.0, 0.5 * 2**run.restarts)
            else:
                return
        if run.proc is None and run.exit_code is not None and policy == "Never":
            return
        if is_controller(run.pod) and self._yield_ports(run):
            return
        if run.proc is None and time.monotonic() >= run.next_start:
            container = spec["containers"][0]
            binary = controller_binary(container["image"])
            if binary is None or not binary.is_file():
                tags = ", ".join(sorted(EG_BINARIES))
                run.waiting = ("ErrImagePull", f"the harness runs {EG_IMAGE_REPOSITORY} {tags} (make tools)")
                return
            try:
                self._prepare_root(run)
            except _NotYet as exc:
                run.waiting = ("ContainerCreating", str(exc))
                return
            run.proc = self._start(run, container, binary)
            run.started_at = now()
            run.exit_code = None
        if run.proc is not None:
            run.ready = self._probe(run.pod["spec"]["containers"][0])

    def _revision(self, run: PodRun) -> int:
        if run.revision is None:
            meta = run.pod["metadata"]
            owner = next((o for o in meta.get("ownerReferences") or [] if o.get("kind") == "ReplicaSet"), None)
            annotations: dict[str, str] = {}
            if owner is not None:
                try:
                    path = f"/apis/apps/v1/namespaces/{meta['namespace']}/replicasets/{owner['name']}"
                    annotations = self.api.get(path)["metadata"].get("annotations") or {}
                except ApiError as err:
                    if err.status != 404:
                        raise
            run.revision = int(annotations.get(REVISION, 0))
        return run.revision

    def _yield_ports(self, run: PodRun) -> bool:
        """Whether this controller pod must leave the host ports to another (see the module docstring):
        a newer revision's pod exists (then its process stops), or another one still runs."""
        namespace = run.pod["metadata"]["namespace"]
        others = [
            o
            for o in self.runs.values()
            if o is not run
            and is_controller(o.pod)
            and o.pod["metadata"]["namespace"] == namespace
            and not o.pod["metadata"].get("deletionTimestamp")
        ]
        if any(self._revision(o) > self._revision(run) for o in others):
            if run.proc is not None:
                run.proc.stop(grace=10)
                run.proc = None
                run.ready = False
            run.waiting = ("ContainerCreating", "host ports handed to the newer ReplicaSet's pod (one network)")
            return True
        if run.proc is None and any(o.proc is not None for o in others):
            run.waiting = ("ContainerCreating", "waiting for the older controller pod to free the host ports")
            return True
        return False

    def _probe(self, container: dict[str, Any]) -> bool:
        probe = container.get("readinessProbe") or {}
        http = probe.get("httpGet")
        if not http:
            return True
        port = http["port"]
        if isinstance(port, str):
            port = next(p["containerPort"] for p in container.get("ports", []) if p.get("name") == port)
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{http.get('path', '/')}", timeout=1) as resp:
                return bool(200 <= resp.status < 400)
        except OSError:
            return False

    # --- the pod's filesystem -------------------------------------------------------------------------
    def _prepare_root(self, run: PodRun) -> None:
        pod = run.pod
        ns = pod["metadata"]["namespace"]
        container = pod["spec"]["containers"][0]
        volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
        files: dict[str, bytes] = {}
        dirs: list[str] = ["/tmp", "/dev", "/proc", "/etc", "/usr/local/bin"]
        for mount in container.get("volumeMounts", []):
            source = volumes[mount["name"]]
            path = mount["mountPath"]
            dirs.append(path)
            for rel, data in self._volume_files(pod, source, ns).items():
                files[f"{path}/{rel}"] = data
        for d in dirs:
            (run.root / d.lstrip("/")).mkdir(parents=True, exist_ok=True)
        for path, data in files.items():
            target = run.root / path.lstrip("/")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)

    def _volume_files(self, pod: dict[str, Any], source: dict[str, Any], ns: str) -> dict[str, bytes]:
        if "configMap" in source:
            return self._keys(ns, "configmaps", source["configMap"], "data")
        if "secret" in source:
            ref = {**source["secret"], "name": source["secret"]["secretName"]}
            return self._keys(ns, "secrets", ref, "data", b64=True)
        if "emptyDir" in source:
            return {}
        if "projected" in source:
            out: dict[str, bytes] = {}
            for src in source["projected"]["sources"]:
                if "serviceAccountToken" in src:
                    out[src["serviceAccountToken"]["path"]] = self._token(pod, src["serviceAccountToken"])
                elif "configMap" in src:
                    out.update(self._keys(ns, "configmaps", src["configMap"], "data"))
                elif "downwardAPI" in src:
                    for item in src["downwardAPI"]["items"]:
                        out[item["path"]] = str(_field(pod, item["fieldRef"]["fieldPath"])).encode()
            return out
        raise _NotYet(f"volume type not supported by the harness: {sorted(source)}")

    def _keys(self, ns: str, kind: str, ref: dict[str, Any], field_name: str, b64: bool = False) -> dict[str, bytes]:
        try:
            obj = self.api.get(f"/api/v1/namespaces/{ns}/{kind}/{ref['name']}")
        except ApiError as err:
            if err.status == 404 and not ref.get("optional"):
                raise _NotYet(f"{kind[:-1]} {ref['name']} not found") from None
            raise
        data = obj.get(field_name) or {}
        items = ref.get("items") or [{"key": k, "path": k} for k in data]
        return {
            item["path"]: base64.b64decode(data[item["key"]]) if b64 else str(data[item["key"]]).encode()
            for item in items
        }

    def _token(self, pod: dict[str, Any], src: dict[str, Any]) -> bytes:
        meta = pod["metadata"]
        sa = pod["spec"].get("serviceAccountName", "default")
        request = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "audiences": [src["audience"]] if src.get("audience") else None,
                "expirationSeconds": src.get("expirationSeconds", 3607),
                "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]},
            },
        }
        resp = self.api.post(f"/api/v1/namespaces/{meta['namespace']}/serviceaccounts/{sa}/token", request)
        return str(resp["status"]["token"]).encode()

    # --- the process --------------------------------------------------------------------------------------
    def _start(self, run: PodRun, container: dict[str, Any], binary_source: Path) -> Proc:
        pod = run.pod
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp"}
        # What the kubelet injects for in-cluster clients; the Service VIP does not route here, loopback does.
        env["KUBERNETES_SERVICE_HOST"] = self.api_host
        env["KUBERNETES_SERVICE_PORT"] = str(self.api_port)
        for item in container.get("env", []):
            if "value" in item:
                env[item["name"]] = str(item["value"])
            elif "fieldRef" in item.get("valueFrom", {}):
                env[item["name"]] = str(_field(pod, item["valueFrom"]["fieldRef"]["fieldPath"]))
        argv = [*(container.get("command") or ["envoy-gateway"]), *(container.get("args") or [])]
        root = run.root
        binary = str(root / "usr/local/bin/envoy-gateway")
        # Bind the binary, /dev, /proc and /etc into the pod root inside a private mount namespace, then
        # chroot: the process sees /config, /certs and the service-account files where the chart put them.
        script = " && ".join(
            [
                f"mount --bind /dev {shlex.quote(str(root / 'dev'))}",
                f"mount --bind /proc {shlex.quote(str(root / 'proc'))}",
                f"mount --bind /etc {shlex.quote(str(root / 'etc'))}",
                f"touch {shlex.quote(binary)}",
                f"mount --bind {shlex.quote(str(binary_source))} {shlex.quote(binary)}",
                "exec env -i "
                + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
                + f" {CHROOT} "
                + shlex.quote(str(root))
                + " "
                + " ".join(shlex.quote(a) for a in _resolve(argv)),
            ]
        )
        name = f"{pod['metadata']['name']}"
        log = self.workdir / "pods" / pod["metadata"]["uid"] / f"{name}.log"
        return Proc(name, ["unshare", "-m", "--propagation", "private", "sh", "-c", script], log)

    def _report(self, run: PodRun) -> None:
        pod = run.pod
        container = pod["spec"]["containers"][0]
        policy = pod["spec"].get("restartPolicy", "Always")
        state: dict[str, Any]
        phase = "Pending"
        if run.proc is not None:
            state = {"running": {"startedAt": run.started_at}}
            phase = "Running"
        elif run.exit_code is not None:
            terminated = {
                "exitCode": run.exit_code,
                "reason": "Completed" if run.exit_code == 0 else "Error",
                "startedAt": run.started_at,
                "finishedAt": run.finished_at,
            }
            if policy == "Always" or (policy == "OnFailure" and run.exit_code != 0):
                state = {"waiting": {"reason": "CrashLoopBackOff"}}
                phase = "Running"
            else:
                state = {"terminated": terminated}
                phase = "Succeeded" if run.exit_code == 0 else "Failed"
        else:
            state = {"waiting": {"reason": run.waiting[0], "message": run.waiting[1]}}
        ready = run.ready and run.proc is not None
        run.ip = run.ip or self._pod_ip()
        ip = run.ip
        status = {
            "phase": phase,
            "hostIP": "10.244.0.1",
            "podIP": ip,
            "podIPs": [{"ip": ip}],
            "startTime": pod["status"].get("startTime") or now(),
            "conditions": [
                {"type": "PodScheduled", "status": "True"},
                {"type": "Initialized", "status": "True"},
                {"type": "ContainersReady", "status": str(ready)},
                {"type": "Ready", "status": str(ready)},
            ],
            "containerStatuses": [
                {
                    "name": container["name"],
                    "image": container["image"],
                    "imageID": "",
                    "ready": ready,
                    "started": run.proc is not None,
                    "restartCount": run.restarts,
                    "state": state,
                }
            ],
        }
        key = repr(status)
        if run.last_status == key:
            return
        meta = pod["metadata"]
        try:
            self.api.merge_patch(
                f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/status", {"status": status}
            )
            run.last_status = key
        except ApiError as err:
            if err.status != 404:
                raise

    def _pod_ip(self) -> str:
        self._ip_seq += 1
        return f"10.244.200.{self._ip_seq % 250 + 2}"


class _NotYet(Exception):
    """A volume source is not there yet: the kubelet keeps the pod in ContainerCreating and retries."""


def _resolve(argv: list[str]) -> list[str]:
    # The image's entrypoint is envoy-gateway on PATH; inside the root it lives in /usr/local/bin.
    return ["/usr/local/bin/envoy-gateway" if argv[0] == "envoy-gateway" else argv[0], *argv[1:]]


def _field(pod: dict[str, Any], path: str) -> Any:
    node: Any = pod
    for part in path.split("."):
        node = node.get(part, "") if isinstance(node, dict) else ""
    return node
