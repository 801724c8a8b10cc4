"""Container images without a Docker engine: the tooling the image tests share (tools/oci/README.md).

- `debian_rootfs`: a Debian root file system from Debian's mirror (mmdebstrap), as a tar.
- `Store.stand_in`: an image under the tag a Dockerfile names (the real base cannot be pulled here),
  from such a tar and/or host folders.
- `Store.build`: a Dockerfile built with buildah (vfs storage, `--isolation chroot`: the default OCI
  isolation fails on this host's hybrid cgroups).
- `Store.archive`: an image as a docker-archive tar (for `docker load`).
- `run_image`: an image run with crun (read-only root, no capabilities, the image's user), in a private
  mount namespace where the cgroup2 `unified` mount is gone (crun then sees plain cgroup v1).

Everything lives under one gitignored folder (`.oci/`, or $OCI_ROOT); an image or tar is reused while a
digest of its inputs is unchanged (a stamp beside it).
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_STORE = Path(os.environ.get("OCI_ROOT") or ROOT / ".oci")
# The mirror the host's apt uses (Debian's packages are reachable; nothing else is).
DEBIAN_SOURCES = (
    "deb http://deb.debian.org/debian {suite} main",
    "deb http://deb.debian.org/debian {suite}-updates main",
    "deb http://deb.debian.org/debian-security {suite}-security main",
)
# A short name such as golang:1.26 means docker.io/library/golang:1.26, as it does for Docker.
REGISTRIES_CONF = 'unqualified-search-registries = ["docker.io"]\nshort-name-mode = "permissive"\n'


class OCIError(RuntimeError):
    """A build or run step failed; the message names the step and ends with its output."""


def digest(*parts: object) -> str:
    """A short digest of the inputs (strings, bytes, paths: a file's bytes, a folder's files and names)."""
    h = hashlib.sha256()
    for part in parts:
        if isinstance(part, list) and part and isinstance(part[0], tuple) and isinstance(part[0][1], Path):
            for name, path in part:
                h.update(name.encode() + b"\0" + path.read_bytes() + b"\1")
        elif isinstance(part, Path):
            for path in sorted([part] if part.is_file() else (p for p in part.rglob("*") if p.is_file())):
                if "__pycache__" in path.parts:
                    continue
                h.update(str(path.relative_to(part.parent if part.is_file() else part)).encode() + b"\0")
                h.update(path.read_bytes())
        else:
            h.update(part if isinstance(part, bytes) else repr(part).encode())
        h.update(b"\1")
    return h.hexdigest()[:16]


def context_files(context: Path) -> list[Path]:
    """The files of a build context the builder sends: all but those its .dockerignore names (plain names and
    globs, matched against the path and each folder above it; no `!` exceptions)."""
    ignore = context / ".dockerignore"
    patterns = [
        line.strip().removeprefix("**/").rstrip("/")
        for line in (ignore.read_text(encoding="utf-8").splitlines() if ignore.exists() else [])
        if line.strip() and not line.startswith("#")
    ]

    def ignored(rel: PurePosixPath) -> bool:
        prefixes = [PurePosixPath(*rel.parts[: i + 1]) for i in range(len(rel.parts))]
        return any(fnmatch.fnmatch(str(p), pat) or fnmatch.fnmatch(p.name, pat) for p in prefixes for pat in patterns)

    return [p for p in sorted(context.rglob("*")) if p.is_file() and not ignored(PurePosixPath(p.relative_to(context)))]


def _run(cmd: Sequence[str], what: str, env: Mapping[str, str] | None = None, log: IO[str] | None = None) -> str:
    proc = subprocess.run(
        list(cmd), env=dict(env) if env is not None else None, capture_output=log is None, text=True, check=False,
        stdout=log, stderr=subprocess.STDOUT if log is not None else None,
    )  # fmt: skip
    if proc.returncode != 0:
        tail = (proc.stdout or "") + (proc.stderr or "")
        raise OCIError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd[:6])} ...\n{tail[-4000:]}")
    return proc.stdout or ""


def debian_rootfs(
    store: Path,
    name: str,
    packages: Iterable[str] = (),
    *,
    hooks: Sequence[str] = (),
    suite: str = "bookworm",
    variant: str = "minbase",
) -> Path:
    """A Debian root file system as a tar under store/rootfs, made once per input (mmdebstrap, root mode);
    `hooks` are shell commands run at the end with the root folder as $1."""
    pkgs = sorted(packages)
    sources = [s.format(suite=suite) for s in DEBIAN_SOURCES]
    out = store / "rootfs" / f"{name}-{digest(suite, variant, pkgs, sources, list(hooks))}.tar"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    for old in out.parent.glob(f"{name}-*.tar"):
        old.unlink()
    part = out.with_suffix(".part")
    cmd = ["mmdebstrap", "--quiet", "--mode=root", f"--variant={variant}", "--format=tar"]
    if pkgs:
        cmd.append("--include=" + ",".join(pkgs))
    # Leave apt's lists out (as the official images do); the image's own `apt-get update` fetches them.
    cmd += [f"--customize-hook={hook}" for hook in hooks]
    cmd += ["--customize-hook=rm -rf $1/var/lib/apt/lists/*", suite, str(part), *sources]
    _run(cmd, f"mmdebstrap {name}")
    part.rename(out)
    return out


@dataclass(frozen=True)
class ImageConfig:
    """The parts of an image's config a stand-in sets (as the real image has them)."""

    env: Mapping[str, str] = field(default_factory=dict)
    workdir: str = "/"
    user: str = ""
    entrypoint: Sequence[str] = ()
    cmd: Sequence[str] = ()


