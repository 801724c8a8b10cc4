"""Invariant: whatever tells the load balancer to send PROXY protocol headers reaches exactly the listeners
whose ClientTrafficPolicy parses them - no proxy Service gets PROXY headers that nothing parses.

Envoy Gateway v1.9.0 parses the header per Envoy listener: the ClientTrafficPolicy puts `proxyProtocol` on
the IR of the targeted Gateway's HTTP and TCP listeners (internal/gatewayapi/clienttrafficpolicy.go ~754-759,
856, 879; UDP listeners never) and the translator adds the listener filter to the Envoy listener of that
address:port (internal/xds/translator/proxy_protocol.go ~21-44), which merged Gateways on the same port
share. A load-balancer annotation acts on a whole Service, every port of it. So:

- merged shared class: one Service for all its Gateways. The block puts the annotations on the shared
  EnvoyProxy and installs an admission policy that keeps every Gateway of the class on the default
  Gateway's TCP ports (and off ListenerSets), so each port the Service has is one the policy covers;
- unmerged shared class: the annotations go on the default Gateway's spec.infrastructure.annotations,
  which Envoy Gateway copies onto that Gateway's own Service only;
- never on the dedicated class, and never through service.annotations (every Service of both classes);
- combinations that cannot be made consistent are rejected: a ClientTrafficPolicy on a Gateway the block
  does not render, a UDP listener on the default Gateway, annotations without proxy_protocol.enabled.

The example configs are checked against the same model. Mutation checks (done once): rendering
service_annotations on both EnvoyProxies turned test_only_what_the_policy_parses_receives_headers red;
dropping the ports rule of the admission policy turned test_port_guard[tenant-8080] red; dropping the
ListenerSet rule turned test_port_guard[tenant-listenersets-all] red; dropping the notTheDefaultGateway
match condition turned test_port_guard_exempts_the_default_gateway_and_comes_first red; accepting PROXY keys in
service.annotations turned test_proxy_annotations_only_through_client_traffic red.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from envoy_block.loadbalancer import is_proxy_protocol_annotation
from tests.conftest import ROOT
from tests.support import gate
from tests.support.admission import denials, judged
from tests.support.helpers import find, objects, problems
from tests.support.tenant_objects import DEFAULT_LISTENERS as LISTENERS
from tests.support.tenant_objects import GATEWAY_CASES, HETZNER, proxy_protocol_config

# Judged with the gate's tools (kubernetes-validate, CEL: jsonschema 4), which Polycrate's image Python cannot
# have: not in make unit-image.
pytestmark = pytest.mark.not_in_image

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/config.yml"))


def _cfg(merge: bool = True, **proxy_protocol: Any) -> dict[str, Any]:
    return proxy_protocol_config(merge, **proxy_protocol)


def receives_headers(rendered: list[dict[str, Any]]) -> set[str]:
    """Which proxy Services the load balancer sends PROXY headers to: `class:<name>` for every Service of
    an EnvoyProxy's class, `gateway:<name>` for one Gateway's own Service."""
    out = set()
    for obj in rendered:
        if obj["kind"] == "EnvoyProxy":
            annotations = obj["spec"]["provider"]["kubernetes"]["envoyService"].get("annotations", {})
            if any(is_proxy_protocol_annotation(k) for k in annotations):
                out.add(f"class:{obj['metadata']['name']}")
        if obj["kind"] == "Gateway":
            annotations = obj["spec"].get("infrastructure", {}).get("annotations", {})
            if any(is_proxy_protocol_annotation(k) for k in annotations):
                out.add(f"gateway:{obj['metadata']['name']}")
    return out


def parses_headers(rendered: list[dict[str, Any]], merged: bool) -> set[str]:
    """What a ClientTrafficPolicy with proxyProtocol makes parse them: the targeted Gateway's own Service,
    or (merged class, guarded by the port admission policy) the whole class's one Service."""
    gateways = {o["metadata"]["name"]: o for o in rendered if o["kind"] == "Gateway"}
    out = set()
    for obj in rendered:
        if obj["kind"] == "ClientTrafficPolicy" and "proxyProtocol" in obj["spec"]:
            for ref in obj["spec"]["targetRefs"]:
                gw = gateways.get(ref["name"])
                if gw is None:
                    continue  # a Gateway the block does not render: covered by validation, not here
                guarded = any(
                    o["kind"] == "ValidatingAdmissionPolicy" and "proxy-protocol" in o["metadata"]["name"]
                    for o in rendered
                )
                out.add(f"class:{gw['spec']['gatewayClassName']}" if merged and guarded else f"gateway:{ref['name']}")
    return out


@pytest.mark.parametrize("merge", [True, False], ids=["merged", "unmerged"])
def test_only_what_the_policy_parses_receives_headers(merge: bool) -> None:
    rendered = objects(_cfg(merge))
    assert receives_headers(rendered) == parses_headers(rendered, merge) != set()


@pytest.mark.parametrize("example", EXAMPLES)
def test_examples_never_send_headers_nothing_parses(example: str) -> None:
    cfg = yaml.safe_load((ROOT / "examples" / example / "config.yml").read_text(encoding="utf-8"))["config"]
    rendered = objects(cfg)
    merged = cfg.get("gatewayclass", {}).get("shared", {}).get("merge_gateways", True)
    assert receives_headers(rendered) <= parses_headers(rendered, merged)


def test_never_on_the_dedicated_class() -> None:
    for merge in (True, False):
        dedicated = find(_cfg(merge), "EnvoyProxy", "eg-dedicated")
        annotations = dedicated["spec"]["provider"]["kubernetes"]["envoyService"].get("annotations", {})
        assert not any(is_proxy_protocol_annotation(k) for k in annotations)


