"""The waf-image action for real (issue 40): playbooks/waf-image.yml, as `polycrate run envoy waf-image` and
`make waf-image` run it, builds waf/ with buildah (the builder this machine has) and pushes it to a registry
that requires a login (CNCF distribution with TLS and htpasswd, tests/harness/registry.py) with the
credentials of waf.image_build.auth. Asserted: the registry holds the image under waf.image's name, tag and
the digest the action reported, as the image waf/Dockerfile makes (its entrypoint and user); an anonymous
pull is refused (the login was needed); the password appears nowhere in the output.

Not in `make image-test`'s network namespace: the build runs waf/Dockerfile as it stands (apt for libre2, the
Go module proxy), so it needs the machine's network, as `make images` does. What the test adapts, through a
`buildah` first on PATH: the image store (`make images`' .oci, where the stand-ins of the Dockerfile's base
images are: no base image can be pulled here), vfs and chroot isolation as there, never pulling, and Go's
module and build caches that `make images` filled. The action itself is unchanged.
"""

from __future__ import annotations

import base64
import json
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.harness import pki
from tests.harness.registry import PASSWORD, USER, Registry
from tests.support.helpers import run_action
from tools.oci import Store, images

# The machine's network (see above): make image-test runs it after the rest of tests/images, outside their
# network namespace.
pytestmark = pytest.mark.network

REPOSITORY, TAG = "platform/envoy-waf", "action-test"


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    work = tmp_path_factory.mktemp("waf-image-registry")
    reg = Registry(work / "registry", pki.create(work / "pki", "10.96.0.1")).start()
    try:
        yield reg
    finally:
        reg.stop()


def buildah_wrapper(folder: Path, store: Store) -> Path:
    """`buildah` on the store `make images` filled, as tools/oci runs it, never pulling, with Go's caches."""
    cache = store.path / "cache"
    env = store.env()
    base = f"/usr/bin/buildah --root {store.path / 'storage'} --runroot {store.path / 'run'} --storage-driver vfs"
    script = folder / "buildah"
    script.write_text(
        "#!/bin/sh\n"
        f"export BUILDAH_ISOLATION=chroot CONTAINERS_REGISTRIES_CONF={env['CONTAINERS_REGISTRIES_CONF']}\n"
        'if [ "$1" = bud ]; then shift\n'
        f"  exec {base} bud --pull=never --volume {images.HOST_CA}:/etc/ssl/certs/ca-certificates.crt:ro "
        f'--volume {cache / "go-mod"}:/go/pkg/mod --volume {cache / "go-build"}:/go/cache "$@"\nfi\n'
        f'exec {base} "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script


def registry_get(reg: Registry, path: str, auth: bool = True) -> tuple[int, dict[str, str], bytes]:
    context = ssl.create_default_context(cafile=str(reg.pki.ca_crt))
    request = urllib.request.Request(f"https://{reg.host}{path}")
    request.add_header(
        "Accept", "application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json"
    )
    if auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode())
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), b""


def test_the_action_builds_waf_and_pushes_it_with_the_login(registry: Registry, tmp_path: Path) -> None:
    store = Store()
    images.golang_stand_in(store, images.dockerfile_arg(ROOT / "waf" / "Dockerfile", "GO_IMAGE"))
    images.distroless_cc_stand_in(store, images.dockerfile_arg(ROOT / "waf" / "Dockerfile", "RUNTIME_IMAGE"))
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    buildah_wrapper(fake_bin, store)
    # The registry's CA, where containers/image looks for a registry's certificates ($HOME's certs.d).
    certs = tmp_path / "home" / ".config" / "containers" / "certs.d" / registry.host
    certs.mkdir(parents=True)
    (certs / "ca.crt").write_bytes(registry.pki.ca_crt.read_bytes())
    ref = f"{registry.host}/{REPOSITORY}:{TAG}"
    with images.serve_file(images.crs_tarball(store)) as crs_url:
        cfg = {
            "waf": {
                "image": {"registry": registry.host, "repository": REPOSITORY, "tag": TAG},
                "image_build": {
                    "builder": "buildah",
                    "build_args": {"crs_url": crs_url},
                    "auth": {"username": USER, "password": PASSWORD},
                },
            }
        }
        try:
            done = run_action(
                "waf-image", cfg, tmp_path, fake_bin, ANSIBLE_DISPLAY_OK_HOSTS="false", HOME=str(tmp_path / "home")
            )
        finally:
            subprocess.run([str(fake_bin / "buildah"), "rmi", ref], capture_output=True, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]
    assert PASSWORD not in output
    status, headers, body = registry_get(registry, f"/v2/{REPOSITORY}/manifests/{TAG}")
    assert status == 200, (status, headers)
    digest = headers.get("Docker-Content-Digest", "")
    assert digest.startswith("sha256:"), headers
    assert f"Pushed {ref} as {digest}." in output, output[-3000:]
    manifest = json.loads(body)
    status, _, config_blob = registry_get(registry, f"/v2/{REPOSITORY}/blobs/{manifest['config']['digest']}")
    assert status == 200
    image_config = json.loads(config_blob)["config"]
    assert image_config["Entrypoint"] == ["/usr/local/bin/envoy-waf"], image_config
    assert image_config["User"] == "65532:65532", image_config
    assert registry_get(registry, f"/v2/{REPOSITORY}/manifests/{TAG}", auth=False)[0] == 401, "the login was needed"
