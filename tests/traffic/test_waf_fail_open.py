"""`waf.fail_open: true` (examples/waf with it set): when the WAF is unreachable, Envoy passes requests
unchecked instead of failing them; when it is back, it blocks again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.translator import configs

from .deploy import Deployed, deployed
from .stack import http_request, wait_for

XSS = "/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E"


@pytest.fixture(scope="module")
def edge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployed]:
    cfg = {**configs.EXAMPLES["waf"], "waf": {**configs.EXAMPLES["waf"]["waf"], "fail_open": True}}
    with deployed(cfg, Path(tmp_path_factory.mktemp("waf-open"))) as running:
        yield running


def _status(edge: Deployed, path: str = "/") -> int:
    return http_request(edge.port("http"), edge.host("http"), path)[0]


def test_waf_stopped_passes_unchecked_then_blocks_again(edge: Deployed) -> None:
    """Mutation: failOpen ignored (always false) in components/waf.py -> red (500 with the WAF stopped)."""
    assert edge.waf is not None
    assert _status(edge, XSS) == 403
    edge.waf.stop()
    try:
        assert [_status(edge), _status(edge, XSS)] == [200, 200]
    finally:
        edge.waf.start()
    wait_for("the restarted WAF blocking again", lambda: _status(edge, XSS) == 403)
    assert _status(edge) == 200
