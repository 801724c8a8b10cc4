"""Which request bodies reach the WAF through a real Envoy with the ext_proc filter buffering bodies, given
the two buffers Envoy Gateway sets from a ClientTrafficPolicy: the listener's per_connection_buffer_limit_bytes
(connection.bufferLimit, HTTP/1.1) and the HTTP/2 initial stream window (http2.initialStreamWindowSize).
This is the ground the block's rule stands on (envoy_block/body_buffer.py; the translator gate proves the
block's policy becomes exactly these two fields):

- with Envoy Gateway's own 32 KiB / 64 KiB, Envoy answers 413 itself to bodies past them, before the WAF;
- Envoy counts only the body's bytes: with both buffers at waf.body.limit, a body of exactly the limit
  reaches the WAF (even behind 40 KiB of headers) and one byte more gets Envoy's 413, so reject needs no
  headroom;
- with partial, bodies past the limit pass with their first `limit` bytes inspected, up to the buffer.

Each case runs over HTTP/1.1 and over HTTP/2 (curl, h2c with prior knowledge): the two protocols hit
different buffers.

Mutation checks (done once, each restored): leaving http2_stream_window at Envoy Gateway's 65536 in the
`sized` Envoy turned test_body_of_exactly_the_limit_reaches_the_waf[h2c] red (413 instead of 200), and a
buffer_limit one byte below the limit turned its [http1.1] case red the same way.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

from envoy_waf.testbed import Backend, EnvoyProcess, WAFProcess

ENVOY_GATEWAY_BUFFER = 32768  # Envoy Gateway v1.9.0: tcpListenerPerConnectionBufferLimitBytes
ENVOY_GATEWAY_WINDOW = 65536  # Envoy Gateway v1.9.0: http2InitialStreamWindowSize
LIMIT = 98304  # above both of Envoy Gateway's values
ENVOY_413 = "Payload Too Large"  # Envoy's own local reply; the WAF's says "Request body too large to inspect"
XSS_HEAD = b"comment=<script>alert(1)</script>&"
XSS_TAIL = b"&comment=<script>alert(1)</script>"
PROTOCOLS = ["http1.1", "h2c"]


@cache
def _curl() -> str:
    curl = shutil.which("curl")
    if curl is None or "HTTP2" not in subprocess.run([curl, "-V"], check=False, capture_output=True, text=True).stdout:
        pytest.fail("these tests need curl with HTTP/2 support (Debian's curl package) on PATH")
    return curl


def post(
    port: int,
    protocol: str,
    size: int,
    tmp: Path,
    *,
    head: bytes = b"",
    tail: bytes = b"",
    header_bytes: int = 0,
    chunked: bool = False,
) -> tuple[int, str]:
    """POST a form body of exactly `size` bytes, `head` first and `tail` last; returns (status, body)."""
    content = head + b"a=" + b"x" * (size - 2 - len(head) - len(tail)) + tail
    assert len(content) == size
    body = tmp / f"body-{size}-{len(head)}-{len(tail)}"
    body.write_bytes(content)
    command = [
        _curl(),
        "--silent",
        "--output",
        "-",
        "--write-out",
        "\n%{http_code}",
        "--data-binary",
        f"@{body}",
        "-H",
        "Content-Type: application/x-www-form-urlencoded",
        "-H",
        "User-Agent: waf-tests/1.0",
        "-H",
        "Accept: */*",
    ]
    if protocol == "h2c":
        command.append("--http2-prior-knowledge")
    if header_bytes:
        command += ["-H", "X-Padding: " + "p" * header_bytes]
    if chunked:
        command += ["-H", "Transfer-Encoding: chunked"]
    done = subprocess.run(
        [*command, f"http://127.0.0.1:{port}/form"], check=True, capture_output=True, text=True, timeout=30
    )
    text, _, status = done.stdout.rpartition("\n")
    return int(status), text


@pytest.fixture(scope="module")
def reject(crs: str) -> Iterator[WAFProcess]:
    w = WAFProcess(crs, body_limit=LIMIT, body_limit_action="reject")
    yield w
    w.stop()


@pytest.fixture(scope="module")
def envoy_gateway_defaults(backend: Backend, reject: WAFProcess) -> Iterator[EnvoyProcess]:
    e = EnvoyProcess(
        backend.port, reject.port, buffer_limit=ENVOY_GATEWAY_BUFFER, http2_stream_window=ENVOY_GATEWAY_WINDOW
    )
    yield e
    e.stop()


@pytest.fixture(scope="module")
def sized(backend: Backend, reject: WAFProcess) -> Iterator[EnvoyProcess]:
    """Both buffers at waf.body.limit, as the block renders them for limit_action reject."""
    e = EnvoyProcess(backend.port, reject.port, buffer_limit=LIMIT, http2_stream_window=LIMIT)
    yield e
    e.stop()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_envoy_gateways_buffers_answer_before_the_waf(
    envoy_gateway_defaults: EnvoyProcess, protocol: str, tmp_path: Path
) -> None:
    """The finding: a body between Envoy Gateway's buffer and waf.body.limit never reaches the WAF."""
    size = {"http1.1": 40000, "h2c": 70000}[protocol]
    assert post(envoy_gateway_defaults.port, protocol, size, tmp_path) == (413, ENVOY_413)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_body_of_exactly_the_limit_reaches_the_waf(sized: EnvoyProcess, protocol: str, tmp_path: Path) -> None:
    """The whole body, headers aside: benign passes, an attack in its last bytes is blocked by the WAF."""
    assert post(sized.port, protocol, LIMIT, tmp_path, header_bytes=40 * 1024)[0] == 200
    assert post(sized.port, protocol, LIMIT, tmp_path, tail=XSS_TAIL)[0] == 403


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_one_byte_past_the_limit_is_envoys_413(sized: EnvoyProcess, protocol: str, tmp_path: Path) -> None:
    """No headroom needed: past the limit the status is the WAF's own for reject (413), from Envoy."""
    assert post(sized.port, protocol, LIMIT + 1, tmp_path) == (413, ENVOY_413)


def test_chunked_bodies_count_the_same(sized: EnvoyProcess, tmp_path: Path) -> None:
    """HTTP/1.1 chunked encoding: the decoded body counts, not the chunk framing."""
    assert post(sized.port, "http1.1", LIMIT, tmp_path, tail=XSS_TAIL, chunked=True)[0] == 403
    assert post(sized.port, "http1.1", LIMIT + 1, tmp_path, chunked=True) == (413, ENVOY_413)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_partial_inspects_the_first_limit_bytes_up_to_the_buffer(
    backend: Backend, crs: str, protocol: str, tmp_path: Path
) -> None:
    """partial, with the buffer at max_size (4 x the limit here): a larger body passes, an attack in its
    first `limit` bytes is blocked, one after them passes uninspected (partial's trade-off), and past the
    buffer Envoy answers 413."""
    limit, max_size = 65536, 4 * 65536
    waf = WAFProcess(crs, body_limit=limit, body_limit_action="partial")
    envoy = EnvoyProcess(backend.port, waf.port, buffer_limit=max_size, http2_stream_window=max_size)
    try:
        assert post(envoy.port, protocol, 2 * limit, tmp_path)[0] == 200
        assert post(envoy.port, protocol, 2 * limit, tmp_path, head=XSS_HEAD)[0] == 403
        assert post(envoy.port, protocol, max_size, tmp_path, tail=XSS_TAIL)[0] == 200
        assert post(envoy.port, protocol, max_size + 1, tmp_path) == (413, ENVOY_413)
    finally:
        envoy.stop()
        waf.stop()
