"""Checks a JSON Schema `pattern` cannot express, registered as the schema's custom `format`s.

Each check raises ValueError whose text is the fix; config.shape_problems puts it after the value's
config path. Polycrate's own schema validation ignores formats it does not know, so the shape that a
pattern can express stays in config.schema.json (a CIDR's pattern, the OCI grammar in the image_* $defs) and
these add what needs code: real networks, and a chart reference helm can actually use. Below them, the
parsers of the schema's value grammars (quantities, durations) that rules and outputs compare and convert.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

CHART_FORMS = (
    "use oci://<registry>/<repository> (the version goes in chart.version), an https:// URL of a "
    "packaged chart (.tgz), or the path of a local chart directory (with Chart.yaml) or .tgz"
)


def cidr(value: str) -> None:
    """An IPv4 or IPv6 network with its prefix length and no host bits set (as NetworkPolicy ipBlock needs)."""
    if "/" not in value:
        raise ValueError(f"add the prefix length, e.g. {value}/32 for one IPv4 address or {value}/128 for IPv6")
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError:
        try:
            network = ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise ValueError("use an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8") from None
        raise ValueError(f"use {network} (the bits after the /{network.prefixlen} prefix must be zero)") from None


def chart_ref(value: str, registry: re.Pattern[str], repository: re.Pattern[str], base: Path | None = None) -> None:
    """What helm accepts as the chart argument: an OCI reference without a tag, an https:// URL of a
    packaged chart, or a local chart directory or .tgz (relative paths resolve against `base`, the
    directory ansible-playbook runs in)."""
    if "://" in value and "@" in value.split("://", 1)[1].split("/", 1)[0]:
        # Never repeated in the message: what precedes @ is a user name and often a password.
        raise ValueError("credentials do not go in the chart URL; remove what precedes @ and set chart.auth")
    if value.startswith("oci://"):
        host, _, name = value.removeprefix("oci://").partition("/")
        if "@" in name or ":" in name:
            raise ValueError("an oci:// chart reference takes no tag or digest; put the version in chart.version")
        if not registry.fullmatch(host):
            raise ValueError(f"{host!r} is not a registry host; {CHART_FORMS}")
        if not repository.fullmatch(name):
            raise ValueError(f"{name!r} is not an OCI repository (a-z, 0-9, '.', '_', '-', '/'); {CHART_FORMS}")
        return
    if value.startswith("https://"):
        url = urlsplit(value)
        if not url.hostname or any(c.isspace() for c in value) or not url.path.endswith(".tgz"):
            raise ValueError(f"an https:// chart must be the URL of a packaged chart (.tgz); {CHART_FORMS}")
        return
    if "://" in value:
        raise ValueError(f"only oci:// and https:// are fetched (helm refuses plain http); {CHART_FORMS}")
    path = (base or Path.cwd()) / value
    try:
        if path.is_dir() and (path / "Chart.yaml").is_file():
            return
        if path.is_file() and path.name.endswith(".tgz"):
            return
    except OSError as exc:  # a name the filesystem refuses (too long, ...): not a chart either
        raise ValueError(f"no chart can be at that path ({exc.strerror}); {CHART_FORMS}") from None
    raise ValueError(f"no chart directory or .tgz at {path}; {CHART_FORMS}")


def gateway_hostname(value: str) -> None:
    """Gateway API's Hostname: a DNS name, never an IP address (the API server refuses a listener with one)."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return
    raise ValueError(
        "Gateway API hostnames cannot be IP addresses; leave hostname out (the listener then takes every name "
        "sent to its address) or give the DNS name clients use, such as app.example.com"
    )


def http_url(value: str) -> None:
    """An absolute http(s) URL that an alert receiver can open from anywhere: a scheme, a host, no spaces, no
    fragment (the block appends #<alert>). Empty is allowed (the key's "not set")."""
    if not value:
        return
    url = urlsplit(value)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ValueError(
            "use an absolute URL such as https://git.example.com/platform/envoy/-/blob/main/docs/alerts.md "
            "(a relative path cannot be opened from an alert), or leave it empty"
        )
    if any(c.isspace() for c in value) or any(ord(c) < 32 for c in value):
        raise ValueError("a URL has no spaces or control characters; percent-encode them (%20)")
    if url.fragment or value.endswith("#"):
        raise ValueError("leave out the #...: each alert appends #<its name in lower case>")


def checks(defs: Mapping[str, Any]) -> dict[str, Callable[[str], None]]:
    """The schema's custom formats by name; `defs` are config.schema.json's $defs (the OCI grammar lives there)."""
    registry = re.compile(defs["image_registry"]["pattern"])
    repository = re.compile(defs["image_repository"]["pattern"])
    return {
        "cidr": cidr,
        "gateway-hostname": gateway_hostname,
        "http-url": http_url,
        "helm-chart-ref": lambda value: chart_ref(value, registry, repository),
    }


# Parsers of the schema's value grammars, for the rules that compare values (a request above its limit, a
# drain shorter than its minimum) and the outputs that convert them (alerts in bytes and milliseconds).
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$")
_SUFFIX = {
    "": Fraction(1),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
}


def quantity_bytes(quantity: str) -> Fraction:
    """A Kubernetes quantity of the schema's form ("1Gi", "512M", "1.5Gi") in bytes."""
    match = _QUANTITY.fullmatch(quantity)
    if not match:
        raise ValueError(f"not a quantity: {quantity!r}")
    return Fraction(match.group(1)) * _SUFFIX[match.group(2) or ""]


_DURATION_PART = re.compile(r"([0-9]+)(h|ms|m|s)")
_UNIT_SECONDS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}


def seconds(duration: str) -> float:
    """A Gateway API duration (the schema's `duration` pattern: 1h30m, 10s, 500ms) in seconds."""
    return sum(int(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(duration))
