"""status reads back what the plan names and fails while anything is unhealthy; chart credentials never
appear in any output of install, plan, status or uninstall, even at -vvv."""

from __future__ import annotations

import pytest

from tests.emulated.conftest import Emulator, base_config

pytestmark = pytest.mark.playbook
SECRET = "pw-Kx9-never-printed"


def _set_condition(emulator: Emulator, path: str, kind: str) -> None:
    code, obj = emulator.request("GET", path)
    assert code == 200, obj
    obj["status"] = {
        "conditions": [
            {
                "type": kind,
                "status": "True",
                "reason": kind,
                "message": "set by the test, standing in for the controller",
                "lastTransitionTime": "2026-01-01T00:00:00Z",
            }
        ]
    }
    if obj["kind"] == "Gateway":
        obj["status"]["addresses"] = [{"type": "IPAddress", "value": "192.0.2.10"}]
    code, body = emulator.request("PUT", path, obj)
    assert code == 200, body


def test_status_fails_until_healthy(emulator: Emulator) -> None:
    cfg = base_config()
    assert emulator.playbook("install", cfg).returncode == 0
    unhealthy = emulator.playbook("status", cfg)
    assert unhealthy.returncode != 0
    assert "UNHEALTHY" in unhealthy.output

    gapi = "/apis/gateway.networking.k8s.io/v1"
    for name in ("eg-shared", "eg-dedicated"):
        _set_condition(emulator, f"{gapi}/gatewayclasses/{name}", "Accepted")
    _set_condition(emulator, f"{gapi}/namespaces/envoy-gateway-system/gateways/eg-shared", "Programmed")
    healthy = emulator.playbook("status", cfg)
    assert healthy.returncode == 0, healthy.output[-4000:]
    assert "192.0.2.10" in healthy.output
    assert "UNHEALTHY" not in healthy.output


def test_credentials_never_in_output(emulator: Emulator) -> None:
    cfg = base_config(chart={"auth": {"username": "robot", "password": SECRET}})
    for action in ("install", "plan", "status", "uninstall"):
        run = emulator.playbook(action, cfg, "-vvv")
        assert SECRET not in run.output, action
    assert SECRET not in str(emulator.state())
