"""The config contract: shape from config.schema.json, effective defaults, cross-field rules.

Every problem is collected with its config path before anything is built, so a user sees all of
them at once and nothing is written or applied on bad input.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import jsonschema

from . import body_buffer, formats, loadbalancer, proxy_ports
from .paths import SCHEMA_PATH

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
    "rule_tag": "a rule tag such as attack-sqli (no quotes, backslashes or line breaks)",
    "http_method": "an upper-case HTTP method such as PUT or M-SEARCH (letters and '-'; CRS compares case-sensitively)",
    "media_type": "a lower-case media type without parameters, such as application/json (no '; charset=...')",
    "duration": "a duration such as 500ms, 30s, 5m or 1h",
    "quantity": "a Kubernetes quantity such as 100m, 256Mi or 1Gi",
    "cidr": "an IPv4 or IPv6 CIDR such as 10.0.0.0/8 or fd00::/8",
}
_KEY_HINT = (
    "use a qualified name such as example.com/name or name (an optional DNS prefix and '/', then at most 63 "
    "of a-z, A-Z, 0-9, '-', '_', '.', starting and ending alphanumeric)"
)
# The block name is in every object's instance label and in Service names (<name>-waf): an RFC 1035 label.
_BLOCK_NAME = re.compile(r"^[a-z]([-a-z0-9]{0,57}[a-z0-9])?$")


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the config: where (config path) and what to do about it."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class ConfigError(ValueError):
    """The config is invalid; carries every problem found, in a stable order."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(set(problems))
        self.summary = f"invalid envoy block config ({len(self.problems)} problem(s))"
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{self.summary}:\n{lines}")


@dataclass(frozen=True)
class Config:
    """The validated, effective config (schema defaults applied) plus block metadata."""

    values: dict[str, Any]
    block_name: str = "envoy"
    block_version: str = "0.0.0"
    warnings: tuple[str, ...] = field(default=())

    def get(self, dotted: str) -> Any:
        node: Any = self.values
        for part in dotted.split("."):
            node = node[part]
        return node


@cache
def load_schema() -> dict[str, Any]:
    with SCHEMA_PATH.open(encoding="utf-8") as handle:
        schema: dict[str, Any] = json.load(handle)
    return schema


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
    """Values under chart.auth are never echoed back in an error message."""
    return parts[:2] == ["chart", "auth"]


def _format_checker(schema: Mapping[str, Any]) -> jsonschema.FormatChecker:
    checker = jsonschema.FormatChecker(formats=())
    for name, check in formats.checks(schema["$defs"]).items():

        def strings_only(value: Any, check: Any = check) -> bool:
            if isinstance(value, str):  # other types get their own type error
                check(value)
            return True

        checker.checks(name, raises=ValueError)(strings_only)
    return checker


