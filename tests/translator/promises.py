"""What the config promises, read back from the xDS the translator produced (never from the rendered objects):
the WAF's ext_proc filter and body buffer, the PROXY protocol listener filter, the JSON access log, client
and backend timeouts. Each fact is one named Check, so a failure says which Gateway, listener and field broke."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from envoy_block.components import proxies, waf
from envoy_block.components.gateway import target_gateway
from envoy_block.config import Config

from . import xds
from .gate import Check, Verdict


def _dump(verdict: Verdict, namespace: str, gateway: str) -> xds.Dump | None:
    # egctl never merges Gateways (see test_limits), so every Gateway has its own key "<namespace>/<name>".
    raw = verdict.xds.get(f"{namespace}/{gateway}")
    return xds.Dump(f"{namespace}/{gateway}", raw) if raw is not None else None


def _dumps(verdict: Verdict) -> Iterator[xds.Dump]:
    for key, raw in sorted(verdict.xds.items()):
        yield xds.Dump(key, raw)


def _missing(namespace: str, gateway: str, what: str) -> Check:
    return Check(f"xDS {namespace}/{gateway}", what, False, "the translator produced no xDS for this Gateway")


def _same_duration(expected: str, found: Any) -> tuple[bool, str]:
    if found is None:
        return False, f"not set (expected {expected})"
    return xds.seconds(expected) == xds.seconds(str(found)), f"{found} (expected {expected})"


def access_log(config: Config, verdict: Verdict) -> list[Check]:
    """Every listener of every Gateway (both classes): the JSON access log with the block's fields on
    stdout, per request (HCM, TCP proxy, UDP proxy) - or no access log at all when it is switched off."""
    checks = []
    for dump in _dumps(verdict):
        listeners = dump.listeners()
        checks.append(Check(f"xDS {dump.key}", "has listeners", bool(listeners), f"{len(listeners)} listener(s)"))
        for listener in listeners:
            subject = f"xDS {dump.key} listener {listener['name']}"
            logs = xds.access_logs(listener)
            if not config.get("logging.access_log"):
                checks.append(Check(subject, "no access log", not logs, f"{len(logs)} access log(s)"))
                continue
            per_request = len(logs) - len(listener.get("accessLog", []))
            checks.append(Check(subject, "per-request access log", per_request > 0, f"{per_request} found"))
            for log in logs:
                typed = log.get("typedConfig", {})
                fields = typed.get("logFormat", {}).get("jsonFormat")
                checks.append(
                    Check(
                        subject,
                        "access log to stdout",
                        typed.get("path") == "/dev/stdout",
                        f"{log['name']} -> {typed.get('path')}",
                    )
                )
                checks.append(
                    Check(
                        subject,
                        "access log JSON fields",
                        fields == proxies.ACCESS_LOG_FIELDS,
                        f"fields {sorted(fields or {})}",
                    )
                )
    return checks


def _waf_attached(config: Config) -> bool:
    return bool(config.get("waf.enabled") and config.get("waf.default_policy.enabled"))


def ext_proc(config: Config, verdict: Verdict) -> list[Check]:
    """With the WAF attached: on the default Gateway every HTTP filter chain has one ext_proc filter before
    the router, failure_mode_allow = waf.fail_open, request headers sent, the body buffered exactly when
    waf.body.enabled, message timeout = waf.message_timeout, pointing at an HTTP/2 cluster whose only
    endpoint is the WAF Service's gRPC port, and enabled on every route. Nowhere else an ext_proc filter."""
    checks: list[Check] = []
    namespace, gateway = config.get("namespace"), target_gateway(config, "waf")
    settings = config.get("waf")
    target = _dump(verdict, namespace, gateway) if _waf_attached(config) else None
    if _waf_attached(config) and target is None:
        return [_missing(namespace, gateway, "ext_proc filter")]
    service = next(
        (
            o
            for o in verdict.inputs.get(config.get("gatewayclass.shared.name"), [])
            if o["kind"] == "Service"
            and o["metadata"]["name"] == waf.name(config)
            and o["metadata"].get("namespace") == namespace
        ),
        None,
    )
    for dump in _dumps(verdict):
        routes = {str(r["name"]): r for r in dump.route_configs()}
        for listener in dump.listeners():
            subject = f"xDS {dump.key} listener {listener['name']}"
            for hcm in xds.network_filters(listener, xds.HCM):
                found = xds.http_filters(hcm, xds.EXT_PROC)
                if target is None or dump.key != target.key:
                    checks.append(Check(subject, "no ext_proc filter", not found, f"{len(found)} found"))
                    continue
                checks.append(Check(subject, "one ext_proc filter", len(found) == 1, f"{len(found)} found"))
                if len(found) != 1:
                    continue
                names = [str(f["name"]) for f in hcm.get("httpFilters", [])]
                position = names.index(str(found[0]["name"]))
                checks.append(
                    Check(
                        subject,
                        "ext_proc before the router",
                        "envoy.filters.http.router" in names[position:],
                        f"filter order {names}",
                    )
                )
                checks += _ext_proc_config(subject, found[0], settings, dump, service)
                route_config = routes.get(str(hcm.get("rds", {}).get("routeConfigName")))
                checks += _ext_proc_enabled(subject, found[0], route_config)
    return checks


