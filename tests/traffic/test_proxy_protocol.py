"""PROXY protocol (examples/proxy-protocol): the ClientTrafficPolicy the block renders makes the generated
listener read the header; the client address Envoy logs is the one in the header. Strict (the example)
refuses a connection without one; `proxy_protocol.optional: true` serves it. The example's client timeout
(`request_received`, here shortened to 1s) takes effect on a request that never finishes."""

from __future__ import annotations

import copy
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.translator import configs

from .deploy import Deployed, deployed
from .stack import proxy_v1, proxy_v2, raw_exchange

CLIENT = ("203.0.113.7", 40123)


def _config(optional: bool) -> dict[str, Any]:
    cfg: dict[str, Any] = copy.deepcopy(configs.EXAMPLES["proxy-protocol"])
    cfg["client_traffic"]["timeouts"]["request_received"] = "1s"
    if optional:
        cfg["client_traffic"]["proxy_protocol"]["optional"] = True
    return cfg


@pytest.fixture(scope="module", params=["strict", "optional"])
def edge(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    with deployed(_config(request.param == "optional"), Path(tmp_path_factory.mktemp("pp"))) as running:
        yield running


def _request(edge: Deployed, path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: {edge.host('http')}\r\nConnection: close\r\n\r\n".encode()


@pytest.mark.parametrize("header", [proxy_v1, proxy_v2], ids=["v1", "v2"])
def test_client_address_comes_from_the_header(edge: Deployed, header: Any) -> None:
    port = edge.port("http")
    path = f"/whoami/{uuid.uuid4()}"
    answer = raw_exchange(port, header(CLIENT, ("192.0.2.1", 80)) + _request(edge, path))
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    logged = edge.envoy.log_entry(path)
    assert logged["downstream_remote_address"] == f"{CLIENT[0]}:{CLIENT[1]}", logged


# Envoy's PROXY protocol listener filter closes a connection whose first bytes are no header at once; a
# proxy that holds it open instead must not pass for one that refused.
CLOSE_BOUND = 5.0


def test_connection_without_header(edge: Deployed) -> None:
    """Strict closes the connection unanswered within CLOSE_BOUND seconds (raw_exchange raises on neither an
    answer nor a close), optional serves it (the generated listener filter's
    allow_requests_without_proxy_protocol). Mutation: proxyProtocol rendered without `optional`
    (components/traffic_policies.py) -> red (optional)."""
    optional = bool(edge.scenario.config.get("client_traffic.proxy_protocol.optional"))
    path = f"/whoami/{uuid.uuid4()}"
    answer = raw_exchange(edge.port("http"), _request(edge, path), timeout=CLOSE_BOUND)
    if optional:
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
        assert edge.envoy.log_entry(path)["downstream_remote_address"].startswith("127.0.0.1:")
    else:
        assert answer == b"", answer[:200]
        assert path not in {e.get("path") for e in edge.envoy.access_log()}


def test_request_received_timeout(edge: Deployed) -> None:
    """A request whose body never completes gets 408 once client_traffic.timeouts.request_received (1s)
    has passed, instead of holding the connection until the idle timeout (1h in the example).
    Mutation: request_received rendered as idleTimeout (components/traffic_policies.py) -> red."""
    head = (
        f"POST /upload HTTP/1.1\r\nHost: {edge.host('http')}\r\nContent-Type: text/plain\r\n"
        "Content-Length: 100\r\n\r\npartial"
    ).encode()
    answer = raw_exchange(edge.port("http"), proxy_v1(CLIENT, ("192.0.2.1", 80)) + head, timeout=15)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]


def _silent_server(close: bool, release: threading.Event) -> tuple[socket.socket, threading.Thread]:
    """A listener that accepts one connection, reads it, then closes it (close) or holds it open, silent,
    until `release`."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        connection, _ = server.accept()
        with connection:
            connection.recv(65536)
            if not close:
                release.wait(CLOSE_BOUND)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread


@pytest.mark.parametrize("close", [True, False], ids=["closes", "hangs"])
def test_raw_exchange_tells_a_close_from_a_hang(close: bool) -> None:
    """The strict-mode assertion above holds only if a hang is not read as a close. Red before the fix:
    raw_exchange swallowed TimeoutError and returned b"" for the silent, open connection too."""
    release = threading.Event()
    server, thread = _silent_server(close, release)
    port = server.getsockname()[1]
    started = time.monotonic()
    try:
        if close:
            assert raw_exchange(port, b"GET / HTTP/1.1\r\n\r\n", timeout=1) == b""
        else:
            with pytest.raises(TimeoutError, match="neither a complete response nor a close within 1s"):
                raw_exchange(port, b"GET / HTTP/1.1\r\n\r\n", timeout=1)
        assert time.monotonic() - started < 2
    finally:
        release.set()
        server.close()
        thread.join(CLOSE_BOUND)
