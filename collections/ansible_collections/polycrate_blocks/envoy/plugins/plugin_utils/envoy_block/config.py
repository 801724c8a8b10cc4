"""The config as a whole: loading, shape against config.schema.json, effective defaults, and calling each
component's checks in one place, in registry.CHECKS' order (as builder.py calls each component's build).

The rules about one section live in the component that builds it (`check(values, raw)` in components/*),
the rules that relate the default Gateway to what attaches to it in attachments.py. Every problem is
collected with its config path before anything is built, so a user sees all of them at once and nothing
is written or applied on bad input.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import jsonschema

from . import formats, inputs
from .components import monitoring, waf
from .model import Checked, Config, ConfigError, Problem
from .paths import SCHEMA_PATH
from .registry import CHECKS

__all__ = ["Config", "ConfigError", "Problem", "apply_defaults", "load", "load_schema", "shape_problems"]

# Friendly wording for the schema's named string formats, keyed by the $ref they come from.
_FORMAT_HINTS = {
    "dns_label": "a lowercase RFC 1123 label (a-z, 0-9, '-', at most 63 characters)",
    "dns_subdomain": "a lowercase RFC 1123 subdomain (a-z, 0-9, '-', '.')",
    "gatewayclass_name": "a lowercase RFC 1123 subdomain of at most 63 characters (it is also a label value)",
    "optional_dns_subdomain": "empty, or the object's name: a lowercase RFC 1123 subdomain (a-z, 0-9, '-', '.')",
    "hostname": "a lowercase DNS name such as app.example.com or *.example.com",
    "optional_ipv4": "empty, or an IPv4 address such as 192.0.2.10",
    "label_value": "a label value: at most 63 of a-z, A-Z, 0-9, '-', '_', '.', starting and ending alphanumeric",
    "chart_version": "a SemVer chart version such as v1.9.0 or 1.9.0",
    "image_registry": (
        "a registry host with a dot or a port, such as docker.io, registry.example.com or localhost:5000 "
        "(no path: that belongs in repository; a bare name would be read as a Docker Hub namespace)"
    ),
    "image_repository": (
        "a lowercase repository path such as envoyproxy/gateway (a-z, 0-9, '.', '_', '-', separated by '/'; "
        "no registry, tag or digest)"
    ),
    "image_tag": "an image tag such as v1.9.0 (letters, digits, '_', '.', '-', at most 128; no spaces or ':')",
    "image_digest": "empty, or a digest sha256:<64 lowercase hex digits> (EnvoyProxy accepts sha256 only)",
    "rule_tag": "a rule tag such as attack-sqli (no quotes, backslashes or control characters)",
    "http_method": "an upper-case HTTP method such as PUT or M-SEARCH (letters and '-'; CRS compares case-sensitively)",
    "media_type": "a lower-case media type without parameters, such as application/json (no '; charset=...')",
    "duration": "a duration such as 500ms, 30s, 5m or 1h",
    "quantity": "a Kubernetes quantity such as 100m, 256Mi or 1Gi",
    "cidr": "an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8",
}
# Keys that were renamed, by path: what to write instead (the generic "unknown key" would not say). Each
# component names its own.
_MOVED = {**monitoring.RENAMED}
_KEY_HINT = (
    "use a qualified name such as example.com/name or name (an optional DNS prefix and '/', then at most 63 "
    "of a-z, A-Z, 0-9, '-', '_', '.', starting and ending alphanumeric)"
)
# The block name is in every object's instance label and in Service names (<name>-waf): an RFC 1035 label.
_BLOCK_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,57}[a-z0-9])?$")


# Kubernetes' own limits, applied by rule to every key of the schema that does not set a tighter one (so a
# key added later inherits them): integers are int32 (replicas, ports, sizes in Kubernetes objects are), lists,
# maps and strings are bounded so that a hostile config costs little to refuse. A key that needs more says so
# in config.schema.json (waf.extra_directives: up to a ConfigMap's 1 MiB).
INT32_MAX = 2**31 - 1
MAX_ITEMS = 256
MAX_STRING = 4096


def bounded(node: Any) -> Any:
    """The schema with the default limits filled in wherever a node sets none (docs/configuration.md: Limits)."""
    if isinstance(node, list):
        return [bounded(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: bounded(value) for key, value in node.items()}
    kind = out.get("type")
    if kind == "integer":
        out.setdefault("maximum", INT32_MAX)
        out.setdefault("minimum", -INT32_MAX - 1)
    elif kind == "array":
        out.setdefault("maxItems", MAX_ITEMS)
    elif kind == "string" and "enum" not in out:
        out.setdefault("maxLength", MAX_STRING)
    elif kind == "object" and isinstance(out.get("additionalProperties"), dict):
        out.setdefault("maxProperties", MAX_ITEMS)
    return out


@cache
def load_schema() -> dict[str, Any]:
    with SCHEMA_PATH.open(encoding="utf-8") as handle:
        schema: dict[str, Any] = bounded(json.load(handle))
    return schema


def _strict_integer(checker: Any, instance: Any) -> bool:
    """An integer is an int: 2.0 is refused, never truncated or rendered as `2.0` (jsonschema 4 would take it)."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def python_pattern(pattern: str) -> str:
    """A schema `pattern` (ECMA-262, where `$` is the end of the value) for Python's `re`, where `$` also matches
    before a final newline: every `$` anchor becomes `\\Z`. Without it "attack-sqli\\n" passed rule_tag's
    ^...$ and the WAF refused its settings file, and "v1.9.1\\n" passed image_tag (Polycrate's gojsonschema
    and the WAF's Go regexps, like ECMA, refuse both)."""
    out, escaped, in_class = [], False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            out.append(r"\Z")
            continue
        out.append(char)
    return "".join(out)


@cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(python_pattern(pattern))


def _pattern(validator: Any, pattern: str, instance: Any, schema: Mapping[str, Any]) -> Iterator[Any]:
    """The `pattern` keyword with the schema's meaning of `$` (python_pattern); jsonschema's own wording."""
    if validator.is_type(instance, "string") and not _compiled(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


_Validator = jsonschema.validators.extend(
    jsonschema.Draft7Validator,
    validators={"pattern": _pattern},
    type_checker=jsonschema.Draft7Validator.TYPE_CHECKER.redefine("integer", _strict_integer),
)


def _resolve(schema: Mapping[str, Any], node: Mapping[str, Any]) -> dict[str, Any]:
    """Merge a `$ref` into its sibling keywords (only local `#/$defs/...` refs are used)."""
    if "$ref" not in node:
        return dict(node)
    target: Any = schema
    for part in node["$ref"].removeprefix("#/").split("/"):
        target = target[part]
    merged = dict(_resolve(schema, target))
    merged.update({k: v for k, v in node.items() if k != "$ref"})
    return merged


def _drop_nulls(value: Any) -> Any:
    """YAML `key:` with nothing after it is null; treat it as not set rather than as a type error."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


def _deep_fill(value: dict[str, Any], default: Mapping[str, Any]) -> dict[str, Any]:
    result = dict(value)
    for key, fallback in default.items():
        if key not in result:
            result[key] = copy.deepcopy(fallback)
        elif isinstance(fallback, Mapping) and isinstance(result[key], dict):
            result[key] = _deep_fill(result[key], fallback)
    return result


def apply_defaults(value: Any, node: Mapping[str, Any], schema: Mapping[str, Any] | None = None) -> Any:
    """Return `value` with every missing property filled from the schema's `default`, recursively."""
    root = schema if schema is not None else node
    node = _resolve(root, node)
    if isinstance(value, dict) and "properties" in node:
        result = dict(value)
        for key, sub in node["properties"].items():
            sub_resolved = _resolve(root, sub)
            default = sub_resolved.get("default")
            if key not in result and "default" in sub_resolved:
                result[key] = copy.deepcopy(default)
            elif isinstance(default, dict) and isinstance(result.get(key), dict):
                # An object default (image.proxy, data_plane.resources) fills the keys the user left out.
                result[key] = _deep_fill(result[key], default)
            if key in result:
                result[key] = apply_defaults(result[key], sub_resolved, root)
        return result
    if isinstance(value, list) and isinstance(node.get("items"), Mapping):
        return [apply_defaults(item, node["items"], root) for item in value]
    return value


def _path(parts: Iterator[Any] | list[Any]) -> str:
    text = "config"
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def _child(node: Mapping[str, Any], part: Any) -> Any:
    """The unresolved schema of `part` below `node`: a list item, a property, or a map's value."""
    if isinstance(part, int):
        return node.get("items", {})
    return node.get("properties", {}).get(part, node.get("additionalProperties", {}))


def _schema_node_at(schema: Mapping[str, Any], parts: list[Any]) -> dict[str, Any]:
    node = _resolve(schema, schema)
    for part in parts:
        child = _child(node, part)
        node = _resolve(schema, child if isinstance(child, Mapping) else {})
    return node


def _format_hint(schema: Mapping[str, Any], parts: list[Any]) -> str | None:
    parent = _schema_node_at(schema, parts[:-1]) if parts else {}
    raw = _child(parent, parts[-1]) if parts else {}
    ref = raw.get("$ref", "") if isinstance(raw, Mapping) else ""
    return _FORMAT_HINTS.get(ref.rsplit("/", 1)[-1])


def _is_secret(parts: list[Any]) -> bool:
    """Values under chart.auth and waf.image_build.auth are never echoed back in an error message."""
    return parts[:2] == ["chart", "auth"] or parts[:3] == ["waf", "image_build", "auth"]


def _shown(parts: list[Any], value: Any) -> str:
    """A value as a message repeats it: capped (inputs.shown), and never a secret or a URL with credentials,
    also not one nested in a list or mapping given where another type belongs (a type error shows the whole
    value)."""
    if _is_secret(parts) or _carries_credentials(value):
        return "the value"
    return inputs.shown(value)


def _carries_credentials(value: Any) -> bool:
    if isinstance(value, str):
        return inputs.url_credentials(value) is not None
    if isinstance(value, dict):
        return any(_carries_credentials(k) or _carries_credentials(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_carries_credentials(v) for v in value)
    return False


def _format_checker(schema: Mapping[str, Any]) -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker(formats=())
    for name, check in formats.checks(schema["$defs"]).items():

        def strings_only(value: Any, check: Any = check) -> bool:
            if isinstance(value, str):  # other types get their own type error
                check(value)
            return True

        checker.checks(name, raises=ValueError)(strings_only)
    return checker


_INTEGER = re.compile(r"[-+]?[0-9]+")
_NUMBER = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
_YAML11_BOOLS = {"yes": "true", "on": "true", "y": "true", "no": "false", "off": "false", "n": "false"}


def _type_fix(expected: Any, value: Any) -> str:
    """What to write instead of a value of the wrong type ("; write 443 without quotes"), or ""."""
    text = value.strip() if isinstance(value, str) else None
    if expected == "integer" and text is not None and _INTEGER.fullmatch(text):
        return f"; write {int(text)} without quotes"
    if expected == "number" and text is not None and _NUMBER.fullmatch(text):
        return f"; write {text} without quotes"
    if expected == "boolean" and text is not None:
        if text.lower() in ("true", "false"):
            return f"; write {text.lower()} without quotes"
        if text.lower() in _YAML11_BOOLS:
            return f"; write {_YAML11_BOOLS[text.lower()]} (Polycrate's YAML reads {text} as a string, not a boolean)"
        return "; write true or false"
    if expected == "string" and isinstance(value, (bool, int, float)):
        literal = json.dumps(value)
        return (
            f'; put it in quotes as you mean it, e.g. "{literal}" (unquoted, YAML reads it as a {type(value).__name__})'
        )
    if expected == "object" and isinstance(value, (str, list)):
        return "; write it as a mapping: each key on its own line below, indented, as key: value"
    if expected == "array" and isinstance(value, (str, dict)):
        return "; write it as a list: each item on its own line below, indented, starting with '- '"
    return ""


_LIMIT_WORDS = {"maxLength": "characters", "maxItems": "items", "maxProperties": "keys"}


def shape_problems(raw: Any, schema: Mapping[str, Any]) -> list[Problem]:
    """Check types, enums, ranges, formats and unknown keys against config.schema.json; one Problem per finding,
    and one per value: a value failing both its pattern and its format is reported by the format's fix."""
    problems: list[Problem] = []
    formatted: set[str] = set()
    # Draft 7: the newest draft both jsonschema 3.2 (Polycrate's image) and Polycrate's gojsonschema implement.
    validator = _Validator(schema, format_checker=_format_checker(schema))
    errors = sorted(validator.iter_errors(raw), key=lambda e: e.validator != "format")
    # A value past its length limit is reported for that alone (its pattern or format would repeat it).
    too_long = {_path(list(e.absolute_path)) for e in errors if e.validator == "maxLength"}
    for error in errors:
        parts = list(error.absolute_path)
        if _path(parts) in too_long and error.validator in ("format", "pattern"):
            continue
        if "propertyNames" in error.schema_path:
            problems.append(Problem(_path(parts), f"key {inputs.shown(error.instance)} is not valid; {_KEY_HINT}"))
            continue
        if error.validator == "format":
            formatted.add(_path(parts))
            problems.append(Problem(_path(parts), f"{_shown(parts, error.instance)} is not valid; {error.cause}"))
            continue
        if error.validator == "pattern" and _path(parts) in formatted:
            continue
        if error.validator == "additionalProperties":
            known = sorted(_schema_node_at(schema, parts).get("properties", {}))
            for key in sorted(set(error.instance) - set(known)):
                close = difflib.get_close_matches(key, known, n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                if moved := _MOVED.get(_path([*parts, key])):
                    problems.append(Problem(_path([*parts, key]), moved))
                    continue
                problems.append(
                    Problem(_path([*parts, key]), f"unknown key; {hint}known keys here: {', '.join(known)}")
                )
        elif error.validator == "type":
            shown = "" if _is_secret(parts) else f" {_shown(parts, error.instance)}"
            fix = "" if _is_secret(parts) else _type_fix(error.validator_value, error.instance)
            problems.append(
                Problem(
                    _path(parts),
                    f"must be of type {error.validator_value}, got {type(error.instance).__name__}{shown}{fix}",
                )
            )
        elif error.validator == "enum":
            choices = ", ".join(str(c) for c in error.validator_value)
            problems.append(
                Problem(_path(parts), f"{_shown(parts, error.instance)} is not allowed; use one of: {choices}")
            )
        elif _is_secret(parts):
            problems.append(Problem(_path(parts), f"invalid value ({error.validator} check failed)"))
        elif error.validator == "pattern":
            hint = _format_hint(schema, parts) or f"a string matching {error.validator_value}"
            problems.append(Problem(_path(parts), f"{_shown(parts, error.instance)} is not valid; use {hint}"))
        elif error.validator == "required":
            problems.append(Problem(_path(parts), f"{error.message}; add it"))
        elif error.validator in ("minItems", "minLength"):
            # jsonschema 4's wording; 3.2 (Polycrate's image) says "is too short" for an empty value too
            short = "should be non-empty" if error.validator_value == 1 and not error.instance else "is too short"
            problems.append(Problem(_path(parts), f"{_shown(parts, error.instance)} {short}"))
        elif error.validator in _LIMIT_WORDS:
            unit = _LIMIT_WORDS[error.validator]
            problems.append(
                Problem(
                    _path(parts), f"{_shown(parts, error.instance)} is too long: at most {error.validator_value} {unit}"
                )
            )
        else:
            message = error.message.replace(repr(error.instance), _shown(parts, error.instance))
            problems.append(Problem(_path(parts), message))
    return problems


def _cut_oversized(value: Any, node: Mapping[str, Any], schema: Mapping[str, Any], parts: list[Any]) -> list[Problem]:
    """Lists longer than their maxItems, reported and cut to it in place before the schema check: validating
    10,000 listeners item by item costs seconds, and nothing after the limit would be used anyway."""
    node = _resolve(schema, node)
    problems: list[Problem] = []
    if isinstance(value, list):
        limit = node.get("maxItems")
        if isinstance(limit, int) and len(value) > limit:
            problems.append(Problem(_path(parts), f"{inputs.shown(value)} is too long: at most {limit} items"))
            del value[limit:]
        items = node.get("items")
        if isinstance(items, Mapping):
            for index, item in enumerate(value):
                problems += _cut_oversized(item, items, schema, [*parts, index])
    elif isinstance(value, dict):
        for key, item in value.items():
            child = _child(node, key)
            if isinstance(child, Mapping):
                problems += _cut_oversized(item, child, schema, [*parts, key])
    return problems


def _prune(raw: Any, parts: list[Any]) -> None:
    """Remove the value at `parts` from `raw` (its nearest mapping key), so its default stands in for it."""
    keys = list(parts)
    while keys and isinstance(keys[-1], int):
        keys.pop()
    if not keys:
        return
    node = raw
    for part in keys[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return
    if isinstance(node, dict):
        node.pop(keys[-1], None)


def _parts(path: str) -> list[Any]:
    """_path's inverse: config.a.b[2].c -> ["a", "b", 2, "c"] (keys with dots are not split back: good enough
    for pruning, which stops at the nearest mapping key)."""
    parts: list[Any] = []
    for piece in re.findall(r"\.([^.\[]+)|\[(\d+)\]", path.removeprefix("config")):
        parts.append(piece[0] if piece[0] else int(piece[1]))
    return parts


def broken_paths(raw: Any, schema: Mapping[str, Any]) -> list[list[Any]]:
    """Where the shape check found a value it cannot use: the key path of each (an unknown key's own path)."""
    found: list[list[Any]] = []
    for error in _Validator(schema, format_checker=_format_checker(schema)).iter_errors(raw):
        parts = list(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = _schema_node_at(schema, parts).get("properties", {})
            found += [[*parts, key] for key in error.instance if key not in known]
        elif "propertyNames" in error.schema_path:
            found.append([*parts, error.instance])
        else:
            found.append(parts)
    return found


def _reads(problem: Problem, broken: list[str]) -> bool:
    """Whether a component's problem comes from a value the shape check already refused (its path, or a
    message naming it): such a problem would describe the default that stood in for the broken value."""
    for path in broken:
        short = path.partition(".")[2]
        if problem.path == path or problem.path.startswith((path + ".", path + "[")):
            return True
        # A rule about the mapping that holds the broken value (chart.auth: both or neither), below a section.
        if problem.path.count(".") >= 2 and path.startswith((problem.path + ".", problem.path + "[")):
            return True
        if ("." in short or "[" in short) and re.search(rf"(?<![\w.]){re.escape(short)}(?![\w])", problem.message):
            return True
    return False


def check_components(values: Mapping[str, Any], raw: Mapping[str, Any], tolerate: bool = False) -> Checked:
    """Every component's checks. `values` has defaults applied; `raw` is what the user wrote. With `tolerate`
    (the config already has shape problems) a component whose rules trip over a badly shaped value is skipped
    alone: the others still report theirs."""
    problems: list[Problem] = []
    warnings: list[str] = []
    for component_check in CHECKS:
        try:
            found, warned = component_check(values, raw)
        except (KeyError, TypeError, AttributeError, ValueError, IndexError, OverflowError, ZeroDivisionError):
            if not tolerate:
                raise
            continue
        problems += found
        warnings += warned
    return problems, warnings


def generic_problems(values: Mapping[str, Any], reported: set[str]) -> list[Problem]:
    """The rules that hold for every section, so a key added later inherits them: a request never above its
    limit wherever a `resources` mapping sets both, and no credentials in any URL (they belong in chart.auth,
    which is never written to artifacts)."""
    problems: list[Problem] = []

    def walk(node: Any, parts: list[Any]) -> None:
        if _is_secret(parts):
            return
        if isinstance(node, str):
            what = inputs.url_credentials(node)
            if what:
                problems.append(
                    Problem(
                        _path(parts),
                        f"this URL carries {what}; credentials are never written into the config or the render: "
                        "remove them and set chart.auth (username and password) for the chart's registry",
                    )
                )
            return
        if isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, [*parts, index])
            return
        if not isinstance(node, dict):
            return
        requests, limits = node.get("requests"), node.get("limits")
        if isinstance(requests, dict) and isinstance(limits, dict):
            for key in sorted(set(requests) & set(limits)):
                at = _path([*parts, "requests", key])
                try:
                    over = formats.quantity_bytes(requests[key]) > formats.quantity_bytes(limits[key])
                except (ValueError, TypeError):
                    continue
                if over and at not in reported:
                    limit_path = ".".join(str(part) for part in [*parts, "limits", key])
                    problems.append(
                        Problem(
                            at,
                            f"{requests[key]} is above the limit {limits[key]} ({limit_path}): Kubernetes rejects "
                            f"such a pod; lower the request, or raise {limit_path}",
                        )
                    )
        for key, value in node.items():
            walk(value, [*parts, key])

    walk(values, [])
    return problems


def load(block: Mapping[str, Any]) -> Config:
    """Validate `block` (name, version, config as Polycrate passes them) and return the effective Config.

    Raises ConfigError listing every problem: the shape's, and every component's rules (a value the shape
    refused is left out, its default standing in, and the rules naming it are not reported).
    """
    schema = load_schema()
    block, refused = inputs.plain(block)
    raw_config = block.get("config")
    if raw_config is None:
        raw_config = {}
    if not isinstance(raw_config, Mapping):
        raise ConfigError([Problem("config", f"must be a mapping, got {type(raw_config).__name__}")])
    raw = _drop_nulls(dict(raw_config))
    oversized = _cut_oversized(raw, schema, schema, [])
    problems = refused + oversized + shape_problems(raw, schema)
    block_name = str(block.get("name") or "envoy")
    if not _BLOCK_NAME.match(block_name):
        problems.append(
            Problem(
                "block.name",
                f"{inputs.shown(block_name)} cannot name Kubernetes objects (it is the instance label and part of "
                "Service names); rename the block in workspace.poly to a lowercase RFC 1035 label of at most 59 "
                "characters (a-z, 0-9, '-', starting with a letter), e.g. envoy-edge",
            )
        )
    broken: list[str] = []
    if problems:
        # Every other rule still runs: on the config without the values the shape refused.
        raw = copy.deepcopy(raw)
        broken = [problem.path for problem in [*refused, *oversized]]
        for problem in oversized:  # cut to the limit, but still not what the user meant: left out
            _prune(raw, _parts(problem.path))
        for _ in range(4):  # pruning a required key breaks its mapping: that goes next, up to the section
            found = broken_paths(raw, schema)
            if not found:
                break
            for parts in sorted(found, key=len, reverse=True):
                _prune(raw, parts)
            broken += [_path(parts) for parts in found]
        else:
            raise ConfigError(problems)
    values = apply_defaults(raw, schema)
    tolerate = bool(problems)
    try:
        values["waf"]["resources"] = waf.resources(values["waf"])  # sized from its workers before the checks
    except (KeyError, TypeError, AttributeError, ValueError, OverflowError):
        if not tolerate:
            raise
    checked, warnings = check_components(values, raw, tolerate)
    checked = [problem for problem in checked if not _reads(problem, broken)]
    checked += generic_problems(values, {problem.path for problem in [*problems, *checked]})
    problems += [problem for problem in checked if not _reads(problem, broken)]
    if problems:
        raise ConfigError(problems)
    if unpublished := waf.unpublished_image(values):
        warnings.append(f"{unpublished} (install and plan refuse it)")
    return Config(
        values=values,
        block_name=block_name,
        block_version=str(block.get("version") or "0.0.0"),
        warnings=tuple(warnings),
    )
