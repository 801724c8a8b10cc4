"""Image references from the config's {registry, repository, tag, digest} (schema $defs/image), and the pull
secrets every pod the block causes carries (image.pull_secrets)."""

from __future__ import annotations

from collections.abc import Mapping

from .model import Config


def reference(spec: Mapping[str, str]) -> str:
    """registry/repository:tag, plus @digest when one is pinned (the runtime then pulls by digest)."""
    ref = f"{spec['registry']}/{spec['repository']}:{spec['tag']}"
    return f"{ref}@{spec['digest']}" if spec.get("digest") else ref


def pull_secrets(config: Config) -> list[dict[str, str]]:
    """image.pull_secrets as a pod's imagePullSecrets (empty: the key is left out wherever it would go)."""
    return [{"name": str(name)} for name in config.get("image.pull_secrets")]
