"""image.pull_secrets (issue 40): a registry that needs credentials works for every pod the block causes, not
only for the chart. Guards: every pod-producing object the block renders carries the names as
imagePullSecrets, for every kind of object any config renders (the WAF's Deployment, both EnvoyProxies'
Deployment or DaemonSet pod); the chart gets them through gateway-helm's highest-precedence value
(global.imagePullSecrets), which its v1.9.1 templates put on the controller's Deployment, certgen's Job and the
default EnvoyProxy of its config (helm template of the real chart); the objects pass the real CRDs and
Kubernetes' schemas, and the tenant EnvoyProxy guard; a name is validated and named once; nothing is added
without them (renders unchanged).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from envoy_block import builder
from envoy_block.components import controller
from tests.conftest import ROOT
from tests.support import gate
from tests.support.admission import denials
from tests.support.helpers import find, load, objects, plan
from tests.support.shared import shared_dir

# Judged with the gate's tools (kubernetes-validate, CEL: jsonschema 4), which Polycrate's image Python cannot
# have: not in make unit-image.
pytestmark = pytest.mark.not_in_image

SECRETS = ["regcred", "mirror.example.com"]
EXPECTED = [{"name": name} for name in SECRETS]
# Kinds whose objects make pods: Kubernetes' workloads, and Envoy Gateway's EnvoyProxy (its provider's
# envoyDeployment / envoyDaemonSet pod becomes the proxies' pod template).
WORKLOADS = ("Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "CronJob")
HELM = ROOT / ".tools/bin/helm"


def with_secrets(cfg: dict[str, Any]) -> dict[str, Any]:
    return {**cfg, "image": {**cfg.get("image", {}), "pull_secrets": list(SECRETS)}}


def pod_specs(obj: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, the pod spec) of every pod template an object holds."""
    kind, spec = obj["kind"], obj.get("spec") or {}
    if kind == "Pod":
        yield "spec", spec
    elif kind == "CronJob":
        yield "spec.jobTemplate.spec.template.spec", spec["jobTemplate"]["spec"]["template"]["spec"]
    elif kind in WORKLOADS:
        yield "spec.template.spec", spec["template"]["spec"]
    elif kind == "EnvoyProxy":
        kubernetes = (spec.get("provider") or {}).get("kubernetes") or {}
        for key in ("envoyDeployment", "envoyDaemonSet"):
            if key in kubernetes:
                yield f"spec.provider.kubernetes.{key}.pod", kubernetes[key].get("pod") or {}


CONFIGS = [
    *builder.EVERY_KIND_CONFIGS,
    {"data_plane": {"kind": "DaemonSet"}, "waf": {"enabled": True}},
    {"data_plane": {"autoscaling": {"enabled": True}}},
]


@pytest.mark.parametrize("cfg", CONFIGS, ids=[f"config-{i}" for i in range(len(CONFIGS))])
def test_every_pod_the_block_renders_carries_them(cfg: dict[str, Any]) -> None:
    rendered = objects(with_secrets(cfg))
    found = [(o["kind"], o["metadata"]["name"], where, pod) for o in rendered for where, pod in pod_specs(o)]
    assert {kind for kind, *_ in found} >= {"EnvoyProxy"}
    for kind, name, where, pod in found:
        assert pod.get("imagePullSecrets") == EXPECTED, f"{kind} {name} {where}"
    every_kind = {o["kind"] for o in rendered}
    assert not (every_kind & set(WORKLOADS)) - {k for k, *_ in found}


def test_the_waf_and_both_proxy_fleets_are_among_them() -> None:
    cfg = with_secrets({"waf": {"enabled": True}})
    waf = find(cfg, "Deployment", "envoy-waf")
    assert waf["spec"]["template"]["spec"]["imagePullSecrets"] == EXPECTED
    for name in ("eg-shared", "eg-dedicated"):
        proxy = find(cfg, "EnvoyProxy", name)
        assert proxy["spec"]["provider"]["kubernetes"]["envoyDeployment"]["pod"]["imagePullSecrets"] == EXPECTED
    daemonset = find(with_secrets({"data_plane": {"kind": "DaemonSet"}}), "EnvoyProxy", "eg-shared")
    assert daemonset["spec"]["provider"]["kubernetes"]["envoyDaemonSet"]["pod"]["imagePullSecrets"] == EXPECTED


def test_the_chart_gets_them_at_its_highest_precedence() -> None:
    values = plan(with_secrets({})).to_dict()["helm"]["values"]
    assert values["global"]["imagePullSecrets"] == EXPECTED


def test_without_them_nothing_is_added() -> None:
    cfg = {"waf": {"enabled": True}}
    assert "imagePullSecrets" not in plan(cfg).to_dict()["helm"]["values"]["global"]
    assert all("imagePullSecrets" not in pod for o in objects(cfg) for _, pod in pod_specs(o))


def test_the_rendered_objects_pass_the_real_schemas_and_the_tenant_guard() -> None:
    cfg = with_secrets({"waf": {"enabled": True}, "data_plane": {"kind": "DaemonSet"}})
    policy = find(cfg, "ValidatingAdmissionPolicy", "envoy-envoyproxy-guard")
    for obj in objects(cfg):
        if obj["kind"] in ("EnvoyProxy", "Deployment"):
            result = gate.validate(obj)
            assert result.ok, (obj["kind"], obj["metadata"]["name"], result.errors)
        if obj["kind"] == "EnvoyProxy":
            assert denials(policy, obj) == [], obj["metadata"]["name"]


def test_names_are_taken_as_given() -> None:
    """Refused: a name that is no DNS-1123 subdomain, a name twice (tests/unit/test_config_invalid.py)."""
    assert load({"image": {"pull_secrets": SECRETS}}).values["image"]["pull_secrets"] == SECRETS


@pytest.mark.go_binary
def test_gateway_helm_puts_them_on_the_controller_certgen_and_its_default_proxy() -> None:
    """helm template of the real v1.9.1 chart with the block's values: every pod template it renders (the
    controller's Deployment, certgen's Job) carries them, and so does the default EnvoyProxy in its config."""
    helm = plan(with_secrets({})).to_dict()["helm"]
    chart = shared_dir() / f"charts/gateway-helm-{helm['chart_version']}.tgz"
    rendered = subprocess.run(
        [str(HELM), "template", helm["name"], str(chart), "-n", helm["namespace"], "-f", "-"],
        input=yaml.safe_dump(helm["values"]),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    pods = [(d["kind"], d["metadata"]["name"], pod) for d in docs for _, pod in pod_specs(d)]
    assert {(kind, name) for kind, name, _ in pods} >= {
        ("Deployment", "envoy-gateway"),
        ("Job", "envoy-gateway-gateway-helm-certgen"),
    }
    for kind, name, pod in pods:
        assert pod.get("imagePullSecrets") == EXPECTED, (kind, name)
    (config_map,) = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == controller.CONFIG_MAP]
    settings = yaml.safe_load(config_map["data"]["envoy-gateway.yaml"])
    proxy_pod = settings["envoyProxy"]["provider"]["kubernetes"]["envoyDeployment"]["pod"]
    assert proxy_pod["imagePullSecrets"] == EXPECTED