def _ext_proc_config(
    subject: str, found: dict[str, Any], settings: dict[str, Any], dump: xds.Dump, service: dict[str, Any] | None
) -> list[Check]:
    config = found["typedConfig"]
    mode = config.get("processingMode", {})
    fail_open = bool(config.get("failureModeAllow", False))
    body = mode.get("requestBodyMode", "NONE")
    want_body = "BUFFERED" if settings["body"]["enabled"] else "NONE"
    # Response inspection: headers sent and the first buffer-full of the body; else neither goes to the WAF.
    inspect = bool(settings["response_inspection"]["enabled"])
    want_response = ("SEND", "BUFFERED_PARTIAL") if inspect else ("SKIP", "NONE")
    timeout_ok, timeout_text = _same_duration(settings["message_timeout"], config.get("messageTimeout"))
    checks = [
        Check(
            subject,
            "ext_proc failure_mode_allow",
            fail_open == settings["fail_open"],
            f"{fail_open} (waf.fail_open {settings['fail_open']})",
        ),
        Check(
            subject,
            "ext_proc request headers sent",
            mode.get("requestHeaderMode") == "SEND",
            str(mode.get("requestHeaderMode")),
        ),
        Check(subject, "ext_proc request body", body == want_body, f"{body} (expected {want_body})"),
        Check(
            subject,
            "ext_proc response headers and body",
            (mode.get("responseHeaderMode", "SEND"), mode.get("responseBodyMode", "NONE")) == want_response,
            f"{mode.get('responseHeaderMode', 'SEND')}, {mode.get('responseBodyMode', 'NONE')} "
            f"(expected {want_response}, waf.response_inspection.enabled {inspect})",
        ),
        Check(subject, "ext_proc message timeout", timeout_ok, timeout_text),
    ]
    cluster_name = str(config.get("grpcService", {}).get("envoyGrpc", {}).get("clusterName"))
    cluster = dump.clusters().get(cluster_name)
    checks.append(Check(subject, "ext_proc cluster exists", cluster is not None, cluster_name))
    if cluster is not None:
        checks.append(Check(subject, "ext_proc cluster speaks HTTP/2", xds.speaks_http2(cluster), cluster_name))
        want = [(str(service["spec"]["clusterIP"]), waf.GRPC_PORT)] if service else []
        found_endpoints = dump.endpoints(cluster_name)
        checks.append(
            Check(
                subject,
                "ext_proc cluster is the WAF Service",
                bool(want) and found_endpoints == want,
                f"endpoints {found_endpoints}, WAF Service {want}",
            )
        )
    return checks


def _ext_proc_enabled(subject: str, found: dict[str, Any], route_config: dict[str, Any] | None) -> list[Check]:
    if not found.get("disabled"):
        return [Check(subject, "ext_proc enabled for every route", True, "enabled in the filter chain itself")]
    if route_config is None:
        return [Check(subject, "ext_proc enabled for every route", False, "no route configuration found")]
    routes = list(xds.routes(route_config))
    off = [str(r["name"]) for r in routes if str(found["name"]) not in r.get("typedPerFilterConfig", {})]
    return [
        Check(
            subject,
            "ext_proc enabled for every route",
            bool(routes) and not off,
            f"{len(routes)} route(s), not enabled on {off}",
        )
    ]


