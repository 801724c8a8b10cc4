"""Lines a test shows in `make test`'s output (traffic verdicts, which alert fired when, failed-request counts),
not only with -s: printed past pytest's capture, also from a fixture's teardown. Under pytest-xdist, whose
workers' output is not shown, they go to the controller, which prints every worker's at the end
(tests/conftest.py)."""

from __future__ import annotations

import pytest

WORKER_KEY = "envoy_shown"
COLLECTED: list[str] = []  # the controller's, from its workers
_session: list[pytest.Config] = []


def remember(config: pytest.Config) -> None:
    _session[:] = [config]


def show(text: str) -> None:
    if not _session:  # imported outside a pytest run
        print(text, flush=True)
        return
    config = _session[0]
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput.setdefault(WORKER_KEY, []).append(text)
        return
    capture = config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled():
        print(f"\n{text}", flush=True)
