"""The CRD verification gate: validate custom resources the way a kube-apiserver would.

For each object: find its CRD version, convert the openAPIV3Schema to JSON Schema (unknown fields are
rejected unless the schema preserves them), apply structural defaults, validate, then evaluate every
`x-kubernetes-validations` CEL rule on the defaulted object. A rule that cannot be evaluated raises
GateError: it is never counted as a pass.

What this does not emulate (a real apiserver does): the CEL cost budget, `optionalOldSelf`, string
`format` checks, and transition rules (rules on `oldSelf` only run on update; every object here is a create).
The transition rules of the kinds the block renders are listed by `transition_rules`; the one there is
(GatewayClass spec.controllerName immutable) runs on the real API server in tests/cluster/test_lifecycle.py,
and tests/gate/test_transition_rules.py fails when the CRDs bring another.

CEL is imported where it is used: Polycrate's image Python (`make unit-image`) has no CEL engine, yet imports
the tests that use the gate to read their not_in_image mark.
"""

from __future__ import annotations

import copy
import ipaddress
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

CEL_RESERVED = {
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
}
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


class GateError(RuntimeError):
    """The gate could not decide (unknown kind, a CEL rule that fails to evaluate): never a pass."""


@dataclass
class Result:
    errors: list[str] = field(default_factory=list)
    rules_evaluated: int = 0
    transition_rules_skipped: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass(frozen=True)
class CRDVersion:
    group: str
    kind: str
    version: str
    namespaced: bool
    schema: dict[str, Any]


def escape_property(name: str) -> str:
    """Kubernetes' CEL escaping of property names (KEP-2876)."""
    if name in CEL_RESERVED:
        return f"__{name}__"
    return (
        name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")
    )


def to_json_schema(node: Any, in_combinator: bool = False) -> Any:
    """Structural OpenAPI v3 -> JSON Schema with the apiserver's unknown-field rule."""
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "properties":
            out[key] = {name: to_json_schema(sub, in_combinator) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, Mapping):
            out[key] = to_json_schema(value, in_combinator)
        elif key in ("allOf", "anyOf", "oneOf"):
            # Branch `properties` are constraints, not the structural schema: never strict there.
            out[key] = [to_json_schema(sub, True) for sub in value]
        elif key == "not":
            out[key] = to_json_schema(value, True)
        elif key.startswith("x-kubernetes-") or key in ("description", "nullable", "example", "externalDocs", "format"):
            continue
        else:
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out.pop("type", None)
        out.setdefault("anyOf", []).extend([{"type": "integer"}, {"type": "string"}])
    if node.get("nullable") and "type" in out:
        out["type"] = [out["type"], "null"]
    preserve = node.get("x-kubernetes-preserve-unknown-fields")
    if not in_combinator and not preserve and node.get("type") == "object" and "additionalProperties" not in node:
        # The apiserver prunes unknown fields; a pruned field is a silent misconfiguration, so fail.
        out["additionalProperties"] = False
    return out


def apply_defaults(value: Any, schema: Mapping[str, Any]) -> Any:
    """Structural defaulting as the apiserver does it: fill missing properties that carry a default."""
    if isinstance(value, dict):
        result = dict(value)
        for name, sub in schema.get("properties", {}).items():
            if name not in result and "default" in sub:
                result[name] = copy.deepcopy(sub["default"])
            if name in result:
                result[name] = apply_defaults(result[name], sub)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            known = set(schema.get("properties", {}))
            for name, item in result.items():
                if name not in known:
                    result[name] = apply_defaults(item, extra)
        return result
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [apply_defaults(item, schema["items"]) for item in value]
    return value


