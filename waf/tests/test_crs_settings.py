"""The CRS knobs as typed settings, through a real Envoy: REST verbs pass by default (CRS alone allows
only GET HEAD POST OPTIONS), a method outside allowed_methods is blocked, and UTF-8 validation
(CRS 920250) and the allowed request content types follow their settings.

Mutation check (done once, restored): dropping the 900200 SecAction from Settings.Directives (Go) (CRS's own
GET HEAD POST OPTIONS again) turned test_rest_verbs_pass_by_default[PUT/PATCH/DELETE] red with 403.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from envoy_waf.testbed import Backend, EnvoyProcess, WAFProcess, refused_settings, request

JSON = {"Content-Type": "application/json"}
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
LATIN1_FORM = b"name=Espa%F1a&city=A+Coru%F1a"  # a Latin-1 form post: %F1 is not UTF-8


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
def test_rest_verbs_pass_by_default(envoy: EnvoyProcess, method: str) -> None:
    """Each REST verb on an API path reaches the backend, with a JSON body and without one."""
    body = None if method in ("GET", "HEAD", "DELETE", "OPTIONS") else b'{"name": "widget"}'
    status, _ = request(envoy.port, method, "/api/items/42", body, JSON if body else {})
    assert status == 200


def test_delete_with_a_content_type_and_no_body_passes(envoy: EnvoyProcess) -> None:
    """Clients send DELETE with Content-Type and no body: an empty body is not an unparsable one."""
    for content_type in ("application/json", "application/xml"):
        status, payload = request(envoy.port, "DELETE", "/api/items/42", None, {"Content-Type": content_type})
        assert status == 200, (content_type, payload)


def test_a_method_outside_the_list_is_blocked(envoy: EnvoyProcess, waf: WAFProcess) -> None:
    """An unknown method gets the WAF's 403 (CRS 911100) and the WAF keeps serving."""
    status, payload = request(envoy.port, "PROPFIND", "/api/items")
    assert status == 403, payload
    assert 911100 in waf.events()[-1]["rule_ids"]
    assert request(envoy.port, "GET", "/api/items")[0] == 200


@pytest.fixture(scope="module")
def narrow(backend: Backend, crs: str) -> Iterator[EnvoyProcess]:
    """A WAF with the methods narrowed to GET and POST, UTF-8 validation off, and JSON bodies only."""
    waf = WAFProcess(
        crs,
        allowed_methods=["GET", "POST"],
        validate_utf8=False,
        allowed_request_content_types=["application/json"],
    )
    envoy = EnvoyProcess(backend.port, waf.port)
    yield envoy
    envoy.stop()
    waf.stop()


def test_allowed_methods_is_the_list(narrow: EnvoyProcess) -> None:
    assert request(narrow.port, "POST", "/api", b"{}", JSON)[0] == 200
    assert request(narrow.port, "DELETE", "/api/items/42")[0] == 403


def test_latin1_forms_are_blocked_by_default(envoy: EnvoyProcess, waf: WAFProcess) -> None:
    """UTF-8 validation stays on by default: a Latin-1 %F1 is CRS 920250."""
    assert request(envoy.port, "POST", "/signup", LATIN1_FORM, FORM)[0] == 403
    assert 920250 in waf.events()[-1]["rule_ids"]


def test_validate_utf8_off_passes_latin1_forms(backend: Backend, crs: str) -> None:
    waf = WAFProcess(crs, validate_utf8=False)
    envoy = EnvoyProcess(backend.port, waf.port)
    try:
        assert request(envoy.port, "POST", "/signup", LATIN1_FORM, FORM)[0] == 200
        assert request(envoy.port, "GET", "/item?id=1%27%20OR%20%271%27%3D%271")[0] == 403, "still a WAF"
    finally:
        envoy.stop()
        waf.stop()


def test_content_types_outside_the_list_are_blocked(narrow: EnvoyProcess) -> None:
    assert request(narrow.port, "POST", "/f", b"a=b", FORM)[0] == 403
    assert request(narrow.port, "POST", "/f", b'{"a": "b"}', JSON)[0] == 200


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("allowed_methods", [], "at least one method"),
        ("allowed_methods", ["get"], '"get" is not an upper-case HTTP method'),
        ("allowed_methods", ["GET POST"], '"GET POST" is not an upper-case HTTP method'),
        ("allowed_request_content_types", ["application/json; charset=utf-8"], "no parameters"),
        ("allowed_request_content_types", ["|text/xml|"], "is not a lower-case media type"),
        ("validate_utf8", "no", "validate_utf8 must be true or false"),
        ("paranoia_levl", 2, "unknown settings [paranoia_levl]"),
    ],
)
def test_settings_reject_what_would_break_the_crs_lists(crs: str, key: str, value: object, error: str) -> None:
    """The CRS compares these as space- and |-separated strings: a value with a space or a | in it would
    widen the list silently, so the service refuses to start with it (exit 1, the reason on stderr);
    an unknown key is refused the same way."""
    assert error in refused_settings(crs, **{key: value})
