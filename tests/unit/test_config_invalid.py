"""Invariant: every invalid config is rejected, by config path, before anything is built.

Each case names the path the error must carry. Mutation check (done once, recorded here): deleting the
Terminate/certificate_refs rule in gateway._listener_problems turned `terminate-without-cert` and
`https-default-terminate-without-cert` red; deleting the GatewayNamespace rule turned
`gatewaynamespace-with-merge` red; deleting the listeners-without-enabled rule turned
`listeners-without-gateway` red; a policy message without `config.default_gateway.enabled` turned
test_policy_without_a_gateway_names_both_ways_out red; removing the _shared_port_problems call turned the
three port-shared/same-hostname cases red. Mutation: dropping the waf._response_problems call -> red
(waf-response-without-waf and both waf-response-limit-above-* cases).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.support.helpers import block, load, problems

sys.path.insert(0, str(ROOT / "collections"))

HTTP = {"name": "http", "protocol": "HTTP", "port": 80}


def gw(*listeners: dict[str, Any]) -> dict[str, Any]:
    return {"default_gateway": {"enabled": True, "listeners": list(listeners)}}


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("unknown-top-key", {"namespcae": "x"}, "config.namespcae: unknown key; did you mean 'namespace'"),
    (
        "ip-as-listener-hostname",
        gw({**HTTP, "hostname": "203.0.113.20"}),
        "config.default_gateway.listeners[0].hostname: '203.0.113.20' is not valid; Gateway API hostnames cannot be "
        "IP addresses; leave hostname out",
    ),
    (
        "quoted-port",
        gw({**HTTP, "port": "443"}),
        "config.default_gateway.listeners[0].port: must be of type integer, got str '443'; write 443 without quotes",
    ),
    (
        "quoted-boolean",
        {"create_namespace": "false"},
        "config.create_namespace: must be of type boolean, got str 'false'; write false without quotes",
    ),
    (
        "yaml11-boolean",
        {"create_namespace": "on"},
        "config.create_namespace: must be of type boolean, got str 'on'; write true (Polycrate's YAML reads on as a "
        "string, not a boolean)",
    ),
    (
        "unquoted-version-tag",
        {"image": {"controller": {"tag": 1.1}}},
        "config.image.controller.tag: must be of type string, got float 1.1; put it in quotes as you mean it, "
        'e.g. "1.1"',
    ),
    ("unknown-nested-key", {"service": {"tpye": "ClusterIP"}}, "config.service.tpye: unknown key"),
    ("unknown-listener-key", gw({**HTTP, "tls": {}}), "config.default_gateway.listeners[0].tls: unknown key"),
    ("bool-as-string", {"create_namespace": "yes"}, "config.create_namespace: must be of type boolean"),
    ("namespace-uppercase", {"namespace": "Envoy"}, "config.namespace: 'Envoy' is not valid"),
    ("namespace-empty", {"namespace": ""}, "config.namespace"),
    ("deploy-type-enum", {"deploy_type": "Namespace"}, "config.deploy_type: 'Namespace' is not allowed"),
    ("data-plane-kind", {"data_plane": {"kind": "StatefulSet"}}, "config.data_plane.kind"),
    ("replicas-zero", {"data_plane": {"replicas": 0}}, "config.data_plane.replicas"),
    ("replicas-string", {"data_plane": {"replicas": "2"}}, "config.data_plane.replicas: must be of type integer"),
    (
        "autoscaling-min-above-max",
        {"data_plane": {"autoscaling": {"enabled": True, "min_replicas": 5, "max_replicas": 3}}},
        "config.data_plane.autoscaling.min_replicas: 5 is above max_replicas 3",
    ),
    (
        "autoscaling-daemonset",
        {"data_plane": {"kind": "DaemonSet", "autoscaling": {"enabled": True}}},
        "config.data_plane.autoscaling.enabled: a DaemonSet runs one proxy per node and cannot be autoscaled",
    ),
    (
        # The default always supplies a CPU request, so an autoscaler without one can only come from a request
        # the schema refuses; that refusal is the one problem (the autoscaling rule would describe the default).
        "autoscaling-without-cpu-request",
        {"data_plane": {"autoscaling": {"enabled": True}, "resources": {"requests": {"cpu": ""}}}},
        "config.data_plane.resources.requests.cpu: '' is not valid",
    ),
    (
        "budget-blocks-every-drain",
        {"data_plane": {"disruption_budget": {"max_unavailable": 0}}},
        "config.data_plane.disruption_budget.max_unavailable: 0 lets no proxy be evicted",
    ),
    (
        "drain-min-above-timeout",
        {"data_plane": {"shutdown": {"drain_timeout": "20s", "min_drain_duration": "1m"}}},
        "config.data_plane.shutdown.min_drain_duration: 1m is longer than drain_timeout 20s",
    ),
    (
        "drain-not-a-duration",
        {"data_plane": {"shutdown": {"drain_timeout": "soon"}}},
        "config.data_plane.shutdown.drain_timeout",
    ),
    (
        "spread-enum",
        {"data_plane": {"topology_spread": {"when_unsatisfiable": "Never"}}},
        "config.data_plane.topology_spread.when_unsatisfiable",
    ),
    (
        "toleration-unknown-key",
        {"data_plane": {"tolerations": [{"key": "a", "seconds": 3}]}},
        "config.data_plane.tolerations[0].seconds: unknown key",
    ),
    # The API server's toleration rules (placement.toleration_problems), for the proxies and the controller alike.
    (
        "toleration-exists-with-value",
        {"data_plane": {"tolerations": [{"key": "edge", "operator": "Exists", "value": "true"}]}},
        "config.data_plane.tolerations[0].value: must be empty with operator Exists",
    ),
    (
        "toleration-no-key-equal",
        {"data_plane": {"tolerations": [{"effect": "NoSchedule"}]}},
        "config.data_plane.tolerations[0].key: is empty, which tolerates every taint only with operator Exists",
    ),
    (
        "toleration-seconds-not-noexecute",
        {"data_plane": {"tolerations": [{"key": "edge", "effect": "NoSchedule", "toleration_seconds": 30}]}},
        "config.data_plane.tolerations[0].toleration_seconds: applies to effect NoExecute only",
    ),
    (
        "controller-toleration-exists-with-value",
        {"controller": {"tolerations": [{"key": "a", "operator": "Equal"}, {"operator": "Exists", "value": "x"}]}},
        "config.controller.tolerations[1].value: must be empty with operator Exists",
    ),
    (
        "controller-toleration-seconds",
        {"controller": {"tolerations": [{"key": "a", "effect": "NoSchedule", "toleration_seconds": 5}]}},
        "config.controller.tolerations[0].toleration_seconds: applies to effect NoExecute only",
    ),
    ("controller-replicas-zero", {"controller": {"replicas": 0}}, "config.controller.replicas"),
    (
        "controller-request-above-limit",
        {"controller": {"resources": {"requests": {"memory": "2Gi"}}}},
        "config.controller.resources.requests.memory",
    ),
    (
        "controller-priority-class-name",
        {"controller": {"priority_class_name": "Platform_Critical"}},
        "config.controller.priority_class_name",
    ),
    (
        "controller-node-selector-value",
        {"controller": {"node_selector": {"pool": "not a label value"}}},
        "config.controller.node_selector.pool",
    ),
    (
        "controller-toleration-unknown-key",
        {"controller": {"tolerations": [{"key": "a", "seconds": 3}]}},
        "config.controller.tolerations[0].seconds: unknown key",
    ),
    (
        "quantity",
        {"data_plane": {"resources": {"requests": {"cpu": "lots"}}}},
        "config.data_plane.resources.requests.cpu: 'lots' is not valid; use a Kubernetes quantity",
    ),
    ("service-type", {"service": {"type": "External"}}, "config.service.type"),
    ("lb-ip-not-ipv4", {"service": {"loadbalancer_ip": "10.0.0"}}, "config.service.loadbalancer_ip"),
    (
        "lb-ip-without-loadbalancer",
        {"service": {"type": "ClusterIP", "loadbalancer_ip": "10.0.0.1"}},
        "config.service.loadbalancer_ip: needs service.type LoadBalancer",
    ),
    ("annotation-not-string", {"service": {"annotations": {"a": 1}}}, "config.service.annotations.a"),
    ("listeners-empty", {"default_gateway": {"listeners": []}}, "config.default_gateway.listeners"),
    (
        "listener-missing-port",
        gw({"name": "a", "protocol": "HTTP"}),
        "config.default_gateway.listeners[0]: 'port' is a required property",
    ),
    ("listener-port-range", gw({**HTTP, "port": 70000}), "config.default_gateway.listeners[0].port"),
    ("listener-protocol", gw({**HTTP, "protocol": "QUIC"}), "config.default_gateway.listeners[0].protocol"),
    ("listener-name-invalid", gw({**HTTP, "name": "Web_1"}), "config.default_gateway.listeners[0].name"),
    (
        "terminate-without-cert",
        gw({"name": "s", "protocol": "TLS", "port": 443, "tls_mode": "Terminate"}),
        "config.default_gateway.listeners[0].certificate_refs: a Terminate listener needs a certificate",
    ),
    (
        "https-default-terminate-without-cert",
        gw({"name": "s", "protocol": "HTTPS", "port": 443}),
        "config.default_gateway.listeners[0].certificate_refs",
    ),
    (
        "https-passthrough",
        gw({"name": "s", "protocol": "HTTPS", "port": 443, "tls_mode": "Passthrough"}),
        "config.default_gateway.listeners[0].tls_mode: HTTPS listeners terminate TLS",
    ),
    (
        "tls-without-mode",
        gw({"name": "s", "protocol": "TLS", "port": 443}),
        "config.default_gateway.listeners[0].tls_mode: TLS listeners must state their mode",
    ),
    (
        "http-with-tls-mode",
        gw({**HTTP, "tls_mode": "Terminate"}),
        "config.default_gateway.listeners[0].tls_mode: HTTP listeners carry no TLS settings",
    ),
    (
        "tcp-with-hostname",
        gw({"name": "t", "protocol": "TCP", "port": 5432, "hostname": "db.example.com"}),
        "config.default_gateway.listeners[0].hostname: TCP listeners cannot match a hostname",
    ),
    (
        "passthrough-with-cert",
        gw(
            {
                "name": "s",
                "protocol": "TLS",
                "port": 443,
                "tls_mode": "Passthrough",
                "certificate_refs": [{"name": "c"}],
            }
        ),
        "config.default_gateway.listeners[0].certificate_refs: Passthrough listeners ignore certificates",
    ),
    (
        "duplicate-listener-name",
        gw(HTTP, {**HTTP, "port": 8080}),
        "config.default_gateway.listeners[1].name: listener name 'http' is already used",
    ),
    (
        "duplicate-port-protocol-hostname",
        gw(HTTP, {**HTTP, "name": "http2"}),
        "config.default_gateway.listeners[1]: port 80/HTTP",
    ),
    (
        "port-shared-by-http-and-tcp",
        gw(HTTP, {"name": "raw", "protocol": "TCP", "port": 80}),
        "config.default_gateway.listeners[1]: port 80/TCP cannot share the port with listeners[0] (HTTP)",
    ),
    (
        "port-shared-by-http-and-https",
        gw(HTTP, {"name": "s", "protocol": "HTTPS", "port": 80, "certificate_refs": [{"name": "c"}]}),
        "config.default_gateway.listeners[1]: port 80/HTTPS cannot share the port with listeners[0] (HTTP)",
    ),
    (
        "https-and-tls-same-hostname",
        gw(
            {
                "name": "s",
                "protocol": "HTTPS",
                "port": 443,
                "hostname": "a.example.com",
                "certificate_refs": [{"name": "c"}],
            },
            {"name": "t", "protocol": "TLS", "port": 443, "hostname": "a.example.com", "tls_mode": "Passthrough"},
        ),
        "config.default_gateway.listeners[1]: port 443/TLS with hostname 'a.example.com' clashes with listeners[0] "
        "(HTTPS, same port and hostname)",
    ),
    (
        "selector-without-labels",
        gw({**HTTP, "allowed_routes_namespaces": "Selector"}),
        "config.default_gateway.listeners[0].allowed_routes_selector: allowed_routes_namespaces Selector needs",
    ),
    (
        "selector-without-selector-mode",
        gw({**HTTP, "allowed_routes_selector": {"match_labels": {"a": "b"}}}),
        "config.default_gateway.listeners[0].allowed_routes_selector: only used with",
    ),
    (
        "client-traffic-no-target",
        {"client_traffic": {"enabled": True}},
        "config.client_traffic.target_gateway_name: the policy needs a Gateway",
    ),
    (
        "backend-traffic-no-target",
        {"default_gateway": {"enabled": False}, "backend_traffic": {"enabled": True}},
        "config.backend_traffic.target_gateway_name: the policy needs a Gateway",
    ),
    (
        "listeners-without-gateway",
        {"default_gateway": {"listeners": [HTTP]}},
        "config.default_gateway.listeners: no Gateway is rendered while config.default_gateway.enabled is false",
    ),
    (
        "waf-policy-without-gateway",
        {"waf": {"enabled": True, "default_policy": {"enabled": True}}},
        "config.waf.default_policy.enabled: attaches to the default Gateway; set config.default_gateway.enabled",
    ),
    (
        "proxy-protocol-without-policy",
        {"client_traffic": {"proxy_protocol": {"enabled": True}}},
        "config.client_traffic.enabled: proxy_protocol is rendered in the ClientTrafficPolicy",
    ),
    (
        "proxy-protocol-optional-alone",
        {"client_traffic": {"enabled": True, "proxy_protocol": {"optional": True}}},
        "config.client_traffic.proxy_protocol.optional",
    ),
    (
        "duration-format",
        {"backend_traffic": {"enabled": True, "timeouts": {"connect": "5 seconds"}}},
        "config.backend_traffic.timeouts.connect: '5 seconds' is not valid; use a duration",
    ),
    (
        "gatewaynamespace-with-merge",
        {"deploy_type": "GatewayNamespace"},
        "config.deploy_type: GatewayNamespace cannot be combined with mergeGateways",
    ),
    (
        "same-class-names",
        {"gatewayclass": {"dedicated": {"name": "eg-shared"}}},
        "config.gatewayclass.dedicated.name: the shared and the dedicated class need different names",
    ),
    ("auth-half", {"chart": {"auth": {"username": "robot"}}}, "config.chart.auth: set both username and password"),
    (
        "waf-image-build-auth-half",
        {"waf": {"image_build": {"auth": {"username": "robot"}}}},
        "config.waf.image_build.auth: set both username and password",
    ),
    (
        "waf-image-build-arg-unknown",
        {"waf": {"image_build": {"build_args": {"crs_mirror": "x"}}}},
        "config.waf.image_build.build_args.crs_mirror: unknown key; known keys here: crs_rules_tree_sha256, crs_url",
    ),
    (
        "pull-secret-twice",
        {"image": {"pull_secrets": ["a", "b", "a"]}},
        "config.image.pull_secrets[2]: 'a' is listed twice; name each Secret once",
    ),
    (
        "pull-secret-name",
        {"image": {"pull_secrets": ["Reg_Cred"]}},
        "config.image.pull_secrets[0]: 'Reg_Cred' is not valid; use a lowercase RFC 1123 subdomain",
    ),
    ("waf-replicas", {"waf": {"enabled": True, "replicas": 1}}, "config.waf.replicas"),
    ("waf-mode", {"waf": {"mode": "log"}}, "config.waf.mode"),
    ("waf-paranoia", {"waf": {"paranoia_level": 5}}, "config.waf.paranoia_level"),
    (
        "waf-policy-without-waf",
        {"waf": {"default_policy": {"enabled": True}}},
        "config.waf.default_policy.enabled: needs waf.enabled: true",
    ),
    (
        "waf-response-enabled-not-bool",
        {"waf": {"response_inspection": {"enabled": "yes"}}},
        "config.waf.response_inspection.enabled: must be of type boolean",
    ),
    (
        "waf-response-limit-too-small",
        {"waf": {"response_inspection": {"body_limit": 100}}},
        "config.waf.response_inspection.body_limit: 100 is less than the minimum of 1024",
    ),
    (
        "waf-response-limit-not-int",
        {"waf": {"response_inspection": {"body_limit": "64Ki"}}},
        "config.waf.response_inspection.body_limit: must be of type integer",
    ),
    (
        "waf-response-unknown-key",
        {"waf": {"response_inspection": {"limit": 65536}}},
        "config.waf.response_inspection.limit: unknown key; did you mean 'body_limit'",
    ),
    (
        "waf-response-without-waf",
        {"waf": {"response_inspection": {"enabled": True}}},
        "config.waf.response_inspection.enabled: needs waf.enabled: true",
    ),
    (
        "waf-response-limit-above-buffer",
        {
            "default_gateway": {"enabled": True},
            "waf": {
                "enabled": True,
                "default_policy": {"enabled": True},
                "response_inspection": {"enabled": True, "body_limit": 131073},
            },
        },
        "config.waf.response_inspection.body_limit: 131073 is above the WAF Gateway's buffer (131072 bytes",
    ),
    (
        "waf-response-limit-above-envoy-gateways-buffer",
        {
            "default_gateway": {"enabled": True},
            "waf": {
                "enabled": True,
                "body": {"enabled": False},
                "default_policy": {"enabled": True},
                "response_inspection": {"enabled": True},
            },
        },
        "config.waf.response_inspection.body_limit: 65536 is above the WAF Gateway's buffer (32768 bytes",
    ),
    (
        "scrape-any-and-names",
        {"metrics": {"vmpodscrape": {"namespace_selector": {"any": True, "match_names": ["a"]}}}},
        "config.metrics.vmpodscrape.namespace_selector: set either any: true or match_names",
    ),
    ("image-tag-empty", {"image": {"proxy": {"tag": ""}}}, "config.image.proxy.tag"),
    ("log-level", {"logging": {"level": "verbose"}}, "config.logging.level"),
    ("netpol-provider", {"network_policy": {"provider": "istio"}}, "config.network_policy.provider"),
    (
        "netpol-k8s-needs-apiserver",
        {"network_policy": {"provider": "kubernetes"}},
        "config.network_policy.api_server_cidrs: provider kubernetes selects the API server by address",
    ),
    (
        "netpol-cidr",
        {"network_policy": {"extra_egress_to": [{"cidr": "10.0.0.0"}]}},
        "config.network_policy.extra_egress_to[0].cidr",
    ),
    (
        "netpol-narrowed-misses-listener",
        {"default_gateway": {"enabled": True}, "network_policy": {"proxy_ingress_ports": [443]}},
        "config.default_gateway.listeners[0].port: port 80 is not in network_policy.proxy_ingress_ports",
    ),
    ("config-not-mapping", ["a"], "config: must be a mapping"),  # type: ignore[list-item]
]


@pytest.mark.parametrize(("config", "expected"), [(c, e) for _, c, e in CASES], ids=[i for i, _, _ in CASES])
def test_invalid_config_is_rejected_with_its_path(config: dict[str, Any], expected: str) -> None:
    found = problems(config)
    assert any(p.startswith(expected) or expected in p for p in found), found


def _action(kind: str, dest: Path) -> Any:
    """The collection's `render` or `validate` action as Ansible runs it on the controller (no connection),
    without Ansible's task machinery: act() reads only the task's args and check/diff flags."""
    module = importlib.import_module(f"ansible_collections.polycrate_blocks.envoy.plugins.action.{kind}")
    action = module.ActionModule.__new__(module.ActionModule)
    action._task = SimpleNamespace(args={"dest": str(dest)}, check_mode=False, diff=False)
    return action


def _previous_render(dest: Path) -> dict[str, float]:
    """A valid render of the default config in `dest`, and a file render does not own: what a bad config
    must leave (the latter) and remove (the former, so it cannot pass for current)."""
    assert not _action("render", dest).act(block({})).get("failed")
    (dest / "notes.txt").write_text("not the block's\n", encoding="utf-8")
    return {str(p.relative_to(dest)): p.stat().st_mtime_ns for p in dest.rglob("*") if p.is_file()}


@pytest.mark.parametrize(("config", "expected"), [(c, e) for _, c, e in CASES], ids=[i for i, _, _ in CASES])
def test_each_invalid_config_is_reported_once_and_writes_nothing(
    config: dict[str, Any], expected: str, tmp_path: Path
) -> None:
    """Every case, through the render and validate actions Ansible runs: one failure whose `problems` hold
    the expected problem and no problem twice, none of them repeated in `msg` (which Ansible prints twice);
    render writes nothing, removes the previous render and leaves other files alone. Mutation
    (tools/mutate.py `validation-writes-on-error`): writing the render before validating turns every
    case red."""
    before = _previous_render(tmp_path)
    for kind in ("render", "validate"):
        result = _action(kind, tmp_path).act(block(config))
        assert result["failed"] is True, result
        lines = result["problems"].splitlines()
        assert any(expected in line for line in lines), (expected, lines)
        assert len(lines) == len(set(lines)), f"a problem reported twice: {lines}"
        assert not any(line in result["msg"] for line in lines), result["msg"]
    left = {str(p.relative_to(tmp_path)): p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    assert left == {"notes.txt": before["notes.txt"]}, "nothing written, the previous render removed"


def test_at_least_thirty_invalid_cases() -> None:
    assert len(CASES) >= 30


def test_all_problems_are_reported_at_once() -> None:
    """A config with a shape error and several rule errors lists every one of them, not just the first."""
    found = problems(
        {
            "namespcae": "x",
            "service": {"type": "ClusterIP", "loadbalancer_ip": "10.0.0.1"},
            "default_gateway": {
                "enabled": True,
                "listeners": [{"name": "s", "protocol": "HTTPS", "port": 443, "tls_mode": "Passthrough"}],
            },
            "deploy_type": "GatewayNamespace",
        }
    )
    for path in (
        "config.namespcae",
        "config.service.loadbalancer_ip",
        "config.default_gateway.listeners[0].tls_mode",
        "config.deploy_type",
    ):
        assert any(p.startswith(path) for p in found), (path, found)


@pytest.mark.parametrize("policy", ["client_traffic", "backend_traffic"])
def test_policy_without_a_gateway_names_both_ways_out(policy: str) -> None:
    """A traffic policy with no Gateway to target names both fixes by path: its own target_gateway_name
    and the opt-in default_gateway.enabled."""
    found = problems({policy: {"enabled": True}})
    assert len(found) == 1, found
    assert found[0].startswith(f"config.{policy}.target_gateway_name: ")
    assert f"config.{policy}.target_gateway_name to your Gateway's name" in found[0]
    assert "config.default_gateway.enabled: true" in found[0]


def test_secret_values_are_never_echoed() -> None:
    """A wrongly typed password is reported by path only: its value never reaches the error text."""
    found = problems({"chart": {"auth": {"username": "robot", "password": 987654321}}})
    assert any(p.startswith("config.chart.auth.password") for p in found)
    assert not any("987654321" in p for p in found)
    found = problems({"waf": {"image_build": {"auth": {"username": "robot", "password": 987654321}}}})
    assert any(p.startswith("config.waf.image_build.auth.password") for p in found)
    assert not any("987654321" in p for p in found)


def test_valid_edge_cases_are_accepted() -> None:
    """Guards against over-eager rules: these look odd but are valid."""
    load({"default_gateway": {"enabled": False}, "client_traffic": {"enabled": True, "target_gateway_name": "mine"}})
    load(gw({"name": "s", "protocol": "TLS", "port": 443, "tls_mode": "Passthrough"}, HTTP))
    load(gw(HTTP, {**HTTP, "name": "http-app", "hostname": "app.example.com"}))
    # Ports Envoy Gateway lets listeners share (tests/translator/test_listener_rules.py proves them there).
    load(gw({"name": "tcp", "protocol": "TCP", "port": 53}, {"name": "udp", "protocol": "UDP", "port": 53}))
    load(gw(HTTP, {"name": "udp", "protocol": "UDP", "port": 80}))
    load(
        gw(
            {
                "name": "s",
                "protocol": "HTTPS",
                "port": 443,
                "hostname": "a.example.com",
                "certificate_refs": [{"name": "c"}],
            },
            {"name": "t", "protocol": "TLS", "port": 443, "hostname": "b.example.com", "tls_mode": "Passthrough"},
        )
    )
    load({"deploy_type": "GatewayNamespace", "gatewayclass": {"shared": {"merge_gateways": False}}})
    load({"service": {"annotations": None}})  # `annotations:` with nothing after it is "not set"
    # Tolerations the API server takes: every taint (no key, Exists), a NoExecute grace, Equal without a value.
    tolerations: list[dict[str, Any]] = [
        {"operator": "Exists"},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
        {"key": "dedicated", "operator": "Equal", "effect": "NoSchedule"},
    ]
    tolerations[1]["toleration_seconds"] = 30
    load({"data_plane": {"tolerations": tolerations}, "controller": {"tolerations": tolerations}})
