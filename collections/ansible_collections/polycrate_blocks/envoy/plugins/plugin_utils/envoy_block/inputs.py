"""What the block reads from outside, before any rule looks at it: YAML as Polycrate reads it (bounded), the
block variable as plain JSON data, how a message shows a value, and URLs that carry credentials.

A hostile or careless input must cost little and fail with one line: a size cap before parsing, an alias
expansion cap while composing (a billion-laughs document never expands), duplicate keys refused (Polycrate's
YAML library refuses them: "mapping key already defined"), only the YAML 1.1 core tags (no Python objects),
a nesting cap, and a mapping at the top.
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import yaml

from .model import Problem

MAX_BYTES = 4 * 2**20  # a workspace file or override; the block's whole config is far smaller
MAX_NODES = 200_000  # nodes after alias expansion: a billion-laughs document stops here, not in memory
MAX_DEPTH = 64  # nesting: the schema's deepest key is 6 levels down
SHOWN = 80  # characters of a value a message repeats

# Tags the safe loader resolves by itself (YAML 1.1 core); anything else (!!python/..., !custom) is refused.
_CORE_TAGS = {
    f"tag:yaml.org,2002:{name}"
    for name in ("null", "bool", "int", "float", "str", "seq", "map", "timestamp", "binary", "merge", "set", "omap")
}


class InputError(ValueError):
    """Input the block refuses to read at all; the message is one line naming where and why."""


def shown(value: Any) -> str:
    """`value` as a message repeats it: its repr, cut to SHOWN characters with its size when longer."""
    text = repr(value)
    if len(text) <= SHOWN:
        return text
    if isinstance(value, (list, dict)):
        size, unit = len(value), "items"
    elif isinstance(value, (str, bytes)):
        size, unit = len(value), "characters" if isinstance(value, str) else "bytes"
    else:
        size, unit = len(text), "characters"
    return f"{text[:SHOWN]}... ({size} {unit})"


class _Loader(yaml.SafeLoader):
    """SafeLoader that counts and bounds what it builds, and refuses duplicate keys and unknown tags."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._nodes = 0

    def _count(self, node: yaml.Node, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise InputError(f"{_mark(node)}: nested more than {MAX_DEPTH} levels deep")
        self._nodes += 1
        if self._nodes > MAX_NODES:
            raise InputError(
                f"{_mark(node)}: more than {MAX_NODES} values once aliases are expanded (an alias bomb?); "
                "write the values out, or use fewer aliases"
            )
        if node.tag not in _CORE_TAGS:
            raise InputError(f"{_mark(node)}: the tag {node.tag} is not read (only plain YAML values)")
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value in seen and key.tag != "tag:yaml.org,2002:merge":
                        raise InputError(f"{_mark(key)}: the key {shown(key.value)} is defined twice; keep one")
                    seen.add(key.value)
                self._count(key, depth + 1)
                self._count(value, depth + 1)
        elif isinstance(node, yaml.SequenceNode):
            for item in node.value:
                self._count(item, depth + 1)

    def construct_document(self, node: yaml.Node) -> Any:
        self._count(node, 0)
        return super().construct_document(node)


def _mark(node: yaml.Node) -> str:
    mark = node.start_mark
    return f"line {mark.line + 1}, column {mark.column + 1}"


# What to change for each of the YAML parser's complaints, by the words it starts with.
_YAML_FIXES = (
    ("found character '\\t'", "YAML indents with spaces only: replace the tab with spaces"),
    (
        "mapping values are not allowed",
        "a value holds ': ' (or a key lacks its line): quote the value, or put the key on its own line",
    ),
    ("could not find expected ':'", "write each key as key: value, with a space after the colon"),
    ("expected ',' or ']'", "close the list with ]"),
    ("expected ',' or '}'", "close the mapping with }"),
    ("found unexpected end of stream", "close the quote this value opens"),
    ("while scanning a quoted scalar", "close the quote this value opens"),
    ("expected <block end>", "line this up with the keys or list items above it (same indentation, spaces only)"),
    ("found undefined alias", "define the &anchor before the *alias, or write the value out"),
    ("found unhashable key", "a key cannot be a list or mapping; quote it if it is text (e.g. '{{ x }}')"),
    ("found character '@'", "quote a value that starts with @ or `"),
    ("found character '`'", "quote a value that starts with @ or `"),
)


def yaml_fix(problem: str) -> str:
    """What to change for a YAML parser complaint."""
    for start, fix in _YAML_FIXES:
        if problem.startswith(start):
            return fix
    return "check the indentation (spaces, lined up under the key above) and the quotes at that spot"


def load_yaml(text: str | bytes, what: str = "the YAML", loader: type[_Loader] = _Loader) -> Any:
    """Parse one YAML document within the caps; raises InputError with one line (`what`: the file's name)."""
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > MAX_BYTES:
        raise InputError(f"{what}: {size} bytes, more than the {MAX_BYTES} this reads")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    parser = loader(text)
    try:
        return parser.get_single_data()
    except InputError as exc:
        raise InputError(f"{what}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        where = f"line {exc.problem_mark.line + 1}, column {exc.problem_mark.column + 1}: " if exc.problem_mark else ""
        problem = str(exc.problem or exc.context)
        raise InputError(f"{what}: not valid YAML: {where}{problem}; {yaml_fix(problem)}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{what}: not valid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise InputError(f"{what}: nested too deeply") from None
    finally:
        parser.dispose()


# --- YAML as Polycrate v0.23.3 reads workspace.poly -----------------------------------------------------------------
# Its config passes through Go: viper reads workspace.poly with go-yaml v3 (a YAML 1.2 core schema, whatever YAML
# 1.1 types it does not resolve stay strings: yes, no, on, off), lower-cases every key, and the snapshot the
# playbook gets is go-yaml's output read back by Ansible's (YAML 1.1) loader. The loader below types plain scalars
# as go-yaml v3 does (gopkg.in/yaml.v3 resolve.go), and `_as_ansible_reads` what go-yaml writes for each value.

_GO_MAP: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("true", "True", "TRUE"), ("bool", True)),
    **dict.fromkeys(("false", "False", "FALSE"), ("bool", False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), ("null", None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), ("float", math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), ("float", math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), ("float", -math.inf)),
    "<<": ("merge", "<<"),
}
_GO_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_GO_DATE = re.compile(r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})")
_GO_DATETIME = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})([Tt ])([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(\.[0-9]{1,9})?"
    r"(Z|[-+][0-9]{2}:[0-9]{2})?"
)
_GO_DIGITS = {16: "0123456789abcdefABCDEF", 8: "01234567", 2: "01", 10: "0123456789"}


def _go_parse_int(text: str, signed: bool) -> int | None:
    """strconv.ParseInt(text, 0, 64) (or ParseUint): an optional sign, 0x/0o/0b or a leading 0 (octal)."""
    body, negative = text, False
    if signed and body[:1] in "+-":
        negative, body = body[0] == "-", body[1:]
    base = 10
    if len(body) > 1 and body[0] == "0":
        base, body = {"x": (16, body[2:]), "o": (8, body[2:]), "b": (2, body[2:])}.get(body[1].lower(), (8, body[1:]))
    if not body or any(c not in _GO_DIGITS[base] for c in body):
        return None
    value = -int(body, base) if negative else int(body, base)
    low, high = (-(2**63), 2**63 - 1) if signed else (0, 2**64 - 1)
    return value if low <= value <= high else None


def _go_timestamp(text: str) -> datetime.datetime | None:
    if match := _GO_DATE.fullmatch(text):
        year, month, day = map(int, match.groups())
        try:
            return datetime.datetime(year, month, day, tzinfo=datetime.UTC)
        except ValueError:
            return None
    if match := _GO_DATETIME.fullmatch(text):
        year, month, day, hour, minute, second = (int(match.group(i)) for i in (1, 2, 3, 5, 6, 7))
        zone = match.group(9)
        tz = datetime.UTC
        if zone and zone != "Z":
            sign = -1 if zone[0] == "-" else 1
            tz = datetime.timezone(sign * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6])))
        micro = int((match.group(8) or ".0")[1:7].ljust(6, "0"))
        try:
            return datetime.datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
        except ValueError:
            return None
    return None


