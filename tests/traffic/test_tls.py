"""TLS on the default Gateway: an HTTPS listener terminating with the certificate of the Secret it
references (the fixture for *.example.com), and a TLS Passthrough listener that routes by SNI to a tenant's
TLS backend, which terminates the session itself with its own certificate."""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.translator import configs
from tests.translator.tenant import FIXTURES

from .deploy import Deployed, deployed

_LISTENERS = {spec["name"]: spec for spec in configs.EVERY_PROTOCOL["default_gateway"]["listeners"]}
TLS_CONFIG: dict[str, Any] = {
    "default_gateway": {
        "enabled": True,
        # Passthrough not on 8443: the tenant's TLS backend listens there (tests/translator/tenant.py).
        "listeners": [_LISTENERS["https"], {**_LISTENERS["tls-passthrough"], "port": 9443}],
    }
}


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    with deployed(TLS_CONFIG, Path(tmp_path_factory.mktemp("tls"))) as running:
        yield running


def _exchange(port: int, server_name: str, ca: Path, data: bytes) -> tuple[bytes, bytes]:
    """(peer certificate DER, what came back) over TLS to 127.0.0.1:`port` with SNI `server_name`,
    verifying the peer against `ca` (a self-signed certificate: only that one verifies)."""
    context = ssl.create_default_context(cafile=str(ca))
    with (
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        context.wrap_socket(raw, server_hostname=server_name) as tls,
    ):
        der = tls.getpeercert(binary_form=True) or b""
        tls.sendall(data)
        received = b""
        while chunk := tls.recv(65536):
            received += chunk
    return der, received


def test_https_listener_terminates_with_the_referenced_certificate(edge: Deployed) -> None:
    request = b"GET /tls HTTP/1.1\r\nHost: app.example.com\r\nConnection: close\r\n\r\n"
    der, answer = _exchange(edge.port("https"), "app.example.com", FIXTURES / "tls.crt", request)
    fixture = ssl.PEM_cert_to_DER_cert((FIXTURES / "tls.crt").read_text(encoding="utf-8"))
    assert der == fixture
    assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    assert edge.backend("https").encode() in answer


def test_passthrough_listener_routes_by_sni_untouched(edge: Deployed, tmp_path: Path) -> None:
    """The TLS session is the backend's own: its certificate verifies, it sees the client's SNI, and the
    Gateway's certificate is never presented."""
    name = edge.backend("tls-passthrough")
    backend = edge.tls_backends[name]
    ca = backend.certificate
    der, answer = _exchange(edge.port("tls-passthrough"), "db.example.com", ca, b"hello\n")
    assert der == ssl.PEM_cert_to_DER_cert(ca.read_text(encoding="utf-8"))
    assert der != ssl.PEM_cert_to_DER_cert((FIXTURES / "tls.crt").read_text(encoding="utf-8"))
    assert answer == f"tls-backend {name}\n".encode()
    assert backend.server_names[-1] == "db.example.com"


def _handshake(port: int, server_name: str) -> str:
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
            context.wrap_socket(raw, server_hostname=server_name),
        ):
            return "completed"
    except (ssl.SSLError, OSError) as exc:
        return f"refused: {exc}"


def test_passthrough_listener_refuses_other_server_names(edge: Deployed) -> None:
    port = edge.port("tls-passthrough")
    assert _handshake(port, "db.example.com") == "completed"
    assert _handshake(port, "other.example.com").startswith("refused"), "no route matches other.example.com"
    backend = edge.tls_backends[edge.backend("tls-passthrough")]
    assert "other.example.com" not in backend.server_names