def test_unmerged_uses_the_default_gateways_own_service() -> None:
    gateway = find(_cfg(merge=False), "Gateway")
    assert gateway["spec"]["infrastructure"] == {"annotations": HETZNER}
    shared = find(_cfg(merge=False), "EnvoyProxy", "eg-shared")
    assert "annotations" not in shared["spec"]["provider"]["kubernetes"]["envoyService"]
    assert not _port_guard_objects(_cfg(merge=False)), "each Gateway has its own Service"


def _guard(cfg: dict[str, Any] | None = None) -> dict[str, Any]:
    return find(cfg or _cfg(), "ValidatingAdmissionPolicy", "envoy-proxy-protocol-ports")


@pytest.mark.parametrize(("gateway", "expected"), [c[1:] for c in GATEWAY_CASES], ids=[c[0] for c in GATEWAY_CASES])
def test_port_guard(gateway: dict[str, Any], expected: str | None) -> None:
    assert gate.validate(gateway).ok, "the case must be a Gateway the CRD accepts"
    found = judged(_guard(), gateway, expected)
    if expected is not None:
        assert "eg-dedicated" in found[0], "the message names the way out"


def test_port_guard_exempts_the_default_gateway_and_comes_first() -> None:
    """The block's own Gateway defines the ports: a guard left from the previous install (applied before
    the Gateway, removed by prune only after it) must not refuse a port added to it. The same Gateway
    anywhere else is a tenant's and is judged."""
    cfg = _cfg()
    default = find(cfg, "Gateway")
    assert denials(_guard(cfg), default) == []
    wider = {
        **default,
        "spec": {
            **default["spec"],
            "listeners": [*default["spec"]["listeners"], *GATEWAY_CASES[4][1]["spec"]["listeners"][1:]],
        },
    }
    assert denials(_guard(cfg), wider) == []
    elsewhere = {**wider, "metadata": {**wider["metadata"], "namespace": "tenant-a"}}
    assert denials(_guard(cfg), elsewhere) != []
    order = [(o["kind"], o["metadata"]["name"]) for o in objects(cfg)]
    assert order.index(("ValidatingAdmissionPolicyBinding", GUARD)) < order.index(("Gateway", "eg-shared"))


def test_port_guard_passes_the_gate() -> None:
    for kind in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "Gateway"):
        for merge in (True, False):
            for obj in objects(_cfg(merge)):
                if obj["kind"] == kind:
                    result = gate.validate(obj)
                    assert result.ok, (kind, result.errors)


@pytest.mark.parametrize(
    "key",
    [
        "load-balancer.hetzner.cloud/uses-proxyprotocol",
        "service.beta.kubernetes.io/aws-load-balancer-proxy-protocol",
        "service.beta.kubernetes.io/do-loadbalancer-enable-proxy-protocol",
        "loadbalancer.openstack.org/proxy-protocol",
    ],
)
def test_proxy_annotations_only_through_client_traffic(key: str) -> None:
    found = problems({"service": {"annotations": {key: "true"}}})
    expected = f"config.service.annotations.{key}: "
    assert any(p.startswith(expected) and "client_traffic.proxy_protocol.service_annotations" in p for p in found), (
        found
    )


@pytest.mark.parametrize(
    ("cfg", "path", "fix"),
    [
        (
            {
                "client_traffic": {"enabled": True, "proxy_protocol": {"service_annotations": HETZNER}},
                "default_gateway": {"enabled": True},
            },
            "config.client_traffic.proxy_protocol.service_annotations",
            "proxy_protocol.enabled: true",
        ),
        (
            {
                "client_traffic": {
                    "enabled": True,
                    "target_gateway_name": "edge",
                    "proxy_protocol": {"enabled": True, "service_annotations": HETZNER},
                }
            },
            "config.client_traffic.proxy_protocol.service_annotations",
            "spec.infrastructure.annotations",
        ),
        (
            {
                **_cfg(),
                "default_gateway": {
                    "enabled": True,
                    "listeners": [*LISTENERS, {"name": "dns", "protocol": "UDP", "port": 53}],
                },
            },
            "config.default_gateway.listeners[2].protocol",
            "TCP",
        ),
    ],
    ids=["without-enabled", "foreign-gateway", "udp-listener"],
)
def test_inconsistent_combinations_are_rejected(cfg: dict[str, Any], path: str, fix: str) -> None:
    found = problems(cfg)
    assert any(p.startswith(f"{path}: ") and fix in p for p in found), found


def test_no_annotations_no_guard() -> None:
    """PROXY parsing without annotations (a load balancer configured outside Kubernetes) renders no guard."""
    cfg = {**_cfg(), "client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True}}}
    assert not _port_guard_objects(cfg)
    assert receives_headers(objects(cfg)) == set()


def test_example_is_consistent() -> None:
    """The proxy-protocol example uses the scoped key, not service.annotations."""
    cfg = yaml.safe_load((ROOT / "examples" / "proxy-protocol" / "config.yml").read_text(encoding="utf-8"))["config"]
    assert not any(is_proxy_protocol_annotation(k) for k in cfg.get("service", {}).get("annotations", {}))
    assert cfg["client_traffic"]["proxy_protocol"]["service_annotations"]


GUARD = "envoy-proxy-protocol-ports"


def _port_guard_objects(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """The port guard's policy and binding (the block renders other admission policies beside it)."""
    return [o for o in objects(cfg) if o["metadata"]["name"] == GUARD and o["kind"].startswith("ValidatingAdmission")]
