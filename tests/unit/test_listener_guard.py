"""Invariant: while the configured controller lacks Envoy Gateway v1.9.2's listener fixes, listeners that it
translates into filter chains Envoy rejects are stopped before they reach the proxies: the bootstrap
Gateway's at render, tenants' Gateways of the block's classes at admission (tenant_guards.listeners, on by
default), and the rule is the same in both.

The rendered policy is evaluated with a CEL engine on the shared cases (tests/support/tenant_objects.py
LISTENER_CASES); tests/cluster/test_merged_listeners.py sends them to the real API server and shows, with the
guard off, the real controller and proxies failing exactly where it refuses. Mutation: listener-guard-merged
(tools/mutate.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from envoy_block.config import ConfigError
from tests.support import gate
from tests.support.admission import denials, judged
from tests.support.helpers import find, load, objects
from tests.support.tenant_objects import (
    LISTENER_CASES,
    LISTENER_CONFIG,
    ONE_GATEWAY_HINT,
    SAME_HOSTNAME_HINT,
    https_listener,
    listener_gateway,
    tls_listener,
)

# Judged with the gate's tools (kubernetes-validate, CEL: jsonschema 4), which Polycrate's image Python cannot
# have: not in make unit-image.
pytestmark = pytest.mark.not_in_image

NAME = "envoy-listener-guard"


def _guard(cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    return find(LISTENER_CONFIG if cfg is None else cfg, "ValidatingAdmissionPolicy", NAME)


def _guards(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    return [o for o in objects(cfg) if o["metadata"]["name"] == NAME]


@pytest.mark.parametrize(("gateway", "expected"), [c[1:] for c in LISTENER_CASES], ids=[c[0] for c in LISTENER_CASES])
def test_listener_guard(gateway: dict[str, Any], expected: str | None) -> None:
    assert gate.validate(gateway).ok, "the case must be a Gateway the CRD accepts"
    found = judged(_guard(), gateway, expected)
    if expected is not None:
        assert "v1.9.1" in found[0], "the message names the release"
        assert "fixed in v1.9.2" in found[0], "the message names the fix"


def test_the_bootstrap_gateway_is_judged_at_render_not_admission() -> None:
    """The block's own Gateway is exempt (its listeners are checked when the config is), the same Gateway
    anywhere else is a tenant's."""
    default = find(LISTENER_CONFIG, "Gateway")
    assert denials(_guard(), default) == []
    moved = {**default, "metadata": {**default["metadata"], "namespace": "tenant-listeners"}}
    catch_all = {**moved, "spec": {**moved["spec"], "listeners": [https_listener("https")]}}
    assert denials(_guard(), catch_all), "a tenant's Gateway named like the bootstrap one is judged"


def test_without_the_bootstrap_gateway_only_a_gateways_own_listeners_count() -> None:
    policy = _guard({})
    alone = listener_gateway("catch-all", "eg-shared", https_listener("https"))
    assert denials(policy, alone) == [], "no TLS listener to clash with on the shared class"
    both = listener_gateway("both", "eg-shared", https_listener("https"), tls_listener("tls", hostname="a.example.com"))
    (message,) = denials(policy, both)
    assert ONE_GATEWAY_HINT in message


def test_bootstrap_hostnames_are_taken_on_the_shared_class() -> None:
    """A bootstrap TLS listener with a hostname: a tenant's HTTPS listener with the same port and hostname
    would get the same SNI match (envoyproxy/gateway#10013); another hostname, port or class is fine."""
    cfg = {
        "default_gateway": {
            "enabled": True,
            "listeners": [
                {
                    "name": "tls",
                    "protocol": "TLS",
                    "port": 443,
                    "hostname": "api.example.com",
                    "tls_mode": "Passthrough",
                }
            ],
        }
    }
    policy = _guard(cfg)
    same = listener_gateway("same", "eg-shared", https_listener("https", hostname="api.example.com"))
    (message,) = denials(policy, same)
    assert SAME_HOSTNAME_HINT in message
    for gateway in (
        listener_gateway("other", "eg-shared", https_listener("https", hostname="shop.example.com")),
        listener_gateway("port", "eg-shared", https_listener("https", 8443, "api.example.com")),
        listener_gateway("own", "eg-dedicated", https_listener("https", hostname="api.example.com")),
    ):
        assert denials(policy, gateway) == [], gateway["metadata"]["name"]