def go_resolve(text: str) -> tuple[str, Any]:
    """How go-yaml v3 types a plain scalar: (kind, value); kind is str, bool, null, int, float or timestamp."""
    if text in _GO_MAP:
        return _GO_MAP[text]
    first = text[0]
    if first == "." and _GO_FLOAT.fullmatch(text):
        return "float", float(text)
    if first.isdigit() or first in "+-":
        if stamp := _go_timestamp(text):
            return "timestamp", stamp
        plain = text.replace("_", "")
        for signed in (True, False):
            if (number := _go_parse_int(plain, signed)) is not None:
                return "int", number
        if _GO_FLOAT.fullmatch(plain):
            return "float", float(plain)
    return "str", text


def _go_float_text(value: float) -> str:
    """strconv.FormatFloat(value, 'g', -1, 64), as go-yaml writes a float (.inf/.nan for the specials): the
    shortest digits, %e form when the exponent is below -4 or 6 and above (1e+06, 1e-05), else %f form."""
    if math.isnan(value):
        return ".nan"
    if math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digit_tuple, exponent = decimal.Decimal(repr(value)).normalize().as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + int(exponent)  # where the decimal point falls in digits
    minus = "-" if sign else ""
    exp = point - 1
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{minus}{digits}{'0' * (point - len(digits))}"
    return f"{minus}{digits[:point]}.{digits[point:]}"


def as_ansible_reads(value: Any) -> Any:
    """What Ansible's loader reads back from go-yaml's output of `value` (Polycrate's snapshot): a float as Go
    formats it (2.0 is written 2, an int then), a timestamp as a datetime, everything else as it is."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, float):
        return yaml.safe_load(_go_float_text(value))
    if isinstance(value, dict):
        return {key: as_ansible_reads(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_ansible_reads(item) for item in value]
    return value


class _GoLoader(_Loader):
    """_Loader that types plain scalars as go-yaml v3 (Polycrate's workspace.poly loader) does."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is yaml.ScalarNode and implicit[0]:
            return f"tag:yaml.org,2002:{go_resolve(value)[0]}"
        return super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]

    def _go_scalar(self, node: yaml.ScalarNode) -> Any:
        if node.style:  # quoted: a string (an explicit !!int etc. on a quoted value is left to PyYAML)
            return self.construct_scalar(node)
        return go_resolve(node.value)[1]


