"""The waf-image action (`polycrate run envoy waf-image`, `make waf-image`; issue 40): build waf/ with the
machine's builder and push it to waf.image. Guards: the builder is the configured one or the first of docker,
podman, buildah on PATH; each builder gets the commands it understands (build args from
waf.image_build.build_args, the login reading the password on stdin into a private folder); the action stops
before running anything on the placeholder image or without a builder, naming what to do; what it reports
pins the pushed digest; the real playbook runs the decided commands in order, never shows the password, and
removes its private folder; the shipped block carries the build context. The real build and push to a
registry that requires the login: tests/images/test_waf_image_action.py (make image-test).

Mutation: waf-image-placeholder (the placeholder taken for a registry) turns these red.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from envoy_block import waf_image
from tests.conftest import ROOT
from tests.support.helpers import load, run_action
from tools import block_package

OWN = {"registry": "registry.example.com:5000", "repository": "platform/envoy-waf", "tag": "0.4.0"}
REF = "registry.example.com:5000/platform/envoy-waf:0.4.0"
SECRET = "pw-Zq7-never-shown"
ALL = {"docker": "/usr/bin/docker", "podman": "/usr/bin/podman", "buildah": "/usr/bin/buildah"}


def values(**build: Any) -> dict[str, Any]:
    return dict(load({"waf": {"image": dict(OWN), "image_build": build}}).values)


def test_the_first_builder_on_path_builds_unless_one_is_configured() -> None:
    assert waf_image.decide(values(), ALL, "/b/waf", "/p").builder == "docker"
    assert (
        waf_image.decide(values(), {"buildah": "/x/buildah", "podman": "/x/podman"}, "/b/waf", "/p").builder == "podman"
    )
    assert waf_image.decide(values(builder="buildah"), ALL, "/b/waf", "/p").builder == "buildah"


def test_each_builder_gets_its_own_commands() -> None:
    args = {"crs_url": "https://mirror.example.com/crs.tgz", "go_image": "golang:1.26.8-bookworm@sha256:" + "0" * 64}
    docker = waf_image.decide(values(build_args=args), ALL, "/b/waf", "/p")
    assert docker.build == (
        "/usr/bin/docker", "build", "-t", REF,
        "--build-arg=CRS_URL=https://mirror.example.com/crs.tgz", f"--build-arg=GO_IMAGE={args['go_image']}", "/b/waf",
    )  # fmt: skip
    assert docker.login == ()
    assert docker.push == ("/usr/bin/docker", "push", REF)
    assert docker.digest_file == ""
    podman = waf_image.decide(values(builder="podman"), ALL, "/b/waf", "/p")
    assert podman.build == ("/usr/bin/podman", "build", "-t", REF, "/b/waf")
    assert podman.push == ("/usr/bin/podman", "push", "--digestfile", "/p/digest", REF)
    buildah = waf_image.decide(values(builder="buildah"), ALL, "/b/waf", "/p")
    assert buildah.build == ("/usr/bin/buildah", "bud", "-t", REF, "/b/waf")
    assert buildah.push == ("/usr/bin/buildah", "push", "--digestfile", "/p/digest", REF, f"docker://{REF}")


def test_with_credentials_the_login_lands_in_the_private_folder_and_reads_stdin() -> None:
    auth = {"username": "robot", "password": SECRET}
    docker = waf_image.decide(values(auth=auth), ALL, "/b/waf", "/p")
    assert docker.login == (
        "/usr/bin/docker", "--config", "/p", "login", "--username", "robot", "--password-stdin", OWN["registry"],
    )  # fmt: skip
    assert docker.push == ("/usr/bin/docker", "--config", "/p", "push", REF)
    buildah = waf_image.decide(values(auth=auth, builder="buildah"), ALL, "/b/waf", "/p")
    assert buildah.login == (
        "/usr/bin/buildah", "login", "--authfile", "/p/auth.json", "--username", "robot", "--password-stdin",
        OWN["registry"],
    )  # fmt: skip
    assert buildah.push[:4] == ("/usr/bin/buildah", "push", "--authfile", "/p/auth.json")
    for decision in (docker, buildah):
        assert SECRET not in str(decision.to_dict()), "the decision never carries the password"


def test_it_stops_before_anything_runs_on_the_placeholder_or_without_a_builder() -> None:
    placeholder = dict(load({"waf": {"image_build": {"builder": "podman"}}}).values)
    stopped = waf_image.decide(placeholder, {"docker": "/usr/bin/docker"}, "/b/waf", "/p")
    assert (stopped.build, stopped.push) == ((), ())
    assert len(stopped.problems) == 2, stopped.problems
    assert stopped.problems[0].startswith("config.waf.image: docker.io/polycrate/envoy-waf is the placeholder")
    assert "set waf.image.registry, waf.image.repository and waf.image.tag" in stopped.problems[0]
    assert stopped.problems[1].startswith("config.waf.image_build.builder: podman is not on PATH (found: docker)")
    nothing = waf_image.decide(values(), {}, "/b/waf", "/p")
    assert nothing.problems == (
        "no image builder on PATH (looked for docker, podman, buildah): install one, or run the action where one "
        "is (under Polycrate's container mode docker reaches the host's engine through its socket)",
    )


def test_what_it_reports_pins_the_pushed_digest() -> None:
    digest = "sha256:" + "a" * 64
    printed = f"0.4.0: digest: {digest} size: 1234\n"
    assert waf_image.pushed(values(), printed, "") == (
        f"Pushed {REF} as {digest}. Set waf.enabled: true to run it; waf.image.digest: {digest} pins it."
    )
    assert digest in waf_image.pushed(values(), "", f"{digest}\n"), "from the digest file"
    pinned = dict(load({"waf": {"image": {**OWN, "digest": "sha256:" + "b" * 64}}}).values)
    assert f"set waf.image.digest: {digest} (or empty it)" in waf_image.pushed(pinned, printed, "")
    assert (
        waf_image.pushed(values(), "", "")
        == f"Pushed {REF}. Set waf.enabled: true to run it (its digest was not reported)."
    )


def test_the_shipped_block_carries_the_build_context() -> None:
    """`polycrate block push` ships tools/block_package.py's files: the waf-image action of a pulled block needs
    waf/Dockerfile and every Go source the build compiles and copies, and no tests."""
    packaged = {str(p) for p in block_package.package_files()}
    waf = ROOT / "waf"
    sources = [p for folder in ("cmd", "internal") for p in (waf / folder).rglob("*.go")]
    tracked = [*sources, *(p for p in (waf / "third_party").iterdir() if p.is_file())]
    tracked += [waf / name for name in ("go.mod", "go.sum", "Dockerfile")]
    needed = {str(p.relative_to(ROOT)) for p in tracked if not p.name.endswith("_test.go")}
    assert needed, tracked
    assert needed <= packaged, sorted(needed - packaged)
    assert not any(p.endswith("_test.go") for p in packaged)


@pytest.mark.playbook
def test_the_playbook_runs_the_decided_commands_and_never_shows_the_password(tmp_path: Path) -> None:
    """playbooks/waf-image.yml with a stand-in `docker` first on PATH that records its arguments and stdin."""
    fake = tmp_path / "bin"
    fake.mkdir()
    calls, stdin = tmp_path / "calls", tmp_path / "stdin"
    (fake / "docker").write_text(
        "#!/bin/sh\n"
        f'echo "$*" >>{calls}\n'
        f'case "$*" in *" login "*) cat >{stdin};; esac\n'
        f'case "$*" in *" push "*|push*) echo "0.4.0: digest: sha256:{"c" * 64} size: 1";; esac\n',
        encoding="utf-8",
    )
    (fake / "docker").chmod(0o755)
    cfg = {"waf": {"image": OWN, "image_build": {"auth": {"username": "robot", "password": SECRET}}}}
    done = run_action("waf-image", cfg, tmp_path, fake, "-v", TMPDIR=str(tmp_path))
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    lines = calls.read_text(encoding="utf-8").splitlines()
    assert [line.split()[0 if line.startswith(("build", "push")) else 2] for line in lines] == [
        "build",
        "login",
        "push",
    ]
    assert lines[0] == f"build -t {REF} {ROOT / 'waf'}"
    private = lines[1].split()[1]
    assert lines[1] == f"--config {private} login --username robot --password-stdin {OWN['registry']}"
    assert lines[2] == f"--config {private} push {REF}"
    assert stdin.read_text(encoding="utf-8") == SECRET
    assert SECRET not in output
    assert f"Pushed {REF} as sha256:{'c' * 64}" in output
    assert not Path(private).exists(), "the private folder, with the login, is removed"
