"""Fail-closed by default: with the WAF down Envoy answers 500 (no unfiltered traffic); fail-open passes
traffic (attacks included) while it is down; enforcement resumes when it is back. Detection-only passes
attacks but logs their rule ids.

Mutation check (done once): starting the fail-closed Envoy with failure_mode_allow true turned
test_fail_closed_when_the_waf_is_down_and_recovers red.
"""

from __future__ import annotations

import pytest

from envoy_waf.testbed import Backend, EnvoyProcess, WAFProcess, free_port, request

SQLI = "/item?id=1%27%20OR%20%271%27%3D%271"


@pytest.fixture
def waf_port() -> int:
    return free_port()


def test_fail_closed_when_the_waf_is_down_and_recovers(backend: Backend, waf_port: int, crs: str) -> None:
    envoy = EnvoyProcess(backend.port, waf_port, fail_open=False)
    try:
        assert request(envoy.port, "GET", "/")[0] == 500
        assert request(envoy.port, "GET", SQLI)[0] == 500
        waf = WAFProcess(crs, port=waf_port)
        try:
            statuses = [request(envoy.port, "GET", "/")[0] for _ in range(20)]
            assert statuses[-1] == 200, statuses
            assert request(envoy.port, "GET", SQLI)[0] == 403
        finally:
            waf.stop()
    finally:
        envoy.stop()


def test_fail_open_passes_traffic_while_the_waf_is_down(backend: Backend, waf_port: int) -> None:
    envoy = EnvoyProcess(backend.port, waf_port, fail_open=True)
    try:
        assert request(envoy.port, "GET", SQLI)[0] == 200, "fail-open lets attacks through: the trade-off"
    finally:
        envoy.stop()


def test_detection_only_passes_and_logs(backend: Backend, crs: str) -> None:
    waf = WAFProcess(crs, mode="detect")
    envoy = EnvoyProcess(backend.port, waf.port)
    try:
        assert request(envoy.port, "GET", SQLI)[0] == 200
        events = waf.events()
        assert events
        assert events[-1]["action"] == "detect"
        assert 942100 in events[-1]["rule_ids"]
    finally:
        envoy.stop()
        waf.stop()
