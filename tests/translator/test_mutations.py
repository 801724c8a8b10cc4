"""The gate goes red on broken references, with the translator's own message: each case breaks one
reference and names exactly the checks that must fail, each with the message they must carry.

To stay fast, cases share translations: the cases of one base config are applied together to its
shared-class input (the dedicated GatewayClass, its EnvoyProxy and the tenant's dedicated Gateway left
out) and translated in one egctl run, which must fail exactly the union of their checks and nothing else.
Each case breaks a different object, so the unbroken input is green and no case hides another.

Mutation check of the gate itself (done once, restored): letting gate._policies pass a targetRef without
status turned the wrong-targetRef case red.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from . import configs, gate

pytestmark = pytest.mark.translator

Objects = list[dict[str, Any]]


def _find(objects: Objects, kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def _wrong_target(objects: Objects) -> Objects:
    _find(objects, "ClientTrafficPolicy", "eg-shared-client-traffic")["spec"]["targetRefs"][0]["name"] = "eg-shard"
    return objects


def _missing_secret(objects: Objects) -> Objects:
    return [o for o in objects if not (o["kind"] == "Secret" and o["metadata"]["name"] == "app-example-com-tls")]


def _ext_proc_port(objects: Objects) -> Objects:
    _find(objects, "EnvoyExtensionPolicy", "eg-shared-waf")["spec"]["extProc"][0]["backendRefs"][0]["port"] = 9003
    return objects


def _ext_proc_other_namespace(objects: Objects) -> Objects:
    _find(objects, "Service", "envoy-waf")["metadata"]["namespace"] = "security"
    _find(objects, "EnvoyExtensionPolicy", "eg-shared-waf")["spec"]["extProc"][0]["backendRefs"][0]["namespace"] = (
        "security"
    )
    return objects


def _no_reference_grant(objects: Objects) -> Objects:
    return [o for o in objects if o["kind"] != "ReferenceGrant"]


def _clashing_listener(objects: Objects) -> Objects:
    gateway = _find(objects, "Gateway", "eg-shared")
    gateway["spec"]["listeners"].append({"name": "raw", "protocol": "TCP", "port": 80})
    return objects


def _missing_envoy_proxy(objects: Objects) -> Objects:
    _find(objects, "GatewayClass", "eg-shared")["spec"]["parametersRef"]["name"] = "eg-shard"
    return objects


GW = "Gateway envoy-gateway-system/eg-shared"
CASES: list[tuple[str, str, Callable[[Objects], Objects], dict[tuple[str, str], str]]] = [
    (
        "wrong-targetRef",
        "every-protocol",
        _wrong_target,
        {
            (
                "ClientTrafficPolicy envoy-gateway-system/eg-shared-client-traffic target Gateway "
                "envoy-gateway-system/eg-shard",
                "Accepted",
            ): "ignores a policy whose target it cannot find",
        },
    ),
    (
        "missing-Secret",
        "every-protocol",
        _missing_secret,
        {
            (f"{GW} listener https", "ResolvedRefs"): "Secret envoy-gateway-system/app-example-com-tls does not exist",
            (f"{GW} listener https", "Programmed"): "Listener is invalid",
        },
    ),
    (
        "ext_proc-port-not-on-Service",
        "every-protocol",
        _ext_proc_port,
        {
            (
                "EnvoyExtensionPolicy envoy-gateway-system/eg-shared-waf target Gateway envoy-gateway-system/eg-shared",
                "Accepted",
            ): "ExtProc: TCP Port 9003 not found on service envoy-gateway-system/envoy-waf",
        },
    ),
    (
        "ext_proc-backend-in-other-namespace-without-ReferenceGrant",
        "example-waf",
        _ext_proc_other_namespace,
        {
            (
                "EnvoyExtensionPolicy envoy-gateway-system/eg-shared-waf target Gateway envoy-gateway-system/eg-shared",
                "Accepted",
            ): "backend ref to Service security/envoy-waf not permitted by any ReferenceGrant",
        },
    ),
    (
        "certificate-in-other-namespace-without-ReferenceGrant",
        "every-protocol",
        _no_reference_grant,
        {
            (f"{GW} listener tls-terminate", "Accepted"): "no such condition",
            (f"{GW} listener tls-terminate", "ResolvedRefs"): "Certificate ref to secret certs/mq-example-com-tls not "
            "permitted by any ReferenceGrant",
            (f"{GW} listener tls-terminate", "Programmed"): "Listener is invalid",
            (GW, "Accepted (derived from its listeners, as the controller does)"): "5 of 6 listeners Accepted",
        },
    ),
    (
        "clashing-listeners",
        "example-waf",
        _clashing_listener,
        {
            # The HTTPRoute stays attached to the conflicted listener; the translator still rejects both.
            **{
                (f"{GW} listener {name}", condition): message
                for name in ("http", "raw")
                for condition, message in (
                    ("Accepted", "no such condition"),
                    ("Programmed", "Listener is invalid"),
                    ("Conflicted", "All listeners for a given port must use a compatible protocol"),
                )
            },
            (f"{GW} listener raw", "attachedRoutes"): "0 route(s) attached",
            # The default listeners' tls (:443) is untouched by the clash on :80.
            (GW, "Accepted (derived from its listeners, as the controller does)"): "1 of 3 listeners Accepted",
        },
    ),
    (
        "parametersRef-to-missing-EnvoyProxy",
        "example-default",
        _missing_envoy_proxy,
        {
            ("GatewayClass eg-shared", "Accepted"): "parametersRef names EnvoyProxy envoy-gateway-system/eg-shard, "
            "which does not exist",
            ("Gateway tenant-a/tenant-shared", "Accepted"): "was not translated",
            ("HTTPRoute tenant-a/tenant-shared-shop parent Gateway tenant-a/tenant-shared/shop", "Accepted"): (
                "the translator gave no status for this parentRef"
            ),
        },
    ),
]


BASES = sorted({base for _, base, _, _ in CASES})


@pytest.mark.parametrize("base", BASES)
def test_broken_references_turn_the_gate_red(base: str) -> None:
    """Guards the gate's teeth: each broken reference fails exactly its named checks, each carrying the
    translator's message (or, where the translator stays silent, the gate's statement of that)."""
    cases = [(name, mutate, expected) for name, case_base, mutate, expected in CASES if case_base == base]
    config, inputs = configs.gate_input(configs.CONFIGS[base])
    broken = configs.shared_only(inputs, config)
    expected: dict[tuple[str, str], tuple[str, str]] = {}
    for name, mutate, checks in cases:
        broken = mutate(broken)
        for key, message in checks.items():
            assert key not in expected, f"{name} and {expected[key][0]} both expect {key}: split them"
            expected[key] = (name, message)

    verdict = gate.run(broken)
    failed = {(c.subject, c.condition): c.message for c in verdict.failures}
    missing = [f"{expected[k][0]}: {k} did not fail" for k in expected if k not in failed]
    extra = [f"unexpected failure {k}: {failed[k]}" for k in failed if k not in expected]
    mismatches = missing + extra
    assert not mismatches, "\n".join(mismatches)
    for key, (name, message) in expected.items():
        assert message in failed[key], f"{name}: {key}: {failed[key]!r} lacks {message!r}"
