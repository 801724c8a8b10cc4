"""`waf.response_inspection.enabled` (examples/waf with it on): the block's EnvoyExtensionPolicy sends the
responses to the WAF too, and a response that leaks a database error is replaced by the block status;
with it off (examples/waf itself, test_waf.py's stack) the same response reaches the client."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.translator import configs

from .deploy import Deployed, deployed
from .stack import LEAK, http_request


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    cfg: dict[str, Any] = copy.deepcopy(configs.EXAMPLES["waf"])
    cfg["waf"]["response_inspection"] = {"enabled": True}
    with deployed(cfg, Path(tmp_path_factory.mktemp("waf-responses"))) as running:
        yield running


def test_a_leaking_response_is_blocked(edge: Deployed) -> None:
    """Mutation: processingMode.response left out of the policy (components/waf.py) -> red (500 and the
    error page reach the client)."""
    status, body, _ = http_request(edge.port("http"), edge.host("http"), "/leak/orders")
    assert status == 403, body[:200]
    assert LEAK not in body


def test_benign_responses_pass(edge: Deployed) -> None:
    status, body, _ = http_request(edge.port("http"), edge.host("http"), "/orders/42")
    assert status == 200
    assert edge.backend("http").encode() in body
