"""The translator gate: schema-valid is not accepted. For the default config, every example and two configs
that together cover every listener protocol and every policy, the block's objects plus a tenant's go
through Envoy Gateway's own translator (egctl v1.9.0, one run per GatewayClass), and every GatewayClass,
EnvoyProxy, Gateway, listener, route and policy must report its conditions True, by name (gate.py);
then the xDS must show what the config promised (promises.py).

Mutation checks (done once on the builders, each restored): the WAF policy's backendRef port 9003 in
components/waf.py turned example-waf red with the translator's "ExtProc: TCP Port 9003 not found on
service envoy-gateway-system/envoy-waf" (and no ext_proc filter in the xDS); policies targeting
`<name>-gw` in components/traffic_policies.py turned the four configs with a client or backend traffic
policy red ("the translator gave this policy no status ... ignores a policy whose target it cannot
find"); `failOpen: not waf.fail_open` turned example-waf and every-protocol red on "ext_proc
failure_mode_allow"; dropping the `path` field from the rendered access log turned the default config
(grouped with cilium-default-deny) red on "access log JSON fields"; always `proxyProtocol: {optional:
true}` turned example-proxy-protocol red on "PROXY protocol optional"; mapping backend `idle` to
maxConnectionDuration turned example-daemonset-client-ip red on "backend timeout idle"; the WAF's body
buffer put on the client_traffic target instead of the WAF's Gateway turned waf-beside-tenant-policy red
("edge ... Envoy Gateway's own buffer and stream window ... (200000, {200000})" and the default Gateway at
32768); the buffer in a second ClientTrafficPolicy on the WAF's Gateway turned waf-partial-merged red on
"Accepted - Conflicted: Unable to target Gateway eg-shared, another ClientTrafficPolicy has already attached
to it" (and the buffer never reached the xDS); a bufferLimit equal to a 4096-byte body (Envoy Gateway's
32768 not kept) turned waf-beside-tenant-policy (then at limit 4096) red on "HTTP/1.1 body buffer >= WAF
body", and the same for the HTTP/2 window on "InitialStreamWindowSize value 4096 is out of range".
"""

from __future__ import annotations

import pytest

from envoy_block.components.gateway import target_gateway
from envoy_block.plan import Phase
from tests.support.helpers import load, objects, plan

from . import configs, egctl, gate, promises, tenant

pytestmark = pytest.mark.translator

STATUS_KINDS = {"GatewayClass", "Gateway", *gate.ROUTE_KINDS, *gate.POLICY_KINDS}


GROUPS = configs.groups()


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_translator_accepts(group: str) -> None:
    """Guards: every status-bearing object of the config (plus the tenant's) is judged, and every condition
    the translator reports is the expected one and True; the xDS shows the WAF, PROXY protocol, access
    log and timeouts exactly as configured. A failure lists each broken check with the translator's own
    message. Configs with identical translator input are one case ("a+b"): their promises are all checked
    against the one translation."""
    names = GROUPS[group]
    _, verdict = configs.verdict(configs.CONFIGS[names[0]])
    checks = verdict.checks + [c for name in names for c in promises.check(load(configs.CONFIGS[name]), verdict)]
    failures = [c for c in checks if not c.ok]
    assert not failures, "\n".join(map(str, failures))

    fed = [o for run in verdict.inputs.values() for o in run if o["kind"] in STATUS_KINDS]
    judged = {c.subject for c in checks}
    unjudged = {gate.identity(o) for o in fed if not any(s.startswith(gate.identity(o)) for s in judged)}
    assert not unjudged, f"objects the gate never judged: {sorted(unjudged)}"
    assert len(verdict.inputs) == 2, f"expected one translation per GatewayClass, got {sorted(verdict.inputs)}"


def _listener_kinds(cfg: dict[str, object]) -> set[str]:
    config = load(cfg)
    found = set()
    for gateway in tenant.gateways(config):
        for listener in gateway.listeners:
            spec = next(
                (s for s in config.get("default_gateway.listeners") if s["name"] == listener.name),
                {"protocol": listener.protocol},
            )
            found.add(
                f"{listener.protocol}/{spec.get('tls_mode', 'Terminate')}"
                if listener.protocol == "TLS"
                else listener.protocol
            )
    return found