def test_on_by_default_switchable_and_gone_with_the_fix() -> None:
    assert _guards(LISTENER_CONFIG)
    assert not _guards({**LISTENER_CONFIG, "tenant_guards": {"listeners": False}})
    fixed = {**LISTENER_CONFIG, "image": {"controller": {"tag": "v1.9.2"}}}
    assert not _guards(fixed), "a controller with the fixes needs no guard"
    assert _guards({**LISTENER_CONFIG, "image": {"controller": {"tag": "latest"}}}), "no version: kept"


def test_the_guard_comes_before_the_gateways() -> None:
    kinds = [(o["kind"], o["metadata"]["name"]) for o in objects(LISTENER_CONFIG)]
    assert kinds.index(("ValidatingAdmissionPolicyBinding", NAME)) < kinds.index(("Gateway", "eg-shared"))


BOOTSTRAP_TLS = {"name": "tls", "protocol": "TLS", "port": 443, "hostname": "*.example.com", "tls_mode": "Passthrough"}
CATCH_ALL = {"name": "https", "protocol": "HTTPS", "port": 443, "certificate_refs": [{"name": "shop-tls"}]}


def test_render_refuses_the_bootstrap_gateways_catch_all_https_beside_tls() -> None:
    with pytest.raises(ConfigError) as refused:
        load({"default_gateway": {"enabled": True, "listeners": [BOOTSTRAP_TLS, CATCH_ALL]}})
    (problem,) = refused.value.problems
    assert problem.path == "config.default_gateway.listeners[1].hostname"
    assert "shares port 443 with listeners[0] (TLS)" in problem.message
    assert "set this listener's hostname" in problem.message


def test_render_admits_them_apart_or_on_a_fixed_controller() -> None:
    named = {**CATCH_ALL, "hostname": "shop.example.com"}
    load({"default_gateway": {"enabled": True, "listeners": [BOOTSTRAP_TLS, named]}})
    load({"default_gateway": {"enabled": True, "listeners": [BOOTSTRAP_TLS, {**CATCH_ALL, "port": 8443}]}})
    fixed = {"image": {"controller": {"tag": "v1.9.3"}}}
    load({**fixed, "default_gateway": {"enabled": True, "listeners": [BOOTSTRAP_TLS, CATCH_ALL]}})


def test_bootstrap_https_listeners_count_against_tenants_tls_listeners() -> None:
    """The converse rules: a bootstrap HTTPS listener without hostname takes its port from tenants' TLS
    listeners (#9341), one with a hostname takes that port and hostname (#10013)."""
    cert = [{"name": "shop-tls"}]
    catch_all = {"name": "https", "protocol": "HTTPS", "port": 443, "certificate_refs": cert}
    named = {"name": "api", "protocol": "HTTPS", "port": 8443, "hostname": "api.example.com", "certificate_refs": cert}
    policy = _guard({"default_gateway": {"enabled": True, "listeners": [catch_all, named]}})
    on_443 = listener_gateway("tls-443", "eg-shared", tls_listener("tls", hostname="db.example.com"))
    (message,) = denials(policy, on_443)
    assert "a TLS listener on port 443 shares one Envoy listener" in message
    same_host = listener_gateway("tls-api", "eg-shared", tls_listener("tls", 8443, "api.example.com"))
    (message,) = denials(policy, same_host)
    assert "a TLS listener with the port and hostname of a HTTPS listener" in message
    for gateway in (
        listener_gateway("tls-other", "eg-shared", tls_listener("tls", 8443, "db.example.com")),
        listener_gateway("tls-own", "eg-dedicated", tls_listener("tls", hostname="db.example.com")),
    ):
        assert denials(policy, gateway) == [], gateway["metadata"]["name"]