@dataclass(frozen=True)
class Store:
    """buildah's image storage (vfs) and the stamps that say which inputs made each image."""

    path: Path = DEFAULT_STORE
    # Offline (a test in a network namespace of its own): an image that is not up to date is an error
    # that says how to build it, never a build attempt.
    offline: bool = False

    def env(self) -> dict[str, str]:
        conf = self.path / "registries.conf"
        if not conf.exists() or conf.read_text(encoding="utf-8") != REGISTRIES_CONF:
            self.path.mkdir(parents=True, exist_ok=True)
            conf.write_text(REGISTRIES_CONF, encoding="utf-8")
        return {**os.environ, "BUILDAH_ISOLATION": "chroot", "CONTAINERS_REGISTRIES_CONF": str(conf)}

    def buildah(self, *args: str, what: str = "buildah", log: IO[str] | None = None) -> str:
        base = ["buildah", "--root", str(self.path / "storage"), "--runroot", str(self.path / "run")]
        return _run([*base, "--storage-driver", "vfs", *args], what, env=self.env(), log=log)

    def image_id(self, ref: str) -> str | None:
        try:
            return self.buildah("inspect", "--type", "image", "--format", "{{.FromImageID}}", ref).strip() or None
        except OCIError:
            return None

    def inspect(self, ref: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.buildah("inspect", "--type", "image", ref))
        return data

    def _stamp(self, ref: str) -> Path:
        return self.path / "stamps" / ref.replace("/", "_").replace(":", "_")

    def fresh(self, ref: str, key: str) -> bool:
        """Whether `ref` exists and was made from the inputs whose digest is `key`."""
        stamp = self._stamp(ref)
        return stamp.exists() and stamp.read_text(encoding="utf-8") == key and self.image_id(ref) is not None

    def _need_build(self, ref: str) -> None:
        if self.offline:
            raise OCIError(f"image {ref} is missing or out of date in {self.path}: run `make images` (needs network)")

    def _record(self, ref: str, key: str) -> None:
        self._stamp(ref).parent.mkdir(parents=True, exist_ok=True)
        self._stamp(ref).write_text(key, encoding="utf-8")
        # The image `ref` named before is now untagged: vfs keeps full copies, so drop it.
        self.buildah("rmi", "--prune", what="buildah rmi --prune")

    def stand_in(
        self, ref: str, config: ImageConfig, rootfs: Path | None = None, copies: Mapping[str, Path] | None = None
    ) -> str:
        """Image `ref` from a rootfs tar plus host paths copied in (destination -> source); reused while
        they are unchanged. Returns the image id."""
        copies = dict(copies or {})
        key = digest(ref, str(rootfs), sorted((d, str(s), _tree_stamp(s)) for d, s in copies.items()), repr(config))
        if self.fresh(ref, key):
            return str(self.image_id(ref))
        self._need_build(ref)
        ctr = self.buildah("from", "--name", f"standin-{uuid.uuid4().hex[:8]}", "scratch", what="buildah from").strip()
        try:
            if rootfs is not None:
                self.buildah("add", ctr, str(rootfs), "/", what=f"unpack {rootfs.name}")
            for dest, src in copies.items():
                self.buildah("copy", ctr, str(src), dest, what=f"copy {src}")
            args = [f"--env={k}={v}" for k, v in config.env.items()]
            args += [f"--workingdir={config.workdir}", f"--user={config.user}", "--os=linux", "--arch=amd64"]
            args += ["--entrypoint", json.dumps(list(config.entrypoint)), "--cmd", " ".join(config.cmd)]
            self.buildah("config", *args, ctr, what="buildah config")
            self.buildah("commit", "--rm", ctr, ref, what=f"commit {ref}")
        except BaseException:
            with contextlib.suppress(OCIError):
                self.buildah("rm", ctr)
            raise
        self._record(ref, key)
        return str(self.image_id(ref))

    def alias(self, ref: str, source: str) -> str:
        """`ref` as another name of the image `source` (buildah tag): the same id, so the same layers in every
        archive, and a node's containerd stores and unpacks them once however many names it imports."""
        image = self.image_id(source)
        if image is None:
            raise OCIError(f"no image {source} in {self.path}")
        if self.image_id(ref) == image:
            return image
        self._need_build(ref)
        self.buildah("tag", source, ref, what=f"tag {source} as {ref}")
        self._record(ref, digest("alias", source, image))
        return image

    def build(
        self,
        ref: str,
        context: Path,
        *,
        dockerfile: Path | None = None,
        build_args: Mapping[str, str] | None = None,
        volatile_args: Sequence[str] = (),
        volumes: Sequence[str] = (),
        bases: Sequence[str] = (),
        log: Path | None = None,
    ) -> str:
        """`buildah bud` of `context` (no pulls: every FROM must be in the store). Reused while the
        context, the Dockerfile, the build args (but `volatile_args`, such as a URL with a random port) and
        the ids of `bases` are unchanged. Returns the image id."""
        dockerfile = dockerfile or context / "Dockerfile"
        args = dict(build_args or {})
        pinned = sorted((k, v) for k, v in args.items() if k not in volatile_args)
        files = [(str(f.relative_to(context)), f) for f in context_files(context)]
        key = digest(ref, files, dockerfile, pinned, [self.image_id(b) for b in bases])
        if self.fresh(ref, key):
            return str(self.image_id(ref))
        self._need_build(ref)
        cmd = ["bud", "--isolation", "chroot", "--pull=never", "--layers=false", "--force-rm", "-t", ref]
        cmd += ["-f", str(dockerfile)]
        cmd += [f"--build-arg={k}={v}" for k, v in args.items()]
        cmd += [f"--volume={v}" for v in volumes]
        if log is None:
            self.buildah(*cmd, str(context), what=f"build {ref}")
        else:
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("w", encoding="utf-8") as out:
                try:
                    self.buildah(*cmd, str(context), what=f"build {ref}", log=out)
                except OCIError as exc:
                    raise OCIError(f"{exc}\n{log.read_text(encoding='utf-8')[-4000:]}") from None
        self._record(ref, key)
        return str(self.image_id(ref))

    def archive(self, ref: str, name: str | None = None) -> Path:
        """`ref` as a docker-archive tar (tagged `name`, default `ref`) under store/archives; reused while
        the image is the same."""
        image = self.image_id(ref)
        if image is None:
            raise OCIError(f"no image {ref} in {self.path}")
        out = self.path / "archives" / f"{(name or ref).replace('/', '_').replace(':', '_')}-{image[:12]}.tar"
        if not out.exists():
            out.parent.mkdir(parents=True, exist_ok=True)
            # Test sessions side by side (make test's jobs) may export the same image at once: each writes a
            # part of its own and renames it over the archive (the same bytes), and none removes the archive
            # another has just finished, only older images' archives.
            for old in out.parent.glob(out.name.rsplit("-", 1)[0] + "-*.tar"):
                if old != out:
                    old.unlink(missing_ok=True)
            part = out.with_suffix(f".part-{os.getpid()}")
            part.unlink(missing_ok=True)
            self.buildah("push", "--quiet", ref, f"docker-archive:{part}:{name or ref}", what=f"export {ref}")
            os.replace(part, out)
        return out


