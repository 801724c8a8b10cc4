"""XML request bodies through a real Envoy: parsed (as modsecurity.conf-recommended does), so attacks in
element text and attributes are blocked for application/xml, text/xml and application/soap+xml; an XXE
(a DTD with an external entity) is refused with 400; malformed and too-deep XML gets 400; an entity
expansion bomb is refused before the engine parses it, fast, and the WAF keeps serving with bounded
memory.

What the engine does by itself (libmodsecurity 3.0.15 with libxml2 2.9.7, measured): external entities
are never fetched, but CRS has no rule that reads a DTD, so an XXE got 200; internal entities are expanded
again by every rule reading XML:/*, so a 128 KiB bomb held the engine for minutes and past 4 GB.

Mutation checks (done once, restored): making xmlguard.refusal return None turned test_xxe_is_refused and
test_entity_bomb_is_refused_fast red (200 and a 504 after Envoy's message timeout); dropping the
REQUEST_BODY_LENGTH chain of rule 200002 turned test_crs_settings
test_delete_with_a_content_type_and_no_body_passes red (400).
"""

from __future__ import annotations

import time

import pytest

from envoy_waf.testbed import EnvoyProcess, WAFProcess, request

XML_TYPES = ["application/xml", "text/xml", "application/soap+xml; charset=utf-8"]
SQLI = b"1 UNION SELECT password FROM users--"
XXE = b'<?xml version="1.0"?><!DOCTYPE order [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><order><id>&xxe;</id></order>'
# 1,000 bytes referenced 3,000 times: 3 MB once expanded, and again for every rule reading XML:/*.
BOMB = b'<?xml version="1.0"?><!DOCTYPE q [<!ENTITY a "' + b"A" * 1000 + b'">]><q>' + b"&a;" * 3000 + b"</q>"
LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">'
    + b"".join(b'<!ENTITY lol%d "%s">' % (i, b"&lol%d;" % (i - 1) * 10) for i in range(1, 10))
    + b"]><lolz>&lol9;</lolz>"
)


def _xml(content_type: str = "application/xml") -> dict[str, str]:
    return {"Content-Type": content_type}


@pytest.mark.parametrize("content_type", XML_TYPES)
def test_benign_xml_passes(envoy: EnvoyProcess, content_type: str) -> None:
    body = b'<?xml version="1.0" encoding="UTF-8"?><order><id>42</id><note a="x">two widgets</note></order>'
    assert request(envoy.port, "POST", "/api/orders", body, _xml(content_type))[0] == 200


@pytest.mark.parametrize("content_type", XML_TYPES)
def test_attacks_in_xml_are_blocked(envoy: EnvoyProcess, content_type: str) -> None:
    """The CRS reads XML element text and attributes: the body was parsed."""
    for body in (b"<q>" + SQLI + b"</q>", b'<q a="' + SQLI + b'">x</q>'):
        assert request(envoy.port, "POST", "/api", body, _xml(content_type))[0] == 403, body


@pytest.mark.parametrize("content_type", XML_TYPES)
def test_xxe_is_refused(envoy: EnvoyProcess, waf: WAFProcess, content_type: str) -> None:
    status, payload = request(envoy.port, "POST", "/api/orders", XXE, _xml(content_type))
    assert status == 400, payload
    assert b"document type declaration" in payload
    assert waf.events()[-1]["action"] == "refused"


@pytest.mark.parametrize(
    "body",
    [
        '<?xml version="1.0" encoding="UTF-16"?><!DOCTYPE o [<!ENTITY x SYSTEM "file:///etc/passwd">]><o>&x;</o>'.encode(
            "utf-16"
        ),
        b'<?xml version="1.0" encoding="UTF-7"?>+ADw-!DOCTYPE o+AD4-<o/>',
    ],
    ids=["utf-16", "utf-7"],
)
def test_a_dtd_cannot_hide_in_another_encoding(envoy: EnvoyProcess, body: bytes) -> None:
    status, payload = request(envoy.port, "POST", "/api", body, _xml())
    assert status == 400, payload
    assert b"must be UTF-8" in payload


@pytest.mark.parametrize(
    "body",
    [b"<order><id>5</order", b"<a>" * 300 + b"x" + b"</a>" * 300],
    ids=["malformed", "deeper-than-256"],
)
def test_malformed_and_too_deep_xml_get_400(envoy: EnvoyProcess, body: bytes) -> None:
    assert request(envoy.port, "POST", "/api", body, _xml())[0] == 400


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks of 1/100 s


@pytest.mark.parametrize("bomb", [BOMB, LAUGHS], ids=["quadratic", "billion-laughs"])
def test_entity_bomb_is_refused_fast(envoy: EnvoyProcess, waf: WAFProcess, bomb: bytes) -> None:
    """20 bombs cost the WAF well under a second of CPU (one parsed bomb took 3 s) and no memory."""
    before = _cpu_seconds(waf.worker_pid())
    for _ in range(20):
        started = time.monotonic()
        status, _ = request(envoy.port, "POST", "/api", bomb, _xml())
        assert status == 400
        assert time.monotonic() - started < 0.5
    assert _cpu_seconds(waf.worker_pid()) - before < 1.0
    assert waf.process.poll() is None
    assert not [e for e in waf.lifecycle() if e["event"] == "worker_replaced"]
    assert request(envoy.port, "GET", "/")[0] == 200
    assert request(envoy.port, "POST", "/api", b"<q>" + SQLI + b"</q>", _xml())[0] == 403
