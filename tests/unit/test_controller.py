"""Invariant: what the block hands to helm - chart ref, pinned version, CRDs skipped (the block owns
them), images, deploy type and pod labels - and credentials only in the in-memory release; on a controller
release that has it (v1.9.2 and later), the EnvoyProxyPatch runtime flag off while tenant_guards.envoy_proxy
is on (mutation envoyproxy-patch-flag-off, tools/mutate.py); the real v1.9.1 chart puts what the block
renders where the controller reads it (go_binary: helm). The controller's day-2 settings (controller.replicas,
resources, node_selector, tolerations, priority_class_name) reach gateway-helm's values and, through the real
chart, the Deployment, certgen's job and, with 2 replicas, a disruption budget and leader election (mutation
controller-budget-two-replicas); their tolerations are checked as the proxies' are (tests/unit/
test_config_invalid.py, mutation placement-toleration-rules)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.charts import helm_template
from tests.support.helpers import at, load, plan

DIGEST = "sha256:" + "0123456789abcdef" * 4
CASES: list[tuple[str, dict[str, Any], str, Any]] = [
    ("chart-ref", {}, "chart_ref", "oci://docker.io/envoyproxy/gateway-helm"),
    ("chart-version", {}, "chart_version", "v1.9.1"),
    ("skip-crds", {}, "skip_crds", True),
    ("crd-subchart-off", {}, "values.crds.enabled", False),
    ("release-namespace", {"namespace": "edge"}, "namespace", "edge"),
    (
        "controller-image",
        {"image": {"controller": {"registry": "r.example", "tag": "v1.9.1"}}},
        "values.global.images.envoyGateway.image",
        "r.example/envoyproxy/gateway:v1.9.1",
    ),
    ("proxy-image", {}, "values.global.images.envoyProxy.image", "docker.io/envoyproxy/envoy:distroless-v1.39.6"),
    (
        "controller-image-by-digest",
        {"image": {"controller": {"digest": DIGEST}}},
        "values.global.images.envoyGateway.image",
        f"docker.io/envoyproxy/gateway:v1.9.1@{DIGEST}",
    ),
    (
        "deploy-type",
        {"deploy_type": "GatewayNamespace", "gatewayclass": {"shared": {"merge_gateways": False}}},
        "values.config.envoyGateway.provider.kubernetes.deploy.type",
        "GatewayNamespace",
    ),
    ("pod-log-label", {}, "values.deployment.pod.labels.polycrate_log_source", "app"),
]


@pytest.mark.parametrize(("config", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_helm_release(config: dict[str, Any], path: str, expected: Any) -> None:
    assert at(plan(config).to_dict()["helm"], path) == expected


def test_credentials_only_with_include_secrets() -> None:
    p = plan({"chart": {"auth": {"username": "robot", "password": "s3cr3t-value"}}})
    assert p.to_dict(include_secrets=True)["helm"]["auth"] == {"username": "robot", "password": "s3cr3t-value"}
    assert "s3cr3t-value" not in repr(p.to_dict(include_secrets=False))


def _release(tag: str) -> dict[str, Any]:
    return {"chart": {"version": tag}, "image": {"controller": {"tag": tag}}}


FLAG_OFF = {"runtimeFlags": {"disabled": ["EnvoyProxyPatch"]}}


@pytest.mark.parametrize(
    ("config", "flags"),
    [
        ({}, {}),  # v1.9.1 does not know the flag
        (_release("v1.9.2"), FLAG_OFF),
        (_release("v1.9.3"), FLAG_OFF),
        (_release("v1.10.0"), FLAG_OFF),
        (_release("v1.9.2-rc.1"), {}),
        ({"image": {"controller": {"tag": "latest"}}}, {}),  # a tag that names no version: not judged
        ({**_release("v1.9.2"), "tenant_guards": {"envoy_proxy": False}}, {}),  # the platform's own patches
    ],
    ids=["v1.9.1", "v1.9.2", "v1.9.3", "v1.10.0", "v1.9.2-rc.1", "latest", "v1.9.2-guard-off"],
)
def test_envoy_proxy_patch_flag(config: dict[str, Any], flags: dict[str, Any]) -> None:
    """tenant_guards.envoy_proxy refuses patch fields at admission; a controller that has the EnvoyProxyPatch
    runtime flag also stops applying them (EnvoyProxies that predate the guard)."""
    eg_config = plan(config).to_dict()["helm"]["values"]["config"]["envoyGateway"]
    assert {k: v for k, v in eg_config.items() if k == "runtimeFlags"} == flags


def chart(config: dict[str, Any], tmp_path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The real gateway-helm v1.9.1 rendered with the values the block hands to helm, by (kind, name)."""
    values = tmp_path / "values.yaml"
    values.write_text(yaml.safe_dump(plan(config).to_dict()["helm"]["values"]), encoding="utf-8")
    rendered = helm_template(
        "gateway-helm-v1.9.1.tgz",
        *("--namespace", "envoy-gateway-system", "--skip-crds", "--values", str(values)),
        release="envoy-gateway",
    )
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def controller_config(objects: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    """The EnvoyGateway config the controller reads (its ConfigMap's envoy-gateway.yaml)."""
    return dict(yaml.safe_load(objects[("ConfigMap", "envoy-gateway-config")]["data"]["envoy-gateway.yaml"]))


@pytest.mark.go_binary
def test_the_chart_hands_the_runtime_flag_to_the_controller(tmp_path: Path) -> None:
    """The flag reaches the EnvoyGateway config beside the chart's own settings (the chart merges the block's
    config over its defaults), and without it nothing else changes."""
    flagged = controller_config(chart(_release("v1.9.2"), tmp_path))
    assert flagged["runtimeFlags"] == {"disabled": ["EnvoyProxyPatch"]}
    plain = controller_config(chart({}, tmp_path))
    assert "runtimeFlags" not in plain
    # The release's own images differ (the shutdown manager is the controller's image); nothing else does.
    for config in (flagged, plain):
        config["provider"]["kubernetes"]["shutdownManager"].pop("image")
    assert {k: v for k, v in flagged.items() if k != "runtimeFlags"} == plain


HA = {"controller": {"replicas": 2}}
PLACED = {
    "controller": {
        "node_selector": {"node-role.example.com/platform": "true"},
        "tolerations": [{"key": "platform", "operator": "Exists", "effect": "NoSchedule"}],
        "priority_class_name": "platform-critical",
    }
}
CHART_RESOURCES = {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1024Mi"}}
DEPLOYMENT_CASES: list[tuple[str, dict[str, Any], str, Any]] = [
    ("replicas-default", {}, "values.deployment.replicas", 1),
    ("replicas", HA, "values.deployment.replicas", 2),
    ("resources-default-the-charts", {}, "values.deployment.envoyGateway.resources", CHART_RESOURCES),
    (
        "resources-filled-from-the-default",
        {"controller": {"resources": {"requests": {"memory": "512Mi"}}}},
        "values.deployment.envoyGateway.resources",
        {"requests": {"cpu": "100m", "memory": "512Mi"}, "limits": {"memory": "1024Mi"}},
    ),
    ("node-selector", PLACED, "values.deployment.pod.nodeSelector", {"node-role.example.com/platform": "true"}),
    (
        "tolerations",
        PLACED,
        "values.deployment.pod.tolerations",
        [{"key": "platform", "operator": "Exists", "effect": "NoSchedule"}],
    ),
    ("priority-class", PLACED, "values.deployment.priorityClassName", "platform-critical"),
    ("certgen-placed-alike", PLACED, "values.certgen.job.nodeSelector", {"node-role.example.com/platform": "true"}),
    ("budget-with-two", HA, "values.podDisruptionBudget", {"maxUnavailable": 1}),
    (
        "leader-election-with-two",
        HA,
        "values.config.envoyGateway.provider.kubernetes.leaderElection",
        {"disable": False},
    ),
]


@pytest.mark.parametrize(
    ("config", "path", "expected"), [c[1:] for c in DEPLOYMENT_CASES], ids=[c[0] for c in DEPLOYMENT_CASES]
)
def test_controller_settings(config: dict[str, Any], path: str, expected: Any) -> None:
    assert at(plan(config).to_dict()["helm"], path) == expected


def test_one_replica_gets_no_budget_and_no_placement() -> None:
    """The defaults add nothing the chart does not already do: no budget (one pod: it would block drains or
    mean nothing), leader election left to its default, no placement, no priority."""
    values = plan({}).to_dict()["helm"]["values"]
    assert "podDisruptionBudget" not in values
    assert "certgen" not in values
    assert "leaderElection" not in values["config"]["envoyGateway"]["provider"]["kubernetes"]
    assert set(values["deployment"]["pod"]) == {"labels"}
    assert "priorityClassName" not in values["deployment"]


@pytest.mark.go_binary
def test_the_chart_renders_the_controller_settings(tmp_path: Path) -> None:
    """Through the real gateway-helm v1.9.1: the Deployment, certgen's job, the budget and the leader election
    the controller reads; the defaults leave the Deployment as the chart's own defaults (no roll on upgrade)."""
    objects = chart({"controller": {**HA["controller"], **PLACED["controller"]}}, tmp_path)
    deployment = objects[("Deployment", "envoy-gateway")]
    pod = deployment["spec"]["template"]["spec"]
    assert deployment["spec"]["replicas"] == 2
    assert pod["nodeSelector"] == {"node-role.example.com/platform": "true"}
    assert pod["tolerations"] == [{"key": "platform", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod["priorityClassName"] == "platform-critical"
    (job,) = [o for (kind, _), o in objects.items() if kind == "Job"]
    assert job["spec"]["template"]["spec"]["nodeSelector"] == pod["nodeSelector"]
    assert job["spec"]["template"]["spec"]["tolerations"] == pod["tolerations"]
    budget = objects[("PodDisruptionBudget", "envoy-gateway")]
    assert budget["spec"]["maxUnavailable"] == 1
    assert "minAvailable" not in budget["spec"]
    assert budget["spec"]["selector"]["matchLabels"].items() <= pod_labels(deployment).items()
    kubernetes = controller_config(objects)["provider"]["kubernetes"]
    assert kubernetes["leaderElection"] == {"disable": False}
    assert "rateLimitDeployment" in kubernetes, "the chart's own provider settings stay beside the block's"

    default = chart({}, tmp_path)
    (container,) = default[("Deployment", "envoy-gateway")]["spec"]["template"]["spec"]["containers"]
    assert container["resources"] == CHART_RESOURCES
    assert default[("Deployment", "envoy-gateway")]["spec"]["replicas"] == 1
    assert not [key for key in default if key[0] == "PodDisruptionBudget"]


def pod_labels(deployment: dict[str, Any]) -> dict[str, str]:
    return dict(deployment["spec"]["template"]["metadata"]["labels"])


def test_deployment_settings_without_the_controller_warn() -> None:
    """With controller.install false the block renders no controller: the settings set are named as ignored."""
    cfg = {"controller": {"install": False, "replicas": 2, "tolerations": [{"operator": "Exists"}]}}
    assert [w for w in load(cfg).warnings if w.startswith("config.controller:")] == [
        "config.controller: replicas, tolerations ignored with controller.install: false (the block renders no "
        "controller); set them where the controller is installed"
    ]
    assert not [w for w in load({"controller": {"replicas": 2}}).warnings if w.startswith("config.controller:")]