def _cel_value(value: Any, schema: Mapping[str, Any]) -> Any:
    """The object as CEL sees it: schema properties escaped, map keys kept."""
    if isinstance(value, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        out: dict[str, Any] = {}
        for name, sub in value.items():
            if name in props:
                out[escape_property(name)] = _cel_value(sub, props[name])
            else:
                out[name] = _cel_value(sub, extra if isinstance(extra, Mapping) else {})
        return out
    if isinstance(value, list):
        return [_cel_value(item, schema.get("items", {})) for item in value]
    return value


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _validate_format(fmt: str, text: str) -> list[str] | None:
    if fmt == "dns1123Label":
        return None if len(text) <= 63 and _DNS1123_LABEL.match(text) else [f"{text!r} is not a DNS-1123 label"]
    raise GateError(f"CEL format library {fmt!r} is not shimmed")


def _context(self_value: Any) -> Any:
    import cel

    ctx = cel.Context()
    # Only the Kubernetes CEL library functions these CRDs use; anything else fails evaluation loudly.
    ctx.add_function("lowerAscii", lambda s: s.lower())
    ctx.add_function("upperAscii", lambda s: s.upper())
    # Kubernetes CEL strings library: Gateway.spec.infrastructure.annotations keys use key.split("/").
    ctx.add_function("split", lambda s, sep: s.split(sep))
    ctx.add_function("isIP", _is_ip)
    ctx.add_function("format.dns1123Label", lambda: "dns1123Label")
    ctx.add_function("validate", _validate_format)
    ctx.add_variable("self", self_value)
    return ctx


@cache
def _compiled(rule: str) -> Any:
    import cel

    return cel.compile(rule)


def _evaluate_rules(value: Any, schema: Mapping[str, Any], path: str, result: Result) -> None:
    for rule in schema.get("x-kubernetes-validations", []) or []:
        text = rule["rule"]
        if "oldSelf" in text:
            result.transition_rules_skipped += 1
            continue
        try:
            outcome = _compiled(text).execute(_context(_cel_value(value, schema)))
        except KeyError as exc:
            # "no such key": the apiserver fails validation with the evaluation error, so do we.
            result.rules_evaluated += 1
            result.errors.append(f"{path}: rule {text!r} failed to evaluate: no such key {exc}")
            continue
        except Exception as exc:
            # Anything else (an unshimmed function, a type the engine lacks) means: cannot decide.
            raise GateError(f"{path}: cannot evaluate CEL rule {text!r}: {exc}") from exc
        result.rules_evaluated += 1
        if outcome is not True:
            message = rule.get("message") or rule.get("messageExpression") or f"failed rule: {text}"
            result.errors.append(f"{path}: {message}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        for name, sub in value.items():
            if name in props:
                _evaluate_rules(sub, props[name], f"{path}.{name}", result)
            elif isinstance(extra, Mapping):
                _evaluate_rules(sub, extra, f"{path}[{name}]", result)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            _evaluate_rules(item, schema["items"], f"{path}[{index}]", result)


def transition_rules(schema: Mapping[str, Any], path: str = "") -> list[tuple[str, str]]:
    """(path, rule) of every CEL rule in `schema` that reads `oldSelf`: the apiserver runs these on update only."""
    found = [
        (path or "<root>", str(rule["rule"]))
        for rule in schema.get("x-kubernetes-validations", []) or []
        if "oldSelf" in rule["rule"]
    ]
    for name, sub in (schema.get("properties") or {}).items():
        found += transition_rules(sub, f"{path}.{name}" if path else name)
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), Mapping):
            found += transition_rules(schema[key], f"{path}[]")
    return found


def _list_type_errors(value: Any, schema: Mapping[str, Any], path: str) -> list[str]:
    """x-kubernetes-list-type set/map uniqueness, which JSON Schema does not express."""
    errors: list[str] = []
    if isinstance(value, list):
        list_type = schema.get("x-kubernetes-list-type")
        if list_type == "set" and len({repr(v) for v in value}) != len(value):
            errors.append(f"{path}: duplicate entries in a set list")
        if list_type == "map":
            keys = schema.get("x-kubernetes-list-map-keys", [])
            seen = [tuple(item.get(k) for k in keys) for item in value if isinstance(item, dict)]
            if len(set(seen)) != len(seen):
                errors.append(f"{path}: duplicate map-list keys {keys}")
        for index, item in enumerate(value):
            errors += _list_type_errors(item, schema.get("items", {}), f"{path}[{index}]")
    elif isinstance(value, dict):
        props = schema.get("properties", {})
        for name, sub in value.items():
            if name in props:
                errors += _list_type_errors(sub, props[name], f"{path}.{name}")
    return errors


