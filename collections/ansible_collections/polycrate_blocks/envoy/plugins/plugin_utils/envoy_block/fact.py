"""Reading the plan back from its fact (Plan.to_dict, after Ansible and JSON): the checks every owner's
`from_dict` shares. Each names the path it refuses, so a stale or hand-edited `envoy_config_plan` stops the
action with where it differs, never deep inside a decision as a KeyError."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any


def _what(value: object) -> str:
    return "null" if value is None else type(value).__name__


def fields(
    data: object, path: str, required: Iterable[str], optional: Iterable[str] = (), *, closed: bool = True
) -> Mapping[str, Any]:
    """`data` as a mapping holding every required key and, when `closed`, nothing else but the optional ones."""
    if not isinstance(data, Mapping):
        raise ValueError(f"{path}: expected a mapping, got {_what(data)}")
    wanted, allowed = list(required), set(optional)
    if missing := [key for key in wanted if key not in data]:
        raise ValueError(f"{path}: missing key(s) {', '.join(missing)}")
    if closed and (unknown := sorted(str(key) for key in data if key not in wanted and key not in allowed)):
        raise ValueError(f"{path}: unknown key(s) {', '.join(unknown)}")
    return data


def string(data: Mapping[str, Any], key: str, path: str) -> str:
    value = data[key]
    if not isinstance(value, str):
        raise ValueError(f"{path}.{key}: expected a string, got {_what(value)}")
    return value


def optional_string(data: Mapping[str, Any], key: str, path: str) -> str | None:
    return None if data[key] is None else string(data, key, path)


def boolean(data: Mapping[str, Any], key: str, path: str) -> bool:
    value = data[key]
    if not isinstance(value, bool):
        raise ValueError(f"{path}.{key}: expected a boolean, got {_what(value)}")
    return value


def integer(data: Mapping[str, Any], key: str, path: str) -> int:
    value = data[key]
    # bool is an int to Python, not to the plan: `timeout: true` is a wrong type, not 1.
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"{path}.{key}: expected an integer, got {_what(value)}")
    return value


def mapping(data: Mapping[str, Any], key: str, path: str) -> dict[str, Any]:
    value = data[key]
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}.{key}: expected a mapping, got {_what(value)}")
    # A copy the typed plan owns: the caller's fact may be reused (and a decision must not see it change).
    return dict(json.loads(json.dumps(value)))


def string_list(data: Mapping[str, Any], key: str, path: str) -> list[str]:
    value = data[key]
    if not isinstance(value, list):
        raise ValueError(f"{path}.{key}: expected a list, got {_what(value)}")
    for index, item in enumerate(value):
        if not isinstance(item, str):
            raise ValueError(f"{path}.{key}[{index}]: expected a string, got {_what(item)}")
    return list(value)


def string_map(data: Mapping[str, Any], key: str, path: str) -> dict[str, str]:
    value = data[key]
    if not isinstance(value, Mapping):
        raise ValueError(f"{path}.{key}: expected a mapping, got {_what(value)}")
    for name, item in value.items():
        if not isinstance(name, str) or not isinstance(item, str):
            raise ValueError(f"{path}.{key}.{name}: expected a string, got {_what(item)}")
    return dict(value)


def canonical(value: Any) -> str:
    """JSON as the comparison sees it: key order aside, exact (true is not 1, 1 is not 1.0 or "1")."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def first_difference(found: Any, want: Any, path: str) -> str | None:
    """The path of the first place `found` differs from `want` (None when they are equal), depth first."""
    if isinstance(found, Mapping) and isinstance(want, Mapping):
        for key in [*want, *(k for k in found if k not in want)]:
            if key not in found or key not in want:
                return f"{path}.{key}"
            if where := first_difference(found[key], want[key], f"{path}.{key}"):
                return where
        return None
    if isinstance(found, list) and isinstance(want, list) and len(found) == len(want):
        for index, (a, b) in enumerate(zip(found, want, strict=True)):
            if where := first_difference(a, b, f"{path}[{index}]"):
                return where
        return None
    return None if canonical(found) == canonical(want) else path


def derived(found: Any, want: Any, path: str) -> None:
    """A field the fact carries but the plan computes (a digest, a rank, a file name): recomputed, it must be
    what the fact says, else the fact is stale (an older block wrote it) or was altered."""
    if where := first_difference(found, want, path):
        raise ValueError(
            f"{where}: not what the plan derives from its other fields; a stale or altered plan fact "
            "(build the plan again: run the envoy_config role)"
        )