for _kind in ("bool", "null", "int", "float", "timestamp"):
    _GoLoader.add_constructor(f"tag:yaml.org,2002:{_kind}", _GoLoader._go_scalar)


def load_polycrate(text: str | bytes, what: str) -> dict[str, Any]:
    """A mapping read as Polycrate v0.23.3 reads workspace.poly: go-yaml v3's scalar types, and the values as the
    playbook receives them through the snapshot (as_ansible_reads). Keys are not folded here (polycrate.fold_keys)."""
    data = load_yaml(text, what, loader=_GoLoader)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"{what}: must be a mapping of keys, got {type(data).__name__} {shown(data)}")
    out: dict[str, Any] = as_ansible_reads(data)
    return out


def load_mapping(text: str | bytes, what: str) -> dict[str, Any]:
    """A YAML document that must be a mapping (or empty)."""
    data = load_yaml(text, what)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"{what}: must be a mapping of keys, got {type(data).__name__} {shown(data)}")
    return data


def _path(parts: list[Any]) -> str:
    text = "config" if parts[:1] == ["config"] else "block"
    for part in parts[1:] if parts[:1] == ["config"] else parts:
        text += f"[{part}]" if isinstance(part, int) else f".{part}"
    return text


def untag(value: Any) -> Any:
    """Plain Python data from what Ansible hands over (tagged str/dict/date subclasses); values JSON cannot
    hold (a date, bytes) stay as their plain type, for plain() to refuse with their path."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, Mapping):
        return {untag(k) if isinstance(k, str) else k: untag(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [untag(v) for v in value]
    if isinstance(value, datetime.datetime):
        return datetime.datetime.fromisoformat(value.isoformat())
    if isinstance(value, datetime.date):
        return datetime.date(value.year, value.month, value.day)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return value


def plain(block: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """The block variable as plain JSON data, and a problem for each value YAML typed that JSON cannot hold
    (an unquoted date, !!binary, a set) or no key takes (.inf, .nan), at its config path: never a traceback.
    Such a value is left out (None), so the rest of the config is still checked."""
    problems: list[Problem] = []

    def convert(value: Any, parts: list[Any]) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if parts[:1] != ["config"] and parts and not isinstance(value, (str, int, float, Mapping, list, tuple)):
            # Outside the config (Polycrate's own block metadata) nothing is judged: only made plain.
            return value.isoformat() if isinstance(value, (datetime.date, datetime.datetime)) else str(value)
        if isinstance(value, str):
            if "\x00" in value:
                # Rendered as-is it makes manifests Kubernetes refuses (and C tools cut the value there).
                problems.append(Problem(_path(parts), f"{shown(value)} holds a NUL character (\\0); remove it"))
                return None
            return str(value)
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            if not math.isfinite(value):
                problems.append(Problem(_path(parts), f"{value} is not a number any key takes; use a whole number"))
                return None
            return float(value)
        if isinstance(value, Mapping):
            out: dict[str, Any] = {}
            for key, item in value.items():
                if "\x00" in str(key):
                    at = _path([*parts, str(key)])
                    problems.append(Problem(at, "this key holds a NUL character (\\0); remove it"))
                    continue
                out[str(key)] = convert(item, [*parts, str(key)])
            return out
        if isinstance(value, (list, tuple)):
            return [convert(v, [*parts, i]) for i, v in enumerate(value)]
        if isinstance(value, (datetime.date, datetime.datetime)):
            problems.append(
                Problem(
                    _path(parts),
                    f"YAML reads the unquoted {value.isoformat()} as a date, not a string; quote it: "
                    f'"{value.isoformat()}"',
                )
            )
            return None
        problems.append(
            Problem(_path(parts), f"a YAML {type(value).__name__} value (e.g. !!binary) is not read; write a string")
        )
        return None

    out = convert(block, [])
    return (out if isinstance(out, dict) else {}), problems


# A query parameter that carries a credential (?token=..., ?X-Amz-Signature=..., ?access_key=...).
_SECRET_QUERY = re.compile(
    r"(token|secret|password|passwd|pwd|auth|signature|sig|credential|api[-_]?key|access[-_]?key)", re.I
)
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


def url_credentials(value: str) -> str | None:
    """What credential a URL-like string carries ("a user name and password", "a token query parameter"),
    or None. Never returns the credential itself."""
    if not _URL.match(value):
        return None
    try:
        url = urlsplit(value)
        has_userinfo = "@" in url.netloc
        query = parse_qsl(url.query, keep_blank_values=True)
    except ValueError:
        return None
    if has_userinfo:
        return "a user name or password before @"
    for key, _ in query:
        if _SECRET_QUERY.search(key):
            return f"a credential in its query (parameter {key[:40]!r})"
    return None