def metadata_errors(obj: Mapping[str, Any], namespaced: bool) -> list[str]:
    """The apiserver's Go-side ObjectMeta checks that matter for rendered objects."""
    errors: list[str] = []
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    if not name or len(name) > 253 or not _DNS1123_SUBDOMAIN.match(name):
        errors.append(f"metadata.name: {name!r} is not a DNS-1123 subdomain")
    if namespaced and not meta.get("namespace"):
        errors.append("metadata.namespace: required for a namespaced kind")
    if not namespaced and meta.get("namespace"):
        errors.append("metadata.namespace: must not be set on a cluster-scoped kind")
    for key, val in (meta.get("labels") or {}).items():
        prefix, _, label = key.rpartition("/")
        if (prefix and not _DNS1123_SUBDOMAIN.match(prefix)) or len(label) > 63 or not _LABEL_NAME.match(label):
            errors.append(f"metadata.labels: invalid key {key!r}")
        if not isinstance(val, str) or len(val) > 63 or not _LABEL_VALUE.match(val):
            errors.append(f"metadata.labels[{key}]: invalid value {val!r}")
    annotations = meta.get("annotations") or {}
    if sum(len(k) + len(str(v)) for k, v in annotations.items()) > 256 * 1024:
        errors.append("metadata.annotations: total size over 256 KiB")
    return errors


class CRDGate:
    """Validates custom resources against a set of real CRD files."""

    def __init__(self, crd_files: Iterable[Path]) -> None:
        self.versions: dict[tuple[str, str, str], CRDVersion] = {}
        self._validators: dict[tuple[str, str, str], jsonschema.Draft202012Validator] = {}
        for path in crd_files:
            with path.open(encoding="utf-8") as handle:
                for doc in yaml.load_all(handle, Loader=yaml.CSafeLoader):
                    if doc and doc.get("kind") == "CustomResourceDefinition":
                        self.add_crd(doc)

    def add_crd(self, crd: Mapping[str, Any]) -> None:
        spec = crd["spec"]
        for version in spec["versions"]:
            if not version.get("served", True):
                continue
            key = (spec["group"], version["name"], spec["names"]["kind"])
            self.versions[key] = CRDVersion(
                group=spec["group"],
                kind=spec["names"]["kind"],
                version=version["name"],
                namespaced=spec["scope"] == "Namespaced",
                schema=version["schema"]["openAPIV3Schema"],
            )

    def knows(self, obj: Mapping[str, Any]) -> bool:
        return self._key(obj) in self.versions

    @staticmethod
    def _key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
        group, _, version = str(obj["apiVersion"]).rpartition("/")
        return group, version, str(obj["kind"])

    def _validator(self, key: tuple[str, str, str]) -> jsonschema.Draft202012Validator:
        if key not in self._validators:
            schema = to_json_schema(self.versions[key].schema)
            # metadata is validated by metadata_errors, as the apiserver does in Go.
            schema.setdefault("properties", {})["metadata"] = {"type": "object"}
            self._validators[key] = jsonschema.Draft202012Validator(schema)
        return self._validators[key]

    def validate(self, obj: Mapping[str, Any]) -> Result:
        key = self._key(obj)
        if key not in self.versions:
            raise GateError(f"no served CRD version for {key}: a cluster would reject {obj.get('kind')}")
        crd = self.versions[key]
        result = Result()
        result.errors += metadata_errors(obj, crd.namespaced)
        defaulted = apply_defaults(dict(obj), crd.schema)
        for error in self._validator(key).iter_errors(defaulted):
            where = ".".join(str(p) for p in error.absolute_path) or "<root>"
            result.errors.append(f"{where}: {error.message}")
        result.errors += _list_type_errors(defaulted, crd.schema, "<root>")
        if result.errors:
            return result  # CEL on a structurally invalid object is meaningless (the apiserver stops too).
        _evaluate_rules(defaulted, crd.schema, "<root>", result)
        return result