def proxy_protocol(config: Config, verdict: Verdict) -> list[Check]:
    """With client_traffic.proxy_protocol: every TCP listener of the policy's Gateway starts with the
    PROXY protocol listener filter, allowing connections without it exactly when `optional`. UDP listeners
    carry none (PROXY protocol is a TCP header), and no other Gateway's listener has it."""
    checks: list[Check] = []
    namespace, gateway = config.get("namespace"), target_gateway(config, "client_traffic")
    promised = config.get("client_traffic.enabled") and config.get("client_traffic.proxy_protocol.enabled")
    if promised and _dump(verdict, namespace, gateway) is None:
        return [_missing(namespace, gateway, "PROXY protocol listener filter")]
    optional = bool(config.get("client_traffic.proxy_protocol.optional"))
    for dump in _dumps(verdict):
        for listener in dump.listeners():
            subject = f"xDS {dump.key} listener {listener['name']}"
            filters = xds.listener_filters(listener)
            found = [f for f in filters if f["name"] == xds.PROXY_PROTOCOL]
            if not promised or dump.key != f"{namespace}/{gateway}" or xds.is_udp(listener):
                checks.append(Check(subject, "no PROXY protocol filter", not found, f"{len(found)} found"))
                continue
            checks.append(
                Check(
                    subject,
                    "PROXY protocol filter first",
                    bool(filters) and filters[0] in found,
                    f"listener filters {[f['name'] for f in filters]}",
                )
            )
            allows = bool(found and found[0]["typedConfig"].get("allowRequestsWithoutProxyProtocol", False))
            checks.append(
                Check(
                    subject,
                    "PROXY protocol optional",
                    allows == optional,
                    f"allow_requests_without_proxy_protocol {allows} (optional {optional})",
                )
            )
    return checks


def client_timeouts(config: Config, verdict: Verdict) -> list[Check]:
    """The client timeouts the config sets, in every HTTP connection manager of the policy's Gateway."""
    if not config.get("client_traffic.enabled") or not config.get("client_traffic.timeouts"):
        return []
    namespace, gateway = config.get("namespace"), target_gateway(config, "client_traffic")
    dump = _dump(verdict, namespace, gateway)
    if dump is None:
        return [_missing(namespace, gateway, "client timeouts")]
    timeouts = config.get("client_traffic.timeouts")
    checks = []
    for listener in dump.listeners():
        for hcm in xds.network_filters(listener, xds.HCM):
            subject = f"xDS {dump.key} listener {listener['name']}"
            found = {
                "request_received": hcm.get("requestTimeout"),
                "idle": hcm.get("commonHttpProtocolOptions", {}).get("idleTimeout"),
                "stream_idle": hcm.get("streamIdleTimeout"),
            }
            for key, value in sorted(timeouts.items()):
                ok, text = _same_duration(value, found[key])
                checks.append(Check(subject, f"client timeout {key}", ok, text))
    return checks or [Check(f"xDS {dump.key}", "client timeouts", False, "no HTTP connection manager found")]


def backend_timeouts(config: Config, verdict: Verdict) -> list[Check]:
    """The backend timeouts the config sets, on the policy's Gateway: connect and idle on every cluster its
    TCP-based routes use (UDP has neither), the request timeout on every HTTP route."""
    if not config.get("backend_traffic.enabled") or not config.get("backend_traffic.timeouts"):
        return []
    namespace, gateway = config.get("namespace"), target_gateway(config, "backend_traffic")
    dump = _dump(verdict, namespace, gateway)
    if dump is None:
        return [_missing(namespace, gateway, "backend timeouts")]
    timeouts = config.get("backend_traffic.timeouts")
    clusters = dump.clusters()
    used: set[str] = set()
    checks = []
    for route_config in dump.route_configs():
        for route in xds.routes(route_config):
            used.add(str(route.get("route", {}).get("cluster")))
            if "request" in timeouts:
                ok, text = _same_duration(timeouts["request"], route.get("route", {}).get("timeout"))
                checks.append(Check(f"xDS {dump.key} route {route['name']}", "backend timeout request", ok, text))
    for listener in dump.listeners():
        for tcp in xds.network_filters(listener, xds.TCP_PROXY):
            used.add(str(tcp.get("cluster")))
    for name in sorted(used):
        cluster = clusters.get(name)
        subject = f"xDS {dump.key} cluster {name}"
        if cluster is None:
            checks.append(Check(subject, "exists", False, "a route uses a cluster the dump does not have"))
            continue
        if "connect" in timeouts:
            ok, text = _same_duration(timeouts["connect"], cluster.get("connectTimeout"))
            checks.append(Check(subject, "backend timeout connect", ok, text))
        if "idle" in timeouts:
            ok, text = _same_duration(timeouts["idle"], xds.upstream_idle_timeout(cluster))
            checks.append(Check(subject, "backend timeout idle", ok, text))
    return checks or [Check(f"xDS {dump.key}", "backend timeouts", False, "no route or cluster found")]


