"""The WAF learns the real client through Envoy Gateway's generated configuration: the block's
EnvoyExtensionPolicy asks for Envoy's source.address (and port, destination, protocol) attributes, Envoy
Gateway turns them into the ext_proc filter's request_attributes, and the WAF feeds them to the engine
(REMOTE_ADDR) and its audit line. With the PROXY protocol on (examples/proxy-protocol, optional here so
one Gateway serves both cases) the client is the PROXY header's address; without a header, the peer's.

Mutation checks (done once each, restored): rendering the policy without `attributes`
(components/waf.py) -> red (client "0.0.0.0" in every audit line, the banned client passes); passing
no client to the engine's ProcessConnection (waf/internal/server) -> red (the REMOTE_ADDR rule never fires).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.translator import configs

from .deploy import Deployed, deployed
from .stack import proxy_v1, proxy_v2, raw_exchange, wait_for

CLIENT = ("203.0.113.7", 40123)
BANNED = ("203.0.113.66", 40124)
XSS = "/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E"


def _config() -> dict[str, Any]:
    cfg: dict[str, Any] = copy.deepcopy(configs.EXAMPLES["waf"])
    cfg["client_traffic"] = {"enabled": True, "proxy_protocol": {"enabled": True, "optional": True}}
    cfg["waf"]["extra_directives"] = (
        'SecRule REMOTE_ADDR "@ipMatch 203.0.113.66" "id:10066,phase:1,deny,status:403,log,msg:\'banned client\'"'
    )
    return cfg


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    with deployed(_config(), Path(tmp_path_factory.mktemp("waf-client"))) as running:
        yield running


def _get(edge: Deployed, path: str, proxy: bytes = b"") -> bytes:
    request = f"GET {path} HTTP/1.1\r\nHost: {edge.host('http')}\r\nConnection: close\r\n\r\n".encode()
    return raw_exchange(edge.port("http"), proxy + request)


def _audit_for(edge: Deployed, marker: str) -> dict[str, Any]:
    """The WAF's audit line of the one request whose path holds `marker`."""
    assert edge.waf is not None
    found: list[dict[str, Any]] = []

    def logged() -> bool:
        found[:] = [e for e in edge.waf.audit() if marker in e["path"]]  # type: ignore[union-attr]
        return bool(found)

    wait_for(f"the WAF's audit line for {marker}", logged, timeout=10)
    assert len(found) == 1, found
    return found[0]


def test_the_policy_asks_envoy_for_the_client(edge: Deployed) -> None:
    """The generated ext_proc filter carries the attributes (what Envoy Gateway made of the policy)."""
    text = str(edge.scenario.bootstrap)
    assert "source.address" in text, "Envoy Gateway's ext_proc filter asks for no client address"


@pytest.mark.parametrize("header", [proxy_v1, proxy_v2], ids=["v1", "v2"])
def test_audit_line_shows_the_proxy_headers_client(edge: Deployed, header: Any) -> None:
    marker = f"pp-{header.__name__}"
    answer = _get(edge, f"{XSS}&m={marker}", header(CLIENT, ("192.0.2.1", 80)))
    assert answer.startswith(b"HTTP/1.1 403"), answer[:200]
    line = _audit_for(edge, marker)
    assert line["client"] == CLIENT[0], line
    assert line["action"] == "block"


def test_audit_line_shows_the_peer_without_a_header(edge: Deployed) -> None:
    answer = _get(edge, f"{XSS}&m=no-header")
    assert answer.startswith(b"HTTP/1.1 403"), answer[:200]
    assert _audit_for(edge, "no-header")["client"] == "127.0.0.1"


def test_a_remote_addr_rule_takes_effect(edge: Deployed) -> None:
    """waf.extra_directives bans one address: that client gets 403 on a benign request, others pass."""
    banned = _get(edge, "/?m=banned", proxy_v1(BANNED, ("192.0.2.1", 80)))
    assert banned.startswith(b"HTTP/1.1 403"), banned[:200]
    line = _audit_for(edge, "m=banned")
    assert (line["client"], line["rule_ids"]) == (BANNED[0], [10066]), line
    assert _get(edge, "/?m=fine", proxy_v1(CLIENT, ("192.0.2.1", 80))).startswith(b"HTTP/1.1 200")
    assert _get(edge, "/?m=fine-no-header").startswith(b"HTTP/1.1 200")