def _tree_stamp(path: Path) -> str:
    """Cheap identity of a host folder copied into a stand-in: for a Go toolchain, its VERSION file."""
    version = path / "VERSION"
    return version.read_text(encoding="utf-8") if version.exists() else digest(path)


# What a container sees of /dev, /proc and /sys, as runc/crun's default spec has it.
_MOUNTS: list[dict[str, Any]] = [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755"]},
    {
        "destination": "/dev/pts",
        "type": "devpts",
        "source": "devpts",
        "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"],
    },
    {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev", "size=64m"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup", "options": ["nosuid", "noexec", "ro"]},
]
_MASKED = ["/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/sched_debug", "/sys/firmware"]
_READONLY = ["/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]


@dataclass
class Running:
    """A container started by run_image: its crun process and its output (stdout and stderr)."""

    name: str
    process: subprocess.Popen[bytes]
    log: Path
    state: Path

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def signal(self, sig: signal.Signals) -> None:
        _run(["crun", "--root", str(self.state), "kill", self.name, sig.name.removeprefix("SIG")], f"crun kill {sig}")

    def stop(self, timeout: float = 15) -> int:
        """SIGTERM, then SIGKILL after `timeout`; returns the container's exit code."""
        if self.alive():
            with contextlib.suppress(OCIError):
                self.signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OCIError):
                    self.signal(signal.SIGKILL)
        return self.process.wait(10)