# Envoy Gateway v1.9.0's own buffer and HTTP/2 stream window (internal/xds/translator/listener.go), written
# here rather than taken from the builder's body_buffer, so that the gate does not check the builder
# against itself.
ENVOY_GATEWAY_CONNECTION_BUFFER = 32768
ENVOY_GATEWAY_HTTP2_STREAM_WINDOW = 65536


def waf_body_bytes(config: Config) -> int | None:
    """The request body the WAF's Gateway must hold whole, read from the config's waf.body.* as docs/waf.md
    states it (not from body_buffer.needed, the builder's own answer): waf.body.limit with limit_action
    reject, waf.body.max_size with partial; None when no WAF reads bodies (off, no default policy, or
    headers only)."""
    if not (config.get("waf.enabled") and config.get("waf.default_policy.enabled") and config.get("waf.body.enabled")):
        return None
    key = "max_size" if config.get("waf.body.limit_action") == "partial" else "limit"
    return int(config.get(f"waf.body.{key}"))


def request_body_buffer(config: Config, verdict: Verdict) -> list[Check]:
    """With the WAF buffering bodies: every HTTP listener of its Gateway lets Envoy hold a whole body of
    waf_body_bytes (waf.body.limit with reject, waf.body.max_size with partial), over HTTP/1.1
    (the listener's per_connection_buffer_limit_bytes) and over HTTP/2 (the initial stream window of each
    HTTP connection manager), and never less than Envoy Gateway's own values. Past either, Envoy answers
    413 itself before the WAF sees the body (seen with a real Envoy, see envoy_block.body_buffer), which would
    override waf.body.limit and limit_action `partial`. Every other Gateway keeps Envoy Gateway's own
    values: the raised buffer reaches no further."""
    size = waf_body_bytes(config)
    namespace, gateway = config.get("namespace"), target_gateway(config, "waf")
    if size is not None and _dump(verdict, namespace, gateway) is None:
        return [_missing(namespace, gateway, "request body buffer")]
    checks = []
    for dump in _dumps(verdict):
        ours = size is not None and dump.key == f"{namespace}/{gateway}"
        for listener in dump.listeners():
            subject = f"xDS {dump.key} listener {listener['name']}"
            hcms = list(xds.network_filters(listener, xds.HCM))
            if xds.is_udp(listener) or (ours and not hcms):
                continue  # UDP has no such buffer; the WAF's TCP listeners may keep the raised one
            buffer = listener.get("perConnectionBufferLimitBytes")
            windows = [h.get("http2ProtocolOptions", {}).get("initialStreamWindowSize") for h in hcms]
            defaults = (ENVOY_GATEWAY_CONNECTION_BUFFER, ENVOY_GATEWAY_HTTP2_STREAM_WINDOW)
            if size is not None and ours:
                want = max(size, defaults[0])
                checks.append(
                    Check(
                        subject,
                        "HTTP/1.1 body buffer >= WAF body",
                        buffer is not None and int(buffer) >= want,
                        f"per_connection_buffer_limit_bytes {buffer}, WAF body {size} (at least {want})",
                    )
                )
                want = max(size, defaults[1])
                checks.append(
                    Check(
                        subject,
                        "HTTP/2 stream window >= WAF body",
                        all(w is not None and int(w) >= want for w in windows),
                        f"initial_stream_window_size {windows}, WAF body {size} (at least {want})",
                    )
                )
                continue
            found = (buffer, set(windows))
            checks.append(
                Check(
                    subject,
                    "Envoy Gateway's own buffer and stream window",
                    buffer == defaults[0] and set(windows) <= {defaults[1]},
                    f"per_connection_buffer_limit_bytes, initial_stream_window_size {found} (defaults {defaults})",
                )
            )
    return checks


ALL = (access_log, ext_proc, request_body_buffer, proxy_protocol, client_timeouts, backend_timeouts)


def check(config: Config, verdict: Verdict) -> list[Check]:
    return [c for promise in ALL for c in promise(config, verdict)]
