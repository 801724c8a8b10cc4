"""The verification gate over the default config and every example: each rendered object is what a
Kubernetes 1.33-1.36 apiserver with the real upstream CRDs would accept.

The negative controls prove the gate is not vacuous: each known-bad object must be rejected for the
stated reason, and an unknown CEL function must raise instead of passing. Mutation check (done once):
making crdgate._evaluate_rules skip every rule turned test_gate_rejects_known_bad_objects red for the
three CEL cases.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tests.support import gate
from tests.support.crdgate import CRDGate, GateError
from tests.support.helpers import objects, with_gateway

EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/config.yml"))


def _rendered_objects(example: str) -> list[dict[str, Any]]:
    files = sorted((ROOT / "examples" / example / "rendered" / "manifests").glob("*.yaml"))
    assert files, f"examples/{example}/rendered is empty: run `make docs`"
    return [yaml.safe_load(f.read_text(encoding="utf-8")) for f in files]


def _channel(example: str) -> str:
    cfg = yaml.safe_load((ROOT / "examples" / example / "config.yml").read_text(encoding="utf-8"))["config"]
    return str(cfg.get("gateway_api_crds", {}).get("channel", "standard"))


def _assert_passes(obj: dict[str, Any], channel: str = "standard") -> None:
    result = gate.validate(obj, channel)
    assert result.ok, f"{obj['kind']}/{obj['metadata']['name']}: {result.errors}"


def test_default_config_passes_the_gate() -> None:
    for obj in objects({}):
        _assert_passes(obj)


@pytest.mark.parametrize("example", EXAMPLES)
def test_example_passes_the_gate(example: str) -> None:
    for obj in _rendered_objects(example):
        _assert_passes(obj, _channel(example))


def test_everything_enabled_passes_the_gate() -> None:
    cfg = {
        "default_gateway": {"enabled": True},
        "client_traffic": {
            "enabled": True,
            "proxy_protocol": {"enabled": True, "optional": True},
            "timeouts": {"request_received": "10s", "idle": "1h", "stream_idle": "5m"},
        },
        "backend_traffic": {"enabled": True, "timeouts": {"connect": "5s", "request": "30s", "idle": "1h"}},
        "metrics": {"vmpodscrape": {"enabled": True, "namespace_selector": {"any": True}}},
        "service": {
            "loadbalancer_ip": "192.0.2.1",
            "loadbalancer_provider": "metallb",
            "annotations": {"a.example/b": "c"},
        },
        "data_plane": {"kind": "DaemonSet", "resources": {"limits": {"cpu": "2"}}},
        # EnvoyProxy's CEL rule for the image: the digest form the schema allows must pass it.
        "image": {"proxy": {"registry": "registry.example.com:5000", "digest": "sha256:" + "0" * 64}},
    }
    for obj in objects(cfg):
        _assert_passes(obj)
    for obj in objects({**cfg, "gateway_api_crds": {"channel": "experimental"}}):
        _assert_passes(obj, "experimental")


def test_cel_rules_really_run() -> None:
    """The default Gateway and EnvoyProxy have CEL rules; zero evaluated would mean the gate is blind."""
    checked = [obj for obj in objects(with_gateway()) if obj["kind"] in ("Gateway", "EnvoyProxy")]
    assert {obj["kind"] for obj in checked} == {"Gateway", "EnvoyProxy"}
    for obj in checked:
        assert gate.validate(obj).rules_evaluated > 0, obj["kind"]


def _mutated(kind: str, change: Any) -> dict[str, Any]:
    cfg = with_gateway(
        {
            "client_traffic": {"enabled": True},
            "service": {"loadbalancer_ip": "192.0.2.1", "loadbalancer_provider": "cloud"},
        }
    )
    obj = copy.deepcopy(next(o for o in objects(cfg) if o["kind"] == kind))
    change(obj)
    return obj


BAD: list[tuple[str, dict[str, Any], str]] = [
    (
        "https-passthrough (CEL)",
        _mutated("Gateway", lambda o: o["spec"]["listeners"][0].update(protocol="HTTPS", tls={"mode": "Passthrough"})),
        "tls mode must be Terminate for protocol HTTPS",
    ),
    (
        "terminate-without-cert (CEL)",
        _mutated("Gateway", lambda o: o["spec"]["listeners"][0].update(protocol="HTTPS", tls={})),
        "no such key",
    ),
    (
        "lb-ip-on-clusterip (CEL)",
        _mutated("EnvoyProxy", lambda o: o["spec"]["provider"]["kubernetes"]["envoyService"].update(type="ClusterIP")),
        "loadBalancerIP can only be set for LoadBalancer type",
    ),
    ("unknown field", _mutated("GatewayClass", lambda o: o["spec"].update(paramsRef={})), "paramsRef"),
    (
        "enum",
        _mutated("ClientTrafficPolicy", lambda o: o["spec"]["targetRefs"][0].update(kind="Service")),
        "targetRefs",
    ),
    ("bad name", _mutated("Gateway", lambda o: o["metadata"].update(name="Bad_Name")), "metadata.name"),
    (
        "duration pattern",
        _mutated("ClientTrafficPolicy", lambda o: o["spec"].update(timeout={"http": {"idleTimeout": "1 hour"}})),
        "idleTimeout",
    ),
]


@pytest.mark.parametrize(("obj", "reason"), [(o, r) for _, o, r in BAD], ids=[i for i, _, _ in BAD])
def test_gate_rejects_known_bad_objects(obj: dict[str, Any], reason: str) -> None:
    result = gate.validate(obj)
    assert not result.ok
    assert any(reason in e for e in result.errors), result.errors


def test_builtin_objects_are_checked_strictly() -> None:
    namespace = copy.deepcopy(next(o for o in objects({}) if o["kind"] == "Namespace"))
    namespace["spec"] = {"finalizers": ["kubernetes"], "bogus": True}
    assert not gate.validate(namespace).ok


def test_unevaluable_rule_raises_instead_of_passing(tmp_path: Path) -> None:
    """A CEL rule using a function the engine lacks must fail loudly, never count as a pass."""
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Thing", "plural": "things"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": {
                                    "type": "object",
                                    "properties": {"x": {"type": "string"}},
                                    "x-kubernetes-validations": [{"rule": "self.x.noSuchFunction()"}],
                                },
                            },
                        }
                    },
                }
            ],
        },
    }
    path = tmp_path / "crd.yaml"
    path.write_text(yaml.safe_dump(crd), encoding="utf-8")
    thing = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "t", "namespace": "n"},
        "spec": {"x": "y"},
    }
    with pytest.raises(GateError, match="cannot evaluate CEL rule"):
        CRDGate([path]).validate(thing)


def test_unknown_kind_raises() -> None:
    with pytest.raises(GateError, match="no served CRD version"):
        gate.validate(
            {
                "apiVersion": "gateway.networking.k8s.io/v1alpha2",
                "kind": "TCPRoute",
                "metadata": {"name": "x", "namespace": "y"},
            }
        )
