"""Response inspection (inspect_response, off by default) through a real Envoy whose ext_proc filter sends
the response headers and body as the block's EnvoyExtensionPolicy does with waf.response_inspection on
(processingMode.response.body BufferedPartial): a backend response that leaks a SQL error or a directory
listing is replaced by the WAF's 403, benign responses pass untouched, and with the setting off the same
leaks reach the client.

Bodies longer than the limits, as documented in the block's docs/waf.md: the WAF inspects the first
response_body_limit bytes; Envoy hands it at most the Gateway's buffer and streams the rest, so a large
response passes whole (Buffered would turn it into Envoy's 500, which is why the block uses
BufferedPartial) and a leak past the limit passes uninspected.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from envoy_waf.testbed import Backend, EnvoyProcess, WAFProcess, refused_settings, request

HTML = [("Content-Type", "text/html; charset=utf-8")]
SQL_ERROR = (
    b"<html><body><p>You have an error in your SQL syntax; check the manual that corresponds to your MySQL "
    b"server version for the right syntax to use near '' at line 1</p></body></html>"
)
LISTING = (
    b"<html><head><title>Index of /backup</title></head><body><h1>Index of /backup</h1>"
    b'<ul><li><a href="db.sql">db.sql</a></li></ul></body></html>'
)
JSON_ERROR = b'{"error": "ORA-00933: SQL command not properly ended"}'
BENIGN = b"<html><head><title>Shop</title></head><body><h1>Our products</h1><p>Widgets.</p></body></html>"
LIMIT = 16384  # response_body_limit of the WAF
BUFFER = 65536  # the Gateway's buffer (listener per_connection_buffer_limit_bytes), above LIMIT as the block checks
BIG = 4 * BUFFER
PAD = b"<p>" + b"x" * 60 + b"</p>\n"

ROUTES = {
    "/sql-error": (500, HTML, SQL_ERROR),
    "/listing": (200, HTML, LISTING),
    "/json-error": (200, [("Content-Type", "application/json")], JSON_ERROR),
    "/benign": (200, HTML, BENIGN),
    "/binary-sql-error": (200, [("Content-Type", "application/octet-stream")], SQL_ERROR),
    "/big-benign": (200, HTML, PAD * (BIG // len(PAD))),
    "/big-leak-first": (200, HTML, SQL_ERROR + PAD * (BIG // len(PAD))),
    "/big-leak-after-the-limit": (200, HTML, PAD * (2 * LIMIT // len(PAD)) + SQL_ERROR),
}
LEAKS = {"/sql-error": 951230, "/listing": 950130, "/json-error": 951120}  # path: the CRS rule it trips


@pytest.fixture(scope="module")
def leaky() -> Iterator[Backend]:
    b = Backend(routes=ROUTES)
    yield b
    b.stop()


def _stack(backend: Backend, crs: str, **settings: Any) -> tuple[WAFProcess, EnvoyProcess]:
    waf = WAFProcess(crs, **settings)
    envoy = EnvoyProcess(backend.port, waf.port, response_body="BUFFERED_PARTIAL", buffer_limit=BUFFER)
    return waf, envoy


@pytest.fixture(scope="module")
def inspecting(leaky: Backend, crs: str) -> Iterator[tuple[WAFProcess, EnvoyProcess]]:
    waf, envoy = _stack(leaky, crs, inspect_response=True, response_body_limit=LIMIT)
    yield waf, envoy
    envoy.stop()
    waf.stop()


@pytest.mark.parametrize(("path", "rule_id"), LEAKS.items())
def test_leaking_responses_are_blocked_when_on(
    inspecting: tuple[WAFProcess, EnvoyProcess], path: str, rule_id: int
) -> None:
    """A SQL error (HTML and JSON) or a directory listing never reaches the client: 403 from the WAF, logged
    as a response-phase block with the CRS rule ids.

    Mutation: making responseVerdict (internal/server) always pass -> red (200 with the leak)."""
    waf, envoy = inspecting
    status, payload = request(envoy.port, "GET", path)
    assert status == 403, payload
    assert payload.startswith(b"Response blocked (request id ")
    event = waf.events()[-1]
    assert (event["phase"], event["action"]) == ("response", "block")
    assert rule_id in event["rule_ids"]


def test_benign_responses_pass_untouched_when_on(inspecting: tuple[WAFProcess, EnvoyProcess]) -> None:
    """Benign pages, bodiless responses (HEAD) and media types the engine does not read pass as sent."""
    _, envoy = inspecting
    assert request(envoy.port, "GET", "/benign") == (200, BENIGN)
    assert request(envoy.port, "HEAD", "/sql-error")[0] == 200
    assert request(envoy.port, "GET", "/binary-sql-error") == (200, SQL_ERROR)


@pytest.mark.parametrize("envoy_sends_responses", [False, True], ids=["block-default", "service-setting-off"])
def test_leaks_pass_when_off(leaky: Backend, crs: str, envoy_sends_responses: bool) -> None:
    """Off (the default) the WAF never touches a response: neither without the response phase in Envoy (what
    the block renders then) nor when Envoy sends responses to a WAF whose inspect_response is off.

    Mutation: defaulting Settings.inspect_response to True -> red ([service-setting-off]: 403 instead of the
    leak; [block-default] stays green by design, the unit test eep-no-response-phase guards the policy)."""
    waf = WAFProcess(crs)
    envoy = (
        EnvoyProcess(leaky.port, waf.port, response_body="BUFFERED_PARTIAL", buffer_limit=BUFFER)
        if envoy_sends_responses
        else EnvoyProcess(leaky.port, waf.port)
    )
    try:
        for path in LEAKS:
            assert request(envoy.port, "GET", path) == (ROUTES[path][0], ROUTES[path][2]), path
        assert request(envoy.port, "GET", "/item?id=1%27%20OR%20%271%27%3D%271")[0] == 403, "still a WAF"
    finally:
        envoy.stop()
        waf.stop()


def test_responses_larger_than_the_limits(inspecting: tuple[WAFProcess, EnvoyProcess]) -> None:
    """A response four times the Gateway's buffer passes whole; a leak in its first bytes is blocked; a leak
    after response_body_limit passes uninspected (the documented trade-off).

    Mutation: processing mode BUFFERED instead of BUFFERED_PARTIAL in _stack -> red (Envoy's 500 for the
    large benign response); inspecting the whole first message (no [:response_body_limit] in
    server.WAF.Process and SecResponseBodyLimit 1 MiB in settings: both bound it) -> red (late leak blocked)."""
    _, envoy = inspecting
    big = ROUTES["/big-benign"][2]
    assert request(envoy.port, "GET", "/big-benign") == (200, big)
    assert request(envoy.port, "GET", "/big-leak-first")[0] == 403
    late = ROUTES["/big-leak-after-the-limit"][2]
    assert len(late) - len(SQL_ERROR) > LIMIT
    assert request(envoy.port, "GET", "/big-leak-after-the-limit") == (200, late)


def test_detect_mode_logs_a_leak_and_passes_it(leaky: Backend, crs: str) -> None:
    """detect: the leak reaches the client, the log says what would have been blocked.

    Mutation: dropping the detect action in judge (internal/server) -> red (logged as "flag")."""
    waf, envoy = _stack(leaky, crs, mode="detect", inspect_response=True, response_body_limit=LIMIT)
    try:
        assert request(envoy.port, "GET", "/sql-error") == (500, SQL_ERROR)
        event = waf.events()[-1]
        assert (event["phase"], event["action"]) == ("response", "detect")
    finally:
        envoy.stop()
        waf.stop()


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("inspect_response", "yes", "inspect_response must be true or false"),
        ("response_body_limit", 0, "response_body_limit must be a number of bytes above 0"),
        ("response_body_limit", True, "response_body_limit must be an integer"),
    ],
)
def test_settings_reject_bad_response_values(crs: str, key: str, value: object, error: str) -> None:
    assert error in refused_settings(crs, **{key: value})
