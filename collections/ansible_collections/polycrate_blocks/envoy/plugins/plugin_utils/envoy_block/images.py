"""Image references from the config's {registry, repository, tag, digest} (schema $defs/image)."""

from __future__ import annotations

from collections.abc import Mapping


def reference(spec: Mapping[str, str]) -> str:
    """registry/repository:tag, plus @digest when one is pinned (the runtime then pulls by digest)."""
    ref = f"{spec['registry']}/{spec['repository']}:{spec['tag']}"
    return f"{ref}@{spec['digest']}" if spec.get("digest") else ref
