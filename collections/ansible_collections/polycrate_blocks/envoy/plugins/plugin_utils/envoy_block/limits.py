"""Kubernetes' and the filesystem's limits on what the plan holds, checked on the built objects themselves, so
every name the block derives (<gateway>-backend-traffic, <block>-waf, ...) and every object a new component
adds is covered without a rule per key: names within their kind's length, file names within 255 bytes,
ConfigMaps within 1 MiB. A problem names the config key whose value went into the name or the data."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from . import artifacts
from .model import Problem

# Names that become DNS labels (Service: an RFC 1035 label; Namespace: an RFC 1123 label); the rest are
# RFC 1123 subdomains.
LABEL_KINDS = frozenset({"Service", "Namespace"})
LABEL_MAX = 63
SUBDOMAIN_MAX = 253
FILE_NAME_MAX = 255  # bytes, most filesystems' limit on one path component
CONFIGMAP_MAX = 1024 * 1024  # bytes of data, the API server's limit
OBJECT_MAX = 1536 * 1024  # etcd's default request limit, for one object


def _leaves(node: Any, parts: list[Any]) -> Iterator[tuple[str, str]]:
    if isinstance(node, str) and node:
        text = "config"
        for part in parts:
            text += f"[{part}]" if isinstance(part, int) else f".{part}"
        yield text, node
    elif isinstance(node, Mapping):
        for key, value in node.items():
            yield from _leaves(value, [*parts, key])
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _leaves(value, [*parts, index])


def source(values: Mapping[str, Any], block_name: str, text: str) -> str:
    """The config key whose value makes up most of `text` (the block's name counts as block.name)."""
    best, size = "block.name", len(block_name) if block_name in text else 0
    for path, value in _leaves(values, []):
        if len(value) > size and value in text:
            best, size = path, len(value)
    return best


def plan_problems(
    objects: Sequence[tuple[str, Mapping[str, Any]]], values: Mapping[str, Any], block_name: str
) -> list[Problem]:
    """`objects`: (file name, manifest) as render writes them."""
    problems: list[Problem] = []
    for file_name, obj in objects:
        kind = str(obj.get("kind"))
        name = str(obj.get("metadata", {}).get("name", ""))
        limit = LABEL_MAX if kind in LABEL_KINDS else SUBDOMAIN_MAX
        if len(name) > limit:
            problems.append(
                Problem(
                    source(values, block_name, name),
                    f"makes the {kind} name {name[:60]}... ({len(name)} characters), above Kubernetes' {limit}; "
                    "shorten it",
                )
            )
        elif (written := artifacts.written_name_bytes(file_name)) > FILE_NAME_MAX:
            problems.append(
                Problem(
                    source(values, block_name, name),
                    f"makes the render's file name {file_name[:60]}... {written} bytes while it is written (its "
                    f"temporary name), above the filesystem's {FILE_NAME_MAX}; shorten it by {written - FILE_NAME_MAX} "
                    "characters or more",
                )
            )
        if kind == "ConfigMap":
            data = obj.get("data") or {}
            size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in data.items())
            if size > CONFIGMAP_MAX:
                biggest = max((str(v) for v in data.values()), key=len, default="")
                at = _largest_source(values, biggest)
                problems.append(
                    Problem(
                        at,
                        f"makes the ConfigMap {name} {size} bytes, above Kubernetes' {CONFIGMAP_MAX} (1 MiB); "
                        "shorten it",
                    )
                )
                continue
        size = len(json.dumps(obj, separators=(",", ":")).encode())
        if size > OBJECT_MAX:
            at = _largest_source(values, json.dumps(obj))
            problems.append(
                Problem(at, f"makes the {kind} {name} {size} bytes, above what the API server stores; shorten it")
            )
    return problems


def _largest_source(values: Mapping[str, Any], text: str) -> str:
    """The config key with the largest value found in `text` (else the largest of all: serialising may have
    escaped it)."""
    leaves = sorted(_leaves(values, []), key=lambda leaf: len(leaf[1]), reverse=True)
    for path, value in leaves:
        if value in text:
            return path
    return leaves[0][0] if leaves else "config"
