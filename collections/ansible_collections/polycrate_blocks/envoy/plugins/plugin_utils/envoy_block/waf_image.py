"""The waf-image action (`polycrate run envoy waf-image`, `make waf-image`): build the WAF image from waf/
(waf/Dockerfile, the one definition of the image) with the builder the machine has, and push it to
waf.image.registry/repository:tag.

Pure: from the validated config, the builders found on PATH and the folders the role made, it decides the
commands (build, an optional login, push) or why it must stop before running any; from what the push
printed, what to tell the user. The role runs the commands as given (roles/envoy_waf_image).

Credentials never enter the decision: the login reads the password on stdin (the role passes it under
no_log), and lands in a private folder the role removes afterwards, never in the builder's own store.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from .components import waf

# In the order the builder is looked for when waf.image_build.builder is empty.
BUILDERS = ("docker", "podman", "buildah")
DIGEST = re.compile(r"\bdigest: (sha256:[0-9a-f]{64})\b")


@dataclass(frozen=True)
class ImageBuild:
    """`problems`: why the action must stop before running anything (empty: go on); `builder`, `reference`
    (registry/repository:tag), and the commands as argv: `build` (in the block's folder), `login` (empty: the
    builder's own login is used; its password goes on stdin), `push`; `digest_file`: where the push writes
    the pushed digest ("" when the builder prints it instead: docker)."""

    problems: tuple[str, ...]
    builder: str
    reference: str
    build: tuple[str, ...]
    login: tuple[str, ...]
    push: tuple[str, ...]
    digest_file: str

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def reference(values: Mapping[str, Any]) -> str:
    """Where the image goes: waf.image without its digest (the push makes the digest)."""
    image = values["waf"]["image"]
    return f"{image['registry']}/{image['repository']}:{image['tag']}"


def _chosen(wanted: str, found: Mapping[str, str]) -> tuple[str, str]:
    """(builder, problem): the configured builder if it is on PATH, else the first of BUILDERS that is."""
    if wanted:
        if wanted in found:
            return wanted, ""
        others = ", ".join(b for b in BUILDERS if b in found) or "none of docker, podman, buildah"
        return "", (
            f"config.waf.image_build.builder: {wanted} is not on PATH (found: {others}); install it, or set the "
            "builder to one that is (empty: the first found)"
        )
    for name in BUILDERS:
        if name in found:
            return name, ""
    return "", (
        "no image builder on PATH (looked for docker, podman, buildah): install one, or run the action where one "
        "is (under Polycrate's container mode docker reaches the host's engine through its socket)"
    )


def decide(values: Mapping[str, Any], found: Mapping[str, str], context: str, private_dir: str) -> ImageBuild:
    """The commands that build `context` (waf/) and push it to waf.image, or the problems that stop the action
    first. `found`: builder name -> its path, for those on PATH; `private_dir`: a folder only this run can read,
    for the login and the digest, removed afterwards."""
    settings = values["waf"]["image_build"]
    problems: list[str] = []
    image = values["waf"]["image"]
    if (image["registry"], image["repository"]) == waf.UNPUBLISHED_IMAGE:
        problems.append(
            f"config.waf.image: {'/'.join(waf.UNPUBLISHED_IMAGE)} is the placeholder, not a registry of yours: set "
            "waf.image.registry, waf.image.repository and waf.image.tag to where the image should go (a registry "
            "your nodes pull from), then run waf-image again"
        )
    builder, problem = _chosen(str(settings["builder"]), found)
    if problem:
        problems.append(problem)
    if problems:
        return ImageBuild(tuple(problems), builder, reference(values), (), (), (), "")
    ref, tool = reference(values), found[builder]
    build_args = [f"--build-arg={key.upper()}={value}" for key, value in sorted(settings["build_args"].items())]
    build = (tool, "bud" if builder == "buildah" else "build", "-t", ref, *build_args, context)
    auth = settings["auth"]
    login: tuple[str, ...] = ()
    if builder == "docker":
        config = ("--config", private_dir) if auth["username"] else ()
        if auth["username"]:
            login = (tool, *config, "login", "--username", auth["username"], "--password-stdin", image["registry"])
        return ImageBuild((), builder, ref, build, login, (tool, *config, "push", ref), "")
    authfile = ("--authfile", f"{private_dir}/auth.json") if auth["username"] else ()
    if auth["username"]:
        login = (tool, "login", *authfile, "--username", auth["username"], "--password-stdin", image["registry"])
    digest_file = f"{private_dir}/digest"
    push = (tool, "push", *authfile, "--digestfile", digest_file, ref)
    if builder == "buildah":
        push = (*push, f"docker://{ref}")
    return ImageBuild((), builder, ref, build, login, push, digest_file)


def pushed(values: Mapping[str, Any], push_output: str, digest_text: str) -> str:
    """What the action tells the user after the push: the image, its digest (from the digest file, or as the
    push printed it) and how to pin it; a waf.image.digest that now names another image is called out."""
    digest = digest_text.strip()
    if not digest.startswith("sha256:"):
        match = DIGEST.search(push_output)
        digest = match.group(1) if match else ""
    ref = reference(values)
    if not digest:
        return f"Pushed {ref}. Set waf.enabled: true to run it (its digest was not reported)."
    pinned = str(values["waf"]["image"].get("digest") or "")
    if pinned and pinned != digest:
        return (
            f"Pushed {ref} as {digest}. waf.image.digest is {pinned}, another image: the kubelet pulls by digest, so "
            f"set waf.image.digest: {digest} (or empty it)."
        )
    return f"Pushed {ref} as {digest}. Set waf.enabled: true to run it; waf.image.digest: {digest} pins it."
