"""docs/security.md's "Moving to v1.9.3" snippet, read from the page and rendered verbatim: it must be a config
the block accepts, and do what the page says it does (no advisory warning for the controller or the proxy,
no listener guard, the other guards kept, the EnvoyProxyPatch runtime flag off, the mirror's images)."""

from __future__ import annotations

import re
from typing import Any

import yaml

from tests.conftest import ROOT
from tests.support.helpers import load, objects, plan

PAGE = ROOT / "docs" / "security.md"


def _snippet() -> dict[str, Any]:
    blocks = re.findall(r"```yaml\n# v1\.9\.3\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1, "docs/security.md has one v1.9.3 snippet"
    cfg: dict[str, Any] = yaml.safe_load(blocks[0])
    return cfg


def test_the_v1_9_3_snippet_does_what_the_page_says() -> None:
    cfg = _snippet()
    assert not [w for w in load(cfg).warnings if "known issues" in w], "no advisory warning"
    guards = {o["metadata"]["name"] for o in objects(cfg) if o["kind"] == "ValidatingAdmissionPolicy"}
    assert guards == {"envoy-envoyproxy-guard", "envoy-backend-guard"}, guards
    values = plan(cfg).to_dict()["helm"]["values"]
    assert values["config"]["envoyGateway"]["runtimeFlags"] == {"disabled": ["EnvoyProxyPatch"]}
    assert values["global"]["images"]["envoyGateway"]["image"] == "registry.example.com/envoyproxy/gateway:v1.9.3"
    proxies = {
        o["spec"]["provider"]["kubernetes"]["envoyDeployment"]["container"]["image"]
        for o in objects(cfg)
        if o["kind"] == "EnvoyProxy"
    }
    assert proxies == {"registry.example.com/envoyproxy/envoy:distroless-v1.39.6"}


def test_the_default_release_keeps_the_listener_guard() -> None:
    """The comparison the snippet test relies on: without it, v1.9.1 renders the guard."""
    names = {o["metadata"]["name"] for o in objects({}) if o["kind"] == "ValidatingAdmissionPolicy"}
    assert "envoy-listener-guard" in names