def shape_problems(raw: Any, schema: Mapping[str, Any]) -> list[Problem]:
    """Check types, enums, ranges, formats and unknown keys against config.schema.json; one Problem per finding,
    and one per value: a value failing both its pattern and its format is reported by the format's fix."""
    problems: list[Problem] = []
    formatted: set[str] = set()
    # Draft 7: the newest draft both jsonschema 3.2 (Polycrate's image) and Polycrate's gojsonschema implement.
    validator = jsonschema.Draft7Validator(schema, format_checker=_format_checker(schema))
    errors = sorted(validator.iter_errors(raw), key=lambda e: e.validator != "format")
    for error in errors:
        parts = list(error.absolute_path)
        if "propertyNames" in error.schema_path:
            problems.append(Problem(_path(parts), f"key {error.instance!r} is not valid; {_KEY_HINT}"))
            continue
        if error.validator == "format":
            formatted.add(_path(parts))
            problems.append(Problem(_path(parts), f"{error.instance!r} is not valid; {error.cause}"))
            continue
        if error.validator == "pattern" and _path(parts) in formatted:
            continue
        if error.validator == "additionalProperties":
            known = sorted(_schema_node_at(schema, parts).get("properties", {}))
            for key in sorted(set(error.instance) - set(known)):
                close = difflib.get_close_matches(key, known, n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                problems.append(
                    Problem(_path([*parts, key]), f"unknown key; {hint}known keys here: {', '.join(known)}")
                )
        elif error.validator == "type":
            shown = "" if _is_secret(parts) else f" {error.instance!r}"
            problems.append(
                Problem(
                    _path(parts), f"must be of type {error.validator_value}, got {type(error.instance).__name__}{shown}"
                )
            )
        elif error.validator == "enum":
            choices = ", ".join(str(c) for c in error.validator_value)
            problems.append(Problem(_path(parts), f"{error.instance!r} is not allowed; use one of: {choices}"))
        elif _is_secret(parts):
            problems.append(Problem(_path(parts), f"invalid value ({error.validator} check failed)"))
        elif error.validator == "pattern":
            hint = _format_hint(schema, parts) or f"a string matching {error.validator_value}"
            problems.append(Problem(_path(parts), f"{error.instance!r} is not valid; use {hint}"))
        elif error.validator == "required":
            problems.append(Problem(_path(parts), f"{error.message}; add it"))
        else:
            problems.append(Problem(_path(parts), error.message))
    return problems


def _listener_tls_mode(listener: Mapping[str, Any]) -> str | None:
    """The TLS mode the Gateway will really have (Gateway API defaults HTTPS to Terminate)."""
    protocol = listener["protocol"]
    if protocol == "HTTPS":
        return str(listener.get("tls_mode", "Terminate"))
    if protocol == "TLS":
        mode = listener.get("tls_mode")
        return str(mode) if mode else None
    return None


def _container_port_problems(
    at: str, index: int, listener: Mapping[str, Any], seen: dict[tuple[str, int], tuple[int, int]]
) -> list[Problem]:
    """A listener binds its container port inside every proxy pod: not one of the proxy's own ports, and
    not one another listener reaches through Envoy Gateway's shift of low ports (80 and 10080 collide)."""
    port = listener["port"]
    inside = proxy_ports.container_port(port)
    transport = "UDP" if listener["protocol"] == "UDP" else "TCP"
    if transport == "TCP" and inside in proxy_ports.RESERVED:
        taken = ", ".join(f"{p} {what}" for p, what in proxy_ports.RESERVED.items())
        return [
            Problem(
                f"{at}.port",
                f"port {port} is taken inside the proxy pod by {proxy_ports.RESERVED[inside]} ({taken}); "
                "use another port",
            )
        ]
    first = seen.setdefault((transport, inside), (index, port))
    if first[1] != port:
        return [
            Problem(
                f"{at}.port",
                f"port {port} listens on container port {inside}, like listeners[{first[0]}].port {first[1]} "
                f"(Envoy Gateway adds {proxy_ports.PORT_SHIFT} to ports below {proxy_ports.SHIFTED_BELOW}); "
                "change one of them",
            )
        ]
    return []


# Protocols that may share a port on one Gateway (Envoy Gateway's validateConflictedProtocolsListeners):
# HTTPS and TLS share by SNI; UDP is another transport and shares with anything.
_PORT_GROUP = {"HTTP": "HTTP", "HTTPS": "HTTPS/TLS", "TLS": "HTTPS/TLS", "TCP": "TCP"}


def _shared_port_problems(
    at: str,
    index: int,
    listener: Mapping[str, Any],
    groups: dict[tuple[int, str], tuple[int, str]],
    tls_hostnames: dict[tuple[int, str], tuple[int, str]],
) -> list[Problem]:
    """Listeners on one port that Envoy Gateway would reject together (both get Conflicted=True): protocols
    that cannot share a port (ProtocolConflict), or an HTTPS and a TLS listener with the same hostname
    (HostnameConflict; the same protocol twice is the (port, protocol, hostname) rule)."""
    protocol, port = listener["protocol"], listener["port"]
    group = _PORT_GROUP.get(protocol)
    if group is None:
        return []
    problems = []
    clash = next((first for (p, g), first in sorted(groups.items()) if p == port and g != group), None)
    if clash is not None:
        problems.append(
            Problem(
                at,
                f"port {port}/{protocol} cannot share the port with listeners[{clash[0]}] ({clash[1]}): Envoy "
                "Gateway rejects both (ProtocolConflict; only HTTPS and TLS share a port, UDP shares with any); "
                "change the port",
            )
        )
    groups.setdefault((port, group), (index, protocol))
    if group == "HTTPS/TLS":
        hostname = str(listener.get("hostname", ""))
        first = tls_hostnames.setdefault((port, hostname), (index, protocol))
        if first[1] != protocol:
            problems.append(
                Problem(
                    at,
                    f"port {port}/{protocol} with hostname '{hostname}' clashes with listeners[{first[0]}] "
                    f"({first[1]}, same port and hostname): Envoy Gateway rejects both (HostnameConflict); "
                    "change the port or the hostname",
                )
            )
    return problems


def _listener_problems(listeners: list[Mapping[str, Any]]) -> list[Problem]:
    problems: list[Problem] = []
    seen_names: dict[str, int] = {}
    seen_triples: dict[tuple[int, str, str], int] = {}
    seen_inside: dict[tuple[str, int], tuple[int, int]] = {}
    seen_groups: dict[tuple[int, str], tuple[int, str]] = {}
    seen_tls_hostnames: dict[tuple[int, str], tuple[int, str]] = {}
    for index, listener in enumerate(listeners):
        at = f"config.default_gateway.listeners[{index}]"
        protocol = listener["protocol"]
        name = listener["name"]
        if name in seen_names:
            problems.append(
                Problem(
                    f"{at}.name",
                    f"listener name '{name}' is already used by listeners[{seen_names[name]}]; "
                    "give every listener a unique name",
                )
            )
        seen_names.setdefault(name, index)
        triple = (listener["port"], protocol, listener.get("hostname", ""))
        if triple in seen_triples:
            problems.append(
                Problem(
                    at,
                    f"port {triple[0]}/{protocol} with hostname '{triple[2]}' repeats "
                    f"listeners[{seen_triples[triple]}]; change the port or the hostname",
                )
            )
        seen_triples.setdefault(triple, index)
        problems += _container_port_problems(at, index, listener, seen_inside)
        problems += _shared_port_problems(at, index, listener, seen_groups, seen_tls_hostnames)

        if protocol in ("HTTP", "TCP", "UDP"):
            for key in ("tls_mode", "certificate_refs"):
                if key in listener:
                    problems.append(
                        Problem(
                            f"{at}.{key}",
                            f"{protocol} listeners carry no TLS settings; remove {key} or use protocol HTTPS/TLS",
                        )
                    )
        if protocol in ("TCP", "UDP") and "hostname" in listener:
            problems.append(Problem(f"{at}.hostname", f"{protocol} listeners cannot match a hostname; remove it"))
        if protocol == "HTTPS" and listener.get("tls_mode") == "Passthrough":
            problems.append(
                Problem(
                    f"{at}.tls_mode",
                    "HTTPS listeners terminate TLS; use protocol TLS with tls_mode Passthrough to pass TLS through",
                )
            )
        if protocol == "TLS" and "tls_mode" not in listener:
            problems.append(
                Problem(
                    f"{at}.tls_mode", "TLS listeners must state their mode; set tls_mode to Passthrough or Terminate"
                )
            )
        mode = _listener_tls_mode(listener)
        if mode == "Terminate" and not listener.get("certificate_refs"):
            problems.append(
                Problem(
                    f"{at}.certificate_refs",
                    "a Terminate listener needs a certificate; add "
                    "certificate_refs: [{name: <tls secret>}] or use tls_mode Passthrough",
                )
            )
        if mode == "Passthrough" and listener.get("certificate_refs"):
            problems.append(
                Problem(
                    f"{at}.certificate_refs",
                    "Passthrough listeners ignore certificates; remove certificate_refs or use tls_mode Terminate",
                )
            )
        namespaces = listener.get("allowed_routes_namespaces", "Same")
        if namespaces == "Selector" and not listener.get("allowed_routes_selector", {}).get("match_labels"):
            problems.append(
                Problem(
                    f"{at}.allowed_routes_selector",
                    "allowed_routes_namespaces Selector needs allowed_routes_selector.match_labels",
                )
            )
        if namespaces != "Selector" and "allowed_routes_selector" in listener:
            problems.append(
                Problem(
                    f"{at}.allowed_routes_selector",
                    "only used with allowed_routes_namespaces "
                    "Selector; remove it or set allowed_routes_namespaces: Selector",
                )
            )
    return problems


def _network_policy_problems(values: Mapping[str, Any]) -> tuple[list[Problem], list[str]]:
    policy = values["network_policy"]
    problems: list[Problem] = []
    warnings: list[str] = []
    if policy["provider"] == "kubernetes" and not policy["api_server_cidrs"]:
        problems.append(
            Problem(
                "config.network_policy.api_server_cidrs",
                "provider kubernetes selects the API "
                "server by address; list its CIDRs (kubectl get endpoints kubernetes -n default)",
            )
        )
    if policy["provider"] == "kubernetes" and values["deploy_type"] == "GatewayNamespace":
        warnings.append(
            "config.network_policy.provider: with GatewayNamespace the proxies run in every Gateway's "
            "namespace; namespaced NetworkPolicies cannot cover namespaces created later, so only the "
            "block namespace is covered. Use provider cilium or calico for cluster-wide policies"
        )
    narrowed = set(policy["proxy_ingress_ports"])
    if narrowed and values["default_gateway"]["enabled"]:
        for index, listener in enumerate(values["default_gateway"]["listeners"]):
            if listener["port"] not in narrowed:
                problems.append(
                    Problem(
                        f"config.default_gateway.listeners[{index}].port",
                        f"port "
                        f"{listener['port']} is not in network_policy.proxy_ingress_ports; add it "
                        "or leave proxy_ingress_ports empty (all TCP)",
                    )
                )
    return problems, warnings


def _proxy_protocol_scope_problems(values: Mapping[str, Any]) -> list[Problem]:
    """What tells the load balancer to send PROXY headers must reach exactly what the ClientTrafficPolicy
    parses them on: the default Gateway's TCP-based listeners (the only Gateway the block renders)."""
    problems: list[Problem] = []
    for key in sorted(values["service"]["annotations"]):
        if loadbalancer.is_proxy_protocol_annotation(key):
            problems.append(
                Problem(
                    f"config.service.annotations.{key}",
                    "service.annotations go on every proxy Service of both classes, but only the Gateway the "
                    "ClientTrafficPolicy targets parses PROXY headers; move it to "
                    "client_traffic.proxy_protocol.service_annotations, which the block puts only there",
                )
            )
    client = values["client_traffic"]
    proxy_protocol = client["proxy_protocol"]
    if not proxy_protocol["service_annotations"]:
        return problems
    at = "config.client_traffic.proxy_protocol.service_annotations"
    gateway = values["default_gateway"]
    if not (client["enabled"] and proxy_protocol["enabled"]):
        problems.append(
            Problem(
                at,
                "the load balancer would send PROXY headers that nothing parses; set "
                "client_traffic.enabled and client_traffic.proxy_protocol.enabled: true, or remove them",
            )
        )
    elif not gateway["enabled"] or client["target_gateway_name"] not in ("", gateway["name"]):
        problems.append(
            Problem(
                at,
                f"the ClientTrafficPolicy targets Gateway '{client['target_gateway_name']}', which the block does "
                "not render, so it cannot put these on that Gateway's Service alone; set them in that Gateway's "
                "spec.infrastructure.annotations (on a class that does not merge Gateways, e.g. the dedicated "
                "class), or target the default Gateway (default_gateway.enabled: true, no target_gateway_name)",
            )
        )
    else:
        for index, listener in enumerate(gateway["listeners"]):
            if listener["protocol"] == "UDP":
                problems.append(
                    Problem(
                        f"config.default_gateway.listeners[{index}].protocol",
                        "the load balancer would send PROXY headers to this UDP port too, but a "
                        "ClientTrafficPolicy parses them on TCP listeners only (HTTP, HTTPS, TLS, TCP); remove "
                        "the listener or client_traffic.proxy_protocol.service_annotations",
                    )
                )
    return problems


def _service_problems(values: Mapping[str, Any]) -> list[Problem]:
    """A fixed VIP must reach exactly one Service, in forms its LoadBalancer provider reads."""
    service = values["service"]
    problems: list[Problem] = []
    if service["loadbalancer_ip"] and service["type"] != "LoadBalancer":
        problems.append(
            Problem(
                "config.service.loadbalancer_ip",
                f"needs service.type LoadBalancer (is {service['type']}); remove loadbalancer_ip or change the type",
            )
        )
    if service["loadbalancer_ip"] and not values["gatewayclass"]["shared"]["merge_gateways"]:
        problems.append(
            Problem(
                "config.service.loadbalancer_ip",
                "the shared class does not merge Gateways (gatewayclass.shared.merge_gateways: false), so every "
                "Gateway of the class gets its own Service and each would ask for this one address; set "
                "gatewayclass.shared.merge_gateways: true, or remove loadbalancer_ip",
            )
        )
    for key in sorted(service["annotations"]):
        if key in loadbalancer.VIP_ANNOTATIONS["all"]:
            problems.append(
                Problem(
                    f"config.service.annotations.{key}",
                    "service.annotations go on every proxy Service of both classes, so each would ask for this "
                    "address; remove it and set service.loadbalancer_ip (and service.loadbalancer_provider if "
                    "you want one provider's form only), which only the shared Service carries",
                )
            )
    return problems


# The WAF pod's size follows its worker count (waf.workers: the Go process's GOMAXPROCS, each keeping one CPU
# busy under load). Sized as for the Python workers it replaced (75 MiB each): one Go process with the CRS
# holds about 80 MiB idle and 250 MiB under 16 KiB JSON load (make bench-waf), within the derived limits.
WAF_DEFAULT_WORKERS = 2
_WORKER_RSS_MIB = 96  # per worker, with some room; below this per worker a memory limit gets the pod OOM-killed


def waf_workers(waf: Mapping[str, Any]) -> int:
    """The workers a WAF pod runs: waf.workers, else what the service derives from its CPU limit (the quota,
    rounded up), else WAF_DEFAULT_WORKERS (the default CPU limit is that many CPUs)."""
    if waf.get("workers") is not None:
        return int(waf["workers"])
    cpu = waf["resources"].get("limits", {}).get("cpu")
    if cpu:
        return max(1, math.ceil(body_buffer.quantity_bytes(cpu)))
    return WAF_DEFAULT_WORKERS


def waf_resources(waf: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """waf.resources with every key the user did not set derived from the worker count (a derived request
    at most the limit). The CPU limit is always set: without one the service would start a worker per CPU
    of the node."""
    n = waf_workers(waf)
    derived = {
        "requests": {"cpu": f"{250 * n}m", "memory": f"{64 + 128 * n}Mi"},
        "limits": {"cpu": str(n), "memory": f"{128 + 256 * n}Mi"},
    }
    user = waf["resources"]
    limits = {**derived["limits"], **user.get("limits", {})}
    requests = dict(derived["requests"])
    for key, limit in limits.items():  # a derived request never exceeds the limit the user set
        if body_buffer.quantity_bytes(requests[key]) > body_buffer.quantity_bytes(limit):
            requests[key] = limit
    return {"requests": {**requests, **user.get("requests", {})}, "limits": limits}


def _waf_worker_problems(values: Mapping[str, Any], raw: Mapping[str, Any]) -> tuple[list[Problem], list[str]]:
    """Effective WAF resources Kubernetes accepts, and a worker count they can carry."""
    waf = values["waf"]
    user = raw.get("waf", {}).get("resources", {})
    resources = waf["resources"]
    n = waf_workers(waf)
    problems: list[Problem] = []
    warnings: list[str] = []
    for key in ("cpu", "memory"):
        request, limit = resources["requests"][key], resources["limits"][key]
        if body_buffer.quantity_bytes(request) > body_buffer.quantity_bytes(limit):
            origin = "" if key in user.get("limits", {}) else f", derived from {n} worker(s)"
            problems.append(
                Problem(
                    f"config.waf.resources.requests.{key}",
                    f"{request} is above the limit {limit} (waf.resources.limits.{key}{origin}): Kubernetes "
                    f"rejects such a pod; lower the request, or raise waf.resources.limits.{key}",
                )
            )
    if not waf["enabled"]:
        return problems, warnings
    cpu_limit = user.get("limits", {}).get("cpu")
    if waf.get("workers") is not None and cpu_limit and math.ceil(body_buffer.quantity_bytes(cpu_limit)) < n:
        warnings.append(
            f"config.waf.workers: {n} workers share a CPU limit of {cpu_limit} "
            "(waf.resources.limits.cpu): each worker is CPU-bound, so the extra ones only add memory and "
            "latency; raise the limit to the worker count, or remove it (it then follows the workers)"
        )
    memory_limit = user.get("limits", {}).get("memory")
    if memory_limit and body_buffer.quantity_bytes(memory_limit) < (32 + _WORKER_RSS_MIB * n) * 2**20:
        warnings.append(
            f"config.waf.resources.limits.memory: {memory_limit} is tight for {n} worker(s) (each holds its own "
            f"rules, about 75 MiB): the pod may be OOM-killed; allow {32 + _WORKER_RSS_MIB * n}Mi or more, or "
            "remove it (it then follows the workers)"
        )
    return problems, warnings


def _waf_body_problems(values: Mapping[str, Any], raw: Mapping[str, Any]) -> list[Problem]:
    """The body the WAF's Gateway buffers (body_buffer.needed) must fit what limit_action promises, and the
    proxies' memory."""
    body = values["waf"]["body"]
    at = "config.waf.body.max_size"
    problems: list[Problem] = []
    if body["limit_action"] != "partial" and "max_size" in raw.get("waf", {}).get("body", {}):
        problems.append(
            Problem(
                at,
                "only used with limit_action partial (with reject the proxies accept bodies up to waf.body.limit "
                "and no more); remove it, or set waf.body.limit_action: partial",
            )
        )
    if body["limit_action"] == "partial" and body["max_size"] <= body["limit"]:
        problems.append(
            Problem(
                at,
                f"{body['max_size']} is not above waf.body.limit ({body['limit']}), so partial never applies: "
                "Envoy buffers the whole body before the WAF sees it and answers 413 itself past max_size; raise "
                "max_size above limit, or use limit_action: reject",
            )
        )
    size = body_buffer.needed(values)
    memory = values["data_plane"]["resources"].get("limits", {}).get("memory")
    if size is not None and memory and size >= body_buffer.quantity_bytes(memory):
        key = "max_size" if body["limit_action"] == "partial" else "limit"
        problems.append(
            Problem(
                f"config.waf.body.{key}",
                f"the WAF's Gateway would buffer request bodies of up to {size} bytes in a proxy, not less than "
                f"its memory limit data_plane.resources.limits.memory ({memory}): one such request gets the proxy "
                f"OOM-killed; lower waf.body.{key}, or raise the memory limit",
            )
        )
    return problems


def _waf_response_problems(values: Mapping[str, Any]) -> list[Problem]:
    """Response inspection needs the service, and Envoy hands the WAF at most the Gateway's buffer of a
    response (processing mode BufferedPartial): a larger body_limit would promise bytes never inspected."""
    waf = values["waf"]
    inspection = waf["response_inspection"]
    if not inspection["enabled"]:
        return []
    if not waf["enabled"]:
        return [Problem("config.waf.response_inspection.enabled", "needs waf.enabled: true")]
    if not waf["default_policy"]["enabled"]:
        return []  # the user's own EnvoyExtensionPolicy and ClientTrafficPolicy decide what reaches the WAF
    buffer = max(body_buffer.needed(values) or 0, body_buffer.ENVOY_GATEWAY_CONNECTION_BUFFER)
    if inspection["body_limit"] > buffer:
        return [
            Problem(
                "config.waf.response_inspection.body_limit",
                f"{inspection['body_limit']} is above the WAF Gateway's buffer ({buffer} bytes: waf.body.limit, or "
                "max_size with limit_action partial, and never below 32768), and Envoy hands the WAF at most that "
                "much of a response; lower body_limit, or raise waf.body.limit",
            )
        ]
    return []


def cross_field_problems(values: Mapping[str, Any], raw: Mapping[str, Any]) -> tuple[list[Problem], list[str]]:
    """Rules that span several keys. `values` has defaults applied; `raw` is what the user wrote."""
    problems: list[Problem] = []
    warnings: list[str] = []
    gateway = values["default_gateway"]
    if gateway["enabled"]:
        problems += _listener_problems(gateway["listeners"])
    elif "listeners" in raw.get("default_gateway", {}):
        # The bootstrap Gateway is opt-in: listeners alone render nothing, and install would prune a
        # Gateway an earlier version (on by default) created.
        problems.append(
            Problem(
                "config.default_gateway.listeners",
                "no Gateway is rendered while config.default_gateway.enabled is false (the default); "
                "set default_gateway.enabled: true, or remove listeners",
            )
        )

    for policy in ("client_traffic", "backend_traffic"):
        section = values[policy]
        if section["enabled"] and not gateway["enabled"] and not section["target_gateway_name"]:
            problems.append(
                Problem(
                    f"config.{policy}.target_gateway_name",
                    "the policy needs a Gateway to target; set "
                    f"config.{policy}.target_gateway_name to your Gateway's name, or "
                    "config.default_gateway.enabled: true to target the bootstrap Gateway",
                )
            )
    proxy_protocol = values["client_traffic"]["proxy_protocol"]
    if proxy_protocol["enabled"] and not values["client_traffic"]["enabled"]:
        problems.append(
            Problem(
                "config.client_traffic.enabled",
                "proxy_protocol is rendered in the ClientTrafficPolicy; set client_traffic.enabled: true",
            )
        )
    if proxy_protocol["optional"] and not proxy_protocol["enabled"]:
        problems.append(
            Problem(
                "config.client_traffic.proxy_protocol.optional", "only meaningful with proxy_protocol.enabled: true"
            )
        )
    problems += _proxy_protocol_scope_problems(values)

    service = values["service"]
    problems += _service_problems(values)
    data_plane = values["data_plane"]
    if service["external_traffic_policy"] == "Local" and data_plane["kind"] == "Deployment":
        warnings.append(
            "config.service.external_traffic_policy: Local with a Deployment data plane drops traffic "
            "on nodes without a proxy pod and keeps the client IP only where one runs; use "
            "data_plane.kind: DaemonSet to keep the client IP on every node"
        )
    if data_plane["kind"] == "DaemonSet" and "replicas" in raw.get("data_plane", {}):
        warnings.append("config.data_plane.replicas: ignored with data_plane.kind DaemonSet (one proxy per node)")

    classes = values["gatewayclass"]
    if classes["shared"]["name"] == classes["dedicated"]["name"]:
        problems.append(
            Problem("config.gatewayclass.dedicated.name", "the shared and the dedicated class need different names")
        )
    if values["deploy_type"] == "GatewayNamespace" and classes["shared"]["merge_gateways"]:
        problems.append(
            Problem(
                "config.deploy_type",
                "GatewayNamespace cannot be combined with mergeGateways on the "
                "shared class (Envoy Gateway does not support it); set "
                "gatewayclass.shared.merge_gateways: false or deploy_type: ControllerNamespace",
            )
        )

    auth = values["chart"]["auth"]
    if bool(auth["username"]) != bool(auth["password"]):
        problems.append(Problem("config.chart.auth", "set both username and password, or neither"))

    waf = values["waf"]
    if waf["enabled"] and waf["fail_open"]:
        warnings.append(
            "config.waf.fail_open: while the WAF is unreachable traffic passes UNFILTERED, attacks "
            "included; fail closed (the default) answers 500 instead"
        )
    if waf["default_policy"]["enabled"] and not waf["enabled"]:
        problems.append(Problem("config.waf.default_policy.enabled", "needs waf.enabled: true"))
    if waf["enforce"] and not waf["enabled"]:
        problems.append(
            Problem(
                "config.waf.enforce",
                "guards the WAF's policies; set waf.enabled: true (and attach the WAF), or remove waf.enforce",
            )
        )
    if waf["default_policy"]["enabled"] and not gateway["enabled"]:
        problems.append(
            Problem(
                "config.waf.default_policy.enabled",
                "attaches to the default Gateway; set config.default_gateway.enabled: true, or attach the WAF "
                "to your own Gateways with your own EnvoyExtensionPolicy",
            )
        )

    problems += _waf_body_problems(values, raw)
    problems += _waf_response_problems(values)
    problems_workers, warnings_workers = _waf_worker_problems(values, raw)
    problems += problems_workers
    warnings += warnings_workers

    selector = values["metrics"]["vmpodscrape"]["namespace_selector"]
    if selector["any"] and selector["match_names"]:
        problems.append(
            Problem("config.metrics.vmpodscrape.namespace_selector", "set either any: true or match_names, not both")
        )
    if (
        values["metrics"]["vmpodscrape"]["enabled"]
        and values["deploy_type"] == "GatewayNamespace"
        and not selector["any"]
        and not selector["match_names"]
    ):
        warnings.append(
            "config.metrics.vmpodscrape.namespace_selector: with GatewayNamespace the proxies run in "
            "the Gateways' namespaces; set any: true or list them in match_names"
        )

    problems_np, warnings_np = _network_policy_problems(values)
    problems += problems_np
    warnings += warnings_np

    issuer = values["tls"]["cluster_issuer_name"]
    if issuer and not (
        gateway["enabled"]
        and any(_listener_tls_mode(lst) == "Terminate" and lst.get("hostname") for lst in gateway["listeners"])
    ):
        warnings.append(
            "config.tls.cluster_issuer_name: cert-manager only issues certificates for Terminate "
            "listeners with a hostname on the default Gateway; none is configured"
        )
    return problems, warnings


# The default waf.image names a repository that has never been published: a WAF on it never starts
# (ImagePullBackOff, found only by status). install and plan refuse it before anything is applied.
UNPUBLISHED_WAF_IMAGE = ("docker.io", "polycrate/envoy-waf")


def unpublished_waf_image(values: Mapping[str, Any]) -> Problem | None:
    """The problem with an enabled WAF on the unpublished default image (any tag), else None."""
    waf = values["waf"]
    if not waf["enabled"] or (waf["image"]["registry"], waf["image"]["repository"]) != UNPUBLISHED_WAF_IMAGE:
        return None
    return Problem(
        "config.waf.image",
        f"{'/'.join(UNPUBLISHED_WAF_IMAGE)} is a placeholder that was never published (pods would not start); "
        "build the image from waf/ (waf/BUILD.md), push it to a registry your nodes pull from and set "
        "waf.image.registry, waf.image.repository and waf.image.tag",
    )


def load(block: Mapping[str, Any]) -> Config:
    """Validate `block` (name, version, config as Polycrate passes them) and return the effective Config.

    Raises ConfigError listing every problem.
    """
    schema = load_schema()
    raw_config = block.get("config")
    if raw_config is None:
        raw_config = {}
    if not isinstance(raw_config, Mapping):
        raise ConfigError([Problem("config", f"must be a mapping, got {type(raw_config).__name__}")])
    raw = _drop_nulls(dict(raw_config))
    problems = shape_problems(raw, schema)
    block_name = str(block.get("name") or "envoy")
    if not _BLOCK_NAME.match(block_name):
        problems.append(
            Problem(
                "block.name",
                f"{block_name!r} cannot name Kubernetes objects (it is the instance label and part of Service "
                "names); rename the block in workspace.poly to a lowercase RFC 1035 label of at most 59 "
                "characters (a-z, 0-9, '-', starting with a letter), e.g. envoy-edge",
            )
        )
    values = apply_defaults(raw, schema)
    try:
        values["waf"]["resources"] = waf_resources(values["waf"])
        cross, warnings = cross_field_problems(values, raw)
    except (KeyError, TypeError, AttributeError, ValueError):
        # A badly shaped config can trip a cross-field rule; its shape problems already explain why.
        if not problems:
            raise
        cross, warnings = [], []
    problems += cross
    if problems:
        raise ConfigError(problems)
    if unpublished := unpublished_waf_image(values):
        warnings.append(f"{unpublished} (install and plan refuse it)")
    return Config(
        values=values,
        block_name=block_name,
        block_version=str(block.get("version") or "0.0.0"),
        warnings=tuple(warnings),
    )
