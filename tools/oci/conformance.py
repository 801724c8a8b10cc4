"""The images the Gateway API conformance suite runs (make conformance, tests/conformance), built here.

The suite's manifests name upstream images (registry.k8s.io/gateway-api/echo-basic at several tags, and
registry.k8s.io/coredns/coredns for its UDP backend). The node pulls nothing, so each is built from the same
module the suite is built from (tools/conformance/suite: echo-basic; tools/conformance/coredns: CoreDNS with
the plugins the suite's Corefile names) and exported under every reference the manifests use. Which
references those are is read from the pinned module's manifests, so a pin that adds an image fails here, by
name, instead of as a pull on the node.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tools.oci import ROOT, ImageConfig, OCIError, Store

SUITE_MODULE = ROOT / "tools" / "conformance" / "suite"
BINARIES = ROOT / ".tools" / "conformance"
ECHO_REPOSITORY = "registry.k8s.io/gateway-api/echo-basic"
COREDNS_REPOSITORY = "registry.k8s.io/coredns/coredns"
# Built once under these references, exported under each reference the manifests use (Store.archive's name).
ECHO_REF = "localhost/envoy-test/conformance-echo-basic:v1.6.1"
COREDNS_REF = "localhost/envoy-test/conformance-coredns:v1.15.0"
NONROOT = "65532:65532"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
IMAGE_LINE = re.compile(r"^[\s-]*image:\s*(\S+)\s*$", re.MULTILINE)


def suite_dir() -> Path:
    """The pinned conformance module in Go's module cache (make conformance-build put it there)."""
    env = {**os.environ, "GOFLAGS": "-mod=readonly", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    done = subprocess.run(
        ["go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api/conformance"],
        cwd=SUITE_MODULE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        missing = "the conformance module is not in Go's module cache: run `make conformance-build`"
        raise OCIError(f"{missing}\n{done.stderr}")
    return Path(done.stdout.strip())


def manifest_images(root: Path) -> set[str]:
    """Every image the suite's gateway manifests name (base/ and tests/; mesh/ is another profile family)."""
    found: set[str] = set()
    for folder in ("base", "tests"):
        for path in sorted((root / folder).glob("*.yaml")):
            found.update(IMAGE_LINE.findall(path.read_text(encoding="utf-8")))
    return found


def source_of(ref: str) -> str:
    """The image built here that stands for the suite's `ref`."""
    repository = ref.rsplit(":", 1)[0]
    if repository == ECHO_REPOSITORY:
        return ECHO_REF
    if repository == COREDNS_REPOSITORY:
        return COREDNS_REF
    raise OCIError(f"the conformance suite names {ref}, which nothing here builds: add it to tools/oci/conformance.py")


def conformance_images(store: Store) -> list[str]:
    """Build the two images (reused while their binaries are unchanged); returns the suite's references."""
    for name, ref, config in (
        ("echo-basic", ECHO_REF, ImageConfig(env={"PATH": PATH}, user=NONROOT, entrypoint=("/echo-basic",))),
        # Root, as the pod's securityContext then only adds NET_BIND_SERVICE to bind port 53: upstream's image
        # runs as nonroot with that capability set on the file, which a stand-in's copy does not carry.
        ("coredns", COREDNS_REF, ImageConfig(env={"PATH": PATH}, user="0", entrypoint=("/coredns",))),
    ):
        binary = BINARIES / name
        if not binary.is_file():
            raise OCIError(f"{binary} is missing: run `make conformance-build`")
        store.stand_in(ref, config, copies={f"/{name}": binary})
    refs = sorted(manifest_images(suite_dir()))
    for ref in refs:
        source_of(ref)
    return refs


def conformance_archives(store: Store) -> list[Path]:
    """The suite's images as archives tagged as its manifests name them (never built here: see node.py)."""
    return [store.archive(source_of(ref), name=ref) for ref in sorted(manifest_images(suite_dir()))]