def test_configs_cover_every_protocol_and_policy_setting() -> None:
    """Guards the gate's reach without running egctl: the configs together have every listener protocol
    (TLS in both modes), every policy kind the block renders, and both values of each policy switch."""
    protocols = set().union(*(_listener_kinds(cfg) for cfg in configs.CONFIGS.values()))
    assert protocols == {"HTTP", "HTTPS", "TLS/Passthrough", "TLS/Terminate", "TCP", "UDP"}

    policy_kinds = {
        step.obj["kind"]
        for cfg in configs.CONFIGS.values()
        for step in plan(cfg).ordered()
        if step.phase == Phase.POLICY and step.obj["apiVersion"].startswith("gateway.envoyproxy.io/")
    }
    assert policy_kinds == {"ClientTrafficPolicy", "BackendTrafficPolicy", "EnvoyExtensionPolicy"}

    settings: dict[str, set[object]] = {}
    for cfg in configs.CONFIGS.values():
        config = load(cfg)
        pp = config.get("client_traffic.proxy_protocol")
        if not (config.get("client_traffic.enabled") and pp["enabled"]):
            settings.setdefault("proxy_protocol", set()).add("off")
        else:
            settings.setdefault("proxy_protocol", set()).add("optional" if pp["optional"] else "required")
        if config.get("client_traffic.enabled"):
            settings.setdefault("client_timeouts", set()).update(config.get("client_traffic.timeouts"))
        if config.get("backend_traffic.enabled"):
            settings.setdefault("backend_timeouts", set()).update(config.get("backend_traffic.timeouts"))
        if config.get("waf.enabled") and config.get("waf.default_policy.enabled"):
            settings.setdefault("waf_fail_open", set()).add(config.get("waf.fail_open"))
            settings.setdefault("waf_body", set()).add(config.get("waf.body.enabled"))
        if promises.waf_body_bytes(config) is not None:
            settings.setdefault("waf_limit_action", set()).add(config.get("waf.body.limit_action"))
            client_target = target_gateway(config, "client_traffic") if config.get("client_traffic.enabled") else None
            settings.setdefault("waf_buffer_policy", set()).add(
                "own"
                if client_target is None
                else "merged"
                if client_target == target_gateway(config, "waf")
                else "beside another Gateway's"
            )
        settings.setdefault("access_log", set()).add(config.get("logging.access_log"))
    assert settings == {
        "proxy_protocol": {"off", "required", "optional"},
        "client_timeouts": {"request_received", "idle", "stream_idle"},
        "backend_timeouts": {"connect", "request", "idle"},
        "waf_fail_open": {False, True},
        "waf_body": {False, True},
        "waf_limit_action": {"reject", "partial"},
        "waf_buffer_policy": {"own", "merged", "beside another Gateway's"},
        "access_log": {False, True},
    }


def test_only_kinds_the_translator_ignores_are_left_out() -> None:
    """Guards against a silently unchecked kind: what the gate does not feed egctl is exactly the set of
    rendered kinds Envoy Gateway's translator has no use for (workloads, network policies, scrapes, admission
    policies)."""
    rendered = {o["kind"] for cfg in configs.CONFIGS.values() for o in objects(cfg)}
    left_out = rendered - egctl.TRANSLATOR_KINDS
    assert left_out == {
        "Deployment",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "CiliumNetworkPolicy",
        "GlobalNetworkPolicy",
        "VMPodScrape",
        "VMServiceScrape",
        "ValidatingAdmissionPolicy",  # admission (waf.enforce, the PROXY port guard): the API server's business
        "ValidatingAdmissionPolicyBinding",
    }


def test_waf_body_limit_fits_envoys_buffer() -> None:
    """Guards a finding (issue #9), a strict xfail until 0.7.1: Envoy Gateway gives every listener a 32 KiB
    connection buffer and every HTTP/2 stream a 64 KiB window, and with the WAF's Buffered body Envoy
    answers 413 itself past them, below waf.body.limit (128 KiB by default): a 40 KB form post got 413 from
    Envoy before the WAF inspected it (seen with a real Envoy and the WAF: 200 with Envoy's default 1 MiB
    buffer, 413 with Envoy Gateway's 32768), and limit_action `partial` never applied. Since 0.7.1 the
    WAF's Gateway gets a ClientTrafficPolicy with connection.bufferLimit and http2.initialStreamWindowSize
    of at least the body it buffers; example-waf's xDS must show both on every HTTP listener of the
    default Gateway (the same promise runs for every config in test_translator_accepts).

    Mutation checks (done once, each restored): a ClientTrafficPolicy without `http2` in
    traffic_policies.client_traffic_policies turned this test red on "HTTP/2 stream window >= WAF body"
    (initial_stream_window_size [65536], WAF body 131072); bufferLimit of half the body turned it red on
    "HTTP/1.1 body buffer >= WAF body" (65536 against 131072)."""
    config, inputs = configs.gate_input(configs.CONFIGS["example-waf"])
    verdict = gate.run(configs.shared_only(inputs, config))
    checks = [c for c in promises.request_body_buffer(config, verdict) if "WAF body" in c.condition]
    assert {c.condition for c in checks} == {"HTTP/1.1 body buffer >= WAF body", "HTTP/2 stream window >= WAF body"}
    failures = [c for c in checks if not c.ok]
    assert not failures, "\n".join(map(str, failures))