@contextlib.contextmanager
def run_image(
    store: Store,
    ref: str,
    *,
    args: Sequence[str] | None = None,
    binds: Mapping[str, Path] | None = None,
    tmpfs: Sequence[str] = ("/tmp",),
    env: Mapping[str, str] | None = None,
    memory_bytes: int | None = None,
    cpu_quota: float | None = None,
) -> Iterator[Running]:
    """Run `ref` with crun as its config says (entrypoint, cmd, env, user, workdir; `args` replace the cmd as
    a pod's `args` do): read-only root, no
    capabilities, no new privileges, `tmpfs` folders, read-only `binds` (destination -> host path), in the
    caller's network namespace. Limits, when given, are cgroup v1 limits (as a kubelet sets them)."""
    config = store.inspect(ref)["OCIv1"]["config"]
    user = config.get("User") or "0"
    uid, _, gid = user.partition(":")
    if not (uid.isdigit() and (gid or uid).isdigit()):
        raise OCIError(f"{ref}: USER {user!r} is not numeric (a runtime with runAsNonRoot cannot check a name)")
    name = f"oci-{uuid.uuid4().hex[:10]}"
    ctr = store.buildah("from", "--pull=never", "--name", name, ref, what=f"buildah from {ref}").strip()
    work = Path(tempfile.mkdtemp(prefix="oci-run-", dir=store.path))
    try:
        rootfs = store.buildah("mount", ctr, what="buildah mount").strip()
        mounts = [dict(m) for m in _MOUNTS]
        mounts += [
            {"destination": d, "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "nodev", "mode=1777"]}
            for d in tmpfs
        ]
        mounts += [
            {"destination": d, "type": "bind", "source": str(s), "options": ["rbind", "ro"]}
            for d, s in (binds or {}).items()
        ]
        resources: dict[str, Any] = {}
        if memory_bytes:
            resources["memory"] = {"limit": memory_bytes}
        if cpu_quota:
            resources["cpu"] = {"quota": int(cpu_quota * 100_000), "period": 100_000}
        spec = {
            "ociVersion": "1.0.2",
            "process": {
                "terminal": False,
                "user": {"uid": int(uid), "gid": int(gid or uid)},
                "args": [*(config.get("Entrypoint") or []), *(config.get("Cmd") or [] if args is None else args)],
                "env": list(config.get("Env") or []) + [f"{k}={v}" for k, v in (env or {}).items()],
                "cwd": config.get("WorkingDir") or "/",
                "capabilities": {k: [] for k in ("bounding", "effective", "inheritable", "permitted", "ambient")},
                "noNewPrivileges": True,
            },
            "root": {"path": rootfs, "readonly": True},
            "hostname": "container",
            "mounts": mounts,
            "linux": {
                # No network namespace: the container shares the caller's (a test's private one).
                "namespaces": [{"type": t} for t in ("pid", "ipc", "uts", "mount")],
                "resources": resources,
                "maskedPaths": _MASKED,
                "readonlyPaths": _READONLY,
            },
        }
        (work / "config.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
        state = work / "state"
        log = work / "output.log"
        with log.open("wb") as out:
            # crun fails on hybrid cgroups (v1 controllers + the cgroup2 `unified` mount); without that mount
            # it takes the plain v1 path. The unmount stays inside this private mount namespace.
            script = 'umount /sys/fs/cgroup/unified 2>/dev/null; exec crun --root "$1" run --bundle "$2" "$3"'
            process = subprocess.Popen(
                [
                    "unshare",
                    "--mount",
                    "--propagation",
                    "private",
                    "sh",
                    "-c",
                    script,
                    "sh",
                    str(state),
                    str(work),
                    name,
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        running = Running(name, process, log, state)
        try:
            yield running
        finally:
            running.stop()
    finally:
        with contextlib.suppress(OCIError):
            store.buildah("rm", ctr)
        shutil.rmtree(work, ignore_errors=True)


def wait_for(check: Any, what: str, running: Running | None = None, timeout: float = 60) -> Any:
    """Poll `check()` until it returns a truthy value; fail with the container's output when it exits."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        if running is not None and not running.alive():
            raise OCIError(f"the container exited ({running.process.returncode}) before {what}:\n{running.output()}")
        try:
            value = check()
            if value:
                return value
        except Exception as exc:  # noqa: BLE001  # retried until the deadline; the last one is reported
            last = exc
        time.sleep(0.2)
    output = running.output() if running is not None else ""
    raise OCIError(f"timed out waiting for {what} (last error: {last!r})\n{output}")


@dataclass
class Dockerd:
    """A dockerd started by `dockerd()`: its DOCKER_HOST and a `docker` CLI call against it."""

    host: str
    log: Path

    def docker(self, *args: str, what: str = "docker") -> str:
        """The docker CLI (`docker` on PATH) against this engine."""
        return _run(["docker", "--host", self.host, *args], what, env={**os.environ, "DOCKER_HOST": self.host})

    def load(self, store: Store, ref: str) -> None:
        """`ref` from the store into this engine (buildah push docker-archive, docker load), unless the one
        loaded last is the same image. The archive is deleted once loaded: the data root keeps the image."""
        image = store.image_id(ref)
        if image is None:
            raise OCIError(f"no image {ref} in {store.path}: run `make images`")
        stamp = store.path / "docker" / f"loaded-{ref.replace('/', '_').replace(':', '_')}"
        if stamp.exists() and stamp.read_text(encoding="utf-8") == image:
            with contextlib.suppress(OCIError):
                self.docker("image", "inspect", ref)
                return
        archive = store.archive(ref)
        self.docker("load", "--input", str(archive), what=f"docker load {archive.name}")
        stamp.write_text(image, encoding="utf-8")
        archive.unlink()


@contextlib.contextmanager
def dockerd(store: Store, timeout: float = 60) -> Iterator[Dockerd]:
    """Debian's dockerd (20.10) on a socket of its own, in a private mount namespace, with no networking of
    its own (no bridge, iptables, masquerading or forwarding: containers use --network host), its data root
    under the store (loaded images are kept) and a fresh exec root. Its containers' cgroups go under a
    parent of their own, removed afterwards."""
    data = store.path / "docker"
    data.mkdir(parents=True, exist_ok=True)
    # Unix socket paths are short (108 bytes): the exec root and socket live in a short temp folder.
    run = Path(tempfile.mkdtemp(prefix="dkd-", dir="/tmp"))
    parent = f"oci-{run.name}"
    host = f"unix://{run}/docker.sock"
    log = store.path / "logs" / "dockerd.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["unshare", "--mount", "--propagation", "private", "dockerd", "--host", host, "--data-root", str(data)]
    host_mounts = os.environ.get("ENVOY_HOST_MOUNT_NS_FD")
    if host_mounts:
        # Inside the real node's mount namespace (tests/harness/node.py), whose cgroup mounts are the kubelet's
        # layout: runc under dockerd cannot start a container there ("can't get final child's PID from pipe").
        # dockerd starts from the machine's mount namespace and keeps this network namespace (the node's).
        cmd = ["nsenter", f"--mount=/proc/self/fd/{host_mounts}", "--", *cmd]
    cmd += ["--exec-root", str(run / "exec"), "--pidfile", str(run / "docker.pid"), "--cgroup-parent", parent]
    cmd += ["--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-masq=false", "--ip-forward=false"]
    cmd += ["--storage-driver=overlay2"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            pass_fds=(int(host_mounts),) if host_mounts else (),
        )
    daemon = Dockerd(host, log)
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise OCIError(f"dockerd exited ({process.returncode}):\n{log.read_text(errors='replace')[-3000:]}")
            try:
                daemon.docker("version")
                break
            except OCIError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        yield daemon
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        for folder in Path("/sys/fs/cgroup").glob(f"*/{parent}"):
            with contextlib.suppress(OSError):
                for child in sorted(folder.rglob("*"), reverse=True):
                    if child.is_dir():
                        child.rmdir()
                folder.rmdir()
        shutil.rmtree(run, ignore_errors=True)
