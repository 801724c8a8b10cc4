"""Invariants of the WAF objects: fail-closed unless asked, PSS-restricted pods that survive disruption,
settings the service really accepts, and a config change that rolls the pods (and only then).

Mutation check (done once): defaulting waf.fail_open to true in config.schema.json turned
test_waf_objects[eep-fail-closed-by-default] red. Mutation: rendering processingMode.response whatever
waf.response_inspection.enabled says -> red ([eep-no-response-phase], [eep-response-off-explicitly]).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import config
from tests.conftest import ROOT
from tests.support.helpers import MISSING, at, find, kinds, load, with_gateway

# The WAF service (Go, `make waf-build`): its own strict settings loader judges the rendered file.
WAF_BINARY = ROOT / "waf" / "bin" / "envoy-waf"

ON = with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}}})
# Envoy attributes the WAF asks for with the request headers: the real client first of all.
ATTRS = {"attributes": ["source.address", "source.port", "destination.address", "destination.port", "request.protocol"]}
C = "spec.template.spec.containers[0]"

CASES: list[tuple[str, dict[str, Any], str, str, Any]] = [
    ("replicas", ON, "Deployment", "spec.replicas", 2),
    ("pdb", ON, "PodDisruptionBudget", "spec.minAvailable", 1),
    ("non-root", ON, "Deployment", "spec.template.spec.securityContext.runAsNonRoot", True),
    ("seccomp", ON, "Deployment", "spec.template.spec.securityContext.seccompProfile.type", "RuntimeDefault"),
    ("no-escalation", ON, "Deployment", f"{C}.securityContext.allowPrivilegeEscalation", False),
    ("drop-all", ON, "Deployment", f"{C}.securityContext.capabilities.drop", ["ALL"]),
    ("read-only-root", ON, "Deployment", f"{C}.securityContext.readOnlyRootFilesystem", True),
    ("grpc-readiness", ON, "Deployment", f"{C}.readinessProbe.grpc.port", 9002),
    (
        "spread",
        ON,
        "Deployment",
        "spec.template.spec.topologySpreadConstraints[0].topologyKey",
        "kubernetes.io/hostname",
    ),
    ("log-label", ON, "Deployment", "spec.template.metadata.labels.polycrate_log_source", "app"),
    ("h2c", ON, "Service", "spec.ports[0].appProtocol", "kubernetes.io/h2c"),
    (
        "image",
        {"waf": {"enabled": True, "image": {"registry": "r.example", "tag": "1.2.3"}}},
        "Deployment",
        f"{C}.image",
        "r.example/polycrate/envoy-waf:1.2.3",
    ),
    ("eep-targets-default-gateway", ON, "EnvoyExtensionPolicy", "spec.targetRefs[0].name", "eg-shared"),
    (
        "eep-backend",
        ON,
        "EnvoyExtensionPolicy",
        "spec.extProc[0].backendRefs[0]",
        {"group": "", "kind": "Service", "name": "envoy-waf", "port": 9002},
    ),
    ("eep-fail-closed-by-default", ON, "EnvoyExtensionPolicy", "spec.extProc[0].failOpen", False),
    (
        "eep-fail-open-on-request",
        {"waf": {"enabled": True, "fail_open": True, "default_policy": {"enabled": True}}},
        "EnvoyExtensionPolicy",
        "spec.extProc[0].failOpen",
        True,
    ),
    (
        "eep-body-buffered",
        ON,
        "EnvoyExtensionPolicy",
        "spec.extProc[0].processingMode.request",
        {**ATTRS, "body": "Buffered"},
    ),
    (
        "eep-headers-only",
        {"waf": {"enabled": True, "body": {"enabled": False}, "default_policy": {"enabled": True}}},
        "EnvoyExtensionPolicy",
        "spec.extProc[0].processingMode.request",
        ATTRS,
    ),
    ("eep-no-response-phase", ON, "EnvoyExtensionPolicy", "spec.extProc[0].processingMode.response", MISSING),
    (
        "eep-response-when-inspecting",
        {"waf": {"enabled": True, "default_policy": {"enabled": True}, "response_inspection": {"enabled": True}}},
        "EnvoyExtensionPolicy",
        "spec.extProc[0].processingMode",
        {"request": {**ATTRS, "body": "Buffered"}, "response": {"body": "BufferedPartial"}},
    ),
    (
        "eep-response-off-explicitly",
        {"waf": {"enabled": True, "default_policy": {"enabled": True}, "response_inspection": {"enabled": False}}},
        "EnvoyExtensionPolicy",
        "spec.extProc[0].processingMode",
        {"request": {**ATTRS, "body": "Buffered"}},
    ),
    (
        "eep-response-with-headers-only-requests",
        {
            "waf": {
                "enabled": True,
                "body": {"enabled": False},
                "default_policy": {"enabled": True},
                "response_inspection": {"enabled": True, "body_limit": 32768},
            }
        },
        "EnvoyExtensionPolicy",
        "spec.extProc[0].processingMode",
        {"request": ATTRS, "response": {"body": "BufferedPartial"}},
    ),
    ("eep-timeout", ON, "EnvoyExtensionPolicy", "spec.extProc[0].messageTimeout", "250ms"),
]


@pytest.mark.parametrize(("config", "kind", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_waf_objects(config: dict[str, Any], kind: str, path: str, expected: Any) -> None:
    assert at(find(with_gateway(config), kind), path) == expected


def test_absent_when_disabled_and_no_policy_unless_asked() -> None:
    assert not {"Deployment", "Service", "ConfigMap", "PodDisruptionBudget"} & set(kinds({}))
    assert "EnvoyExtensionPolicy" not in kinds({"waf": {"enabled": True}})


def service_settings(data: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    """What the service makes of a settings file (`envoy-waf --check`: its loader, defaults filled in), with
    crs_dir pointing at a stand-in CRS. Fails with the service's own message when it refuses the file."""
    if not WAF_BINARY.is_file():
        pytest.fail(f"{WAF_BINARY} is missing: run `make waf-build`")
    crs = tmp_path / "crs"
    (crs / "rules").mkdir(parents=True, exist_ok=True)
    (crs / "rules" / "REQUEST-901-INITIALIZATION.conf").write_text("", encoding="utf-8")
    path = tmp_path / "waf.yaml"
    path.write_text(yaml.safe_dump({**data, "crs_dir": str(crs)}), encoding="utf-8")
    done = subprocess.run(
        [str(WAF_BINARY), "--check", "--config", str(path)], capture_output=True, text=True, check=False, timeout=30
    )
    assert done.returncode == 0, done.stderr
    loaded: dict[str, Any] = yaml.safe_load(done.stdout)
    return loaded


@pytest.mark.go_binary
def test_settings_are_what_the_service_accepts(tmp_path: Any) -> None:
    """The ConfigMap's waf.yaml loads with the service's own strict Settings loader (unknown keys fail)."""
    data = yaml.safe_load(find(ON, "ConfigMap")["data"]["waf.yaml"])
    settings = service_settings(data, tmp_path)
    assert settings["mode"] == "block"
    assert settings["listen"].endswith(":9002")


@pytest.mark.go_binary
@pytest.mark.parametrize(
    ("waf", "expected"),
    [
        ({}, {}),
        (
            {"allowed_methods": ["GET", "M-SEARCH"], "allowed_request_content_types": ["application/json"]},
            {"allowed_methods": ["GET", "M-SEARCH"], "allowed_request_content_types": ["application/json"]},
        ),
        ({"validate_utf8": False}, {"validate_utf8": False}),
    ],
    ids=["defaults-are-the-services", "lists", "utf8-off"],
)
def test_crs_settings_reach_the_service(waf: dict[str, Any], expected: dict[str, Any], tmp_path: Path) -> None:
    """waf.allowed_methods, allowed_request_content_types and validate_utf8 arrive in the service's
    settings unchanged, and the block's defaults are the service's (REST verbs, the CRS's content types and
    every +json type, UTF-8 on). The content types' default is the service's alone: unset, the block leaves
    the key out of the settings file.

    Mutation check (done once, restored): leaving validate_utf8 out of components/waf.settings turned
    [utf8-off] red. Mutation waf-content-types-default-in-block (the CRS's list back as the schema's
    default, shadowing the service's) turns [defaults-are-the-services] red."""
    cfg = with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}, **waf}})
    data = yaml.safe_load(find(cfg, "ConfigMap")["data"]["waf.yaml"])
    loaded = service_settings(data, tmp_path)  # what the service makes of the rendered file
    defaults = service_settings({}, tmp_path)  # the service's own defaults
    for key in ("allowed_methods", "allowed_request_content_types", "validate_utf8"):
        assert loaded[key] == expected.get(key, defaults[key])
    if "allowed_request_content_types" not in waf:
        assert "allowed_request_content_types" not in data
        assert "application/*+json" in loaded["allowed_request_content_types"]


@pytest.mark.go_binary
@pytest.mark.parametrize(
    ("inspection", "expected"),
    [
        ({}, (False, 65536)),
        ({"enabled": True}, (True, 65536)),
        ({"enabled": True, "body_limit": 8192}, (True, 8192)),
    ],
    ids=["off-by-default", "on", "limit"],
)
def test_response_inspection_reaches_the_service(
    inspection: dict[str, Any], expected: tuple[bool, int], tmp_path: Any
) -> None:
    """waf.response_inspection arrives as the service's inspect_response / response_body_limit, in settings
    its strict loader accepts, and its defaults are the service's.

    Mutation: leaving inspect_response out of components/waf.settings -> red (all three cases)."""
    waf = {"enabled": True, "default_policy": {"enabled": True}, "response_inspection": inspection}
    cfg = with_gateway({"waf": waf})
    data = yaml.safe_load(find(cfg, "ConfigMap")["data"]["waf.yaml"])
    assert (data["inspect_response"], data["response_body_limit"]) == expected
    default = service_settings({}, tmp_path)
    assert (default["inspect_response"], default["response_body_limit"]) == (False, 65536)
    loaded = service_settings(data, tmp_path)
    assert (loaded["inspect_response"], loaded["response_body_limit"]) == expected


def test_config_change_rolls_pods_and_only_then() -> None:
    def checksum(cfg: dict[str, Any]) -> str:
        return str(
            find(cfg, "Deployment")["spec"]["template"]["metadata"]["annotations"]["envoy.polycrate.io/config-sha256"]
        )

    base = checksum(ON)
    assert checksum(ON) == base
    assert checksum({**ON, "waf": {**ON["waf"], "paranoia_level": 2}}) != base
    assert checksum({**ON, "waf": {**ON["waf"], "replicas": 3}}) == base


def test_fail_open_warns() -> None:
    warnings = load({"waf": {"enabled": True, "fail_open": True}}).warnings
    assert any("UNFILTERED" in w for w in warnings)


R = f"{C}.resources"
SIZES: list[tuple[str, dict[str, Any], dict[str, dict[str, str]]]] = [
    (
        "default-two-workers",
        {},
        {"requests": {"cpu": "500m", "memory": "320Mi"}, "limits": {"cpu": "2", "memory": "640Mi"}},
    ),
    (
        "four-workers",
        {"workers": 4},
        {"requests": {"cpu": "1000m", "memory": "576Mi"}, "limits": {"cpu": "4", "memory": "1152Mi"}},
    ),
    (
        "cpu-limit-sets-the-count",
        {"resources": {"limits": {"cpu": "1500m"}}},
        {"requests": {"cpu": "500m", "memory": "320Mi"}, "limits": {"cpu": "1500m", "memory": "640Mi"}},
    ),
    (
        "user-values-win",
        {"workers": 3, "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}}},
        {"requests": {"cpu": "750m", "memory": "1Gi"}, "limits": {"cpu": "3", "memory": "2Gi"}},
    ),
    (
        "derived-request-capped-at-user-limit",
        {"workers": 1, "resources": {"limits": {"cpu": "100m"}}},
        {"requests": {"cpu": "100m", "memory": "192Mi"}, "limits": {"cpu": "100m", "memory": "384Mi"}},
    ),
]


@pytest.mark.parametrize(("waf", "expected"), [c[1:] for c in SIZES], ids=[c[0] for c in SIZES])
def test_resources_follow_the_workers(waf: dict[str, Any], expected: dict[str, dict[str, str]]) -> None:
    """The pod's CPU and memory fit the worker count (waf.workers, else the CPU limit's, else 2), and the
    CPU limit is always set, so the service's own default (one worker per CPU of its quota) is bounded;
    whatever the user sets wins.

    Mutation check (done once, restored): dropping the CPU limit from waf.resources' derived values
    turned every case red."""
    cfg = {"waf": {"enabled": True, **waf}}
    assert at(find(cfg, "Deployment"), R) == expected


@pytest.mark.go_binary
@pytest.mark.parametrize(("workers", "expected"), [(None, MISSING), (3, 3)], ids=["unset", "three"])
def test_workers_reach_the_service(tmp_path: Any, workers: int | None, expected: Any) -> None:
    """waf.workers arrives in the service's settings as set; unset, the key is absent, so the service
    counts the CPUs of its quota (which the derived CPU limit sets to the same number).

    Mutation check (done once, restored): leaving workers out of components/waf.settings turned [three] red."""
    cfg: dict[str, Any] = {"waf": {"enabled": True, **({"workers": workers} if workers else {})}}
    data = yaml.safe_load(find(cfg, "ConfigMap")["data"]["waf.yaml"])
    assert data.get("workers", MISSING) == expected
    # 0: the Go runtime's default, GOMAXPROCS from the container's CPU quota.
    assert service_settings(data, tmp_path)["workers"] == (0 if expected is MISSING else expected)


HOSTILE_BODY_KEYS = [
    # (key, a value the user sets, the service's default when unset)
    ("max_multipart_parts", 200, 500),
    ("body_inspections", 1, 0),  # 0: one per worker (GOMAXPROCS)
    ("body_queue_timeout_ms", 2000, 30000),
]


@pytest.mark.go_binary
@pytest.mark.parametrize(("key", "value", "default"), HOSTILE_BODY_KEYS, ids=[c[0] for c in HOSTILE_BODY_KEYS])
def test_hostile_body_bounds_reach_the_service(tmp_path: Any, key: str, value: int, default: int) -> None:
    """waf.max_multipart_parts, body_inspections and body_queue_timeout_ms arrive in the service's settings as
    set, and the service reads them; unset, the key is absent and the service's own default applies, so a
    config without them renders the same settings file as before they existed (no pod roll on upgrade).

    Mutation check (done once, restored): leaving a key out of components/waf.OPTIONAL_SETTINGS turned its
    case red."""
    data = yaml.safe_load(find({"waf": {"enabled": True, key: value}}, "ConfigMap")["data"]["waf.yaml"])
    assert data[key] == value
    assert service_settings(data, tmp_path)[key] == value
    unset = yaml.safe_load(find({"waf": {"enabled": True}}, "ConfigMap")["data"]["waf.yaml"])
    assert key not in unset
    assert service_settings(unset, tmp_path)[key] == default


@pytest.mark.parametrize(
    ("waf", "path", "message"),
    [
        ({"max_multipart_parts": 1001}, "config.waf.max_multipart_parts", "greater than the maximum of 1000"),
        ({"max_multipart_parts": 0}, "config.waf.max_multipart_parts", "less than the minimum of 1"),
        ({"body_inspections": 65}, "config.waf.body_inspections", "greater than the maximum of 64"),
        ({"body_queue_timeout_ms": 0}, "config.waf.body_queue_timeout_ms", "less than the minimum of 1"),
        ({"body_queue_timeout_ms": "5s"}, "config.waf.body_queue_timeout_ms", "must be of type integer"),
    ],
    ids=["parts-above-argument-limit", "parts-zero", "inspections-too-many", "queue-zero", "queue-as-duration"],
)
def test_hostile_body_bounds_are_checked(waf: dict[str, Any], path: str, message: str) -> None:
    """Out of bounds, the block refuses the config at validation, naming the key (the service would refuse
    it at start: a WAF that never starts fails every request)."""
    with pytest.raises(config.ConfigError) as refused:
        load({"waf": {"enabled": True, **waf}})
    text = str(refused.value)
    assert f"{path}: " in text, text
    assert message in text, text


def test_workers_change_rolls_the_pods() -> None:
    def checksum(cfg: dict[str, Any]) -> str:
        return str(
            find(cfg, "Deployment")["spec"]["template"]["metadata"]["annotations"]["envoy.polycrate.io/config-sha256"]
        )

    assert checksum({**ON, "waf": {**ON["waf"], "workers": 3}}) != checksum(ON)


def test_the_service_has_a_writable_tmp() -> None:
    """The root filesystem is read-only; /tmp is an emptyDir."""
    deployment = find(ON, "Deployment")
    assert {"name": "tmp", "mountPath": "/tmp"} in at(deployment, f"{C}.volumeMounts")
    assert {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}} in at(deployment, "spec.template.spec.volumes")


def test_envoy_multiplexes_waf_streams() -> None:
    """No cap on streams per connection: HTTP/2 multiplexing to the WAF measured faster than one stream per
    connection (issue 26, make bench-waf), and Envoy balances streams over the WAF's endpoints itself."""
    policy = find(ON, "EnvoyExtensionPolicy")
    assert "backendSettings" not in at(policy, "spec.extProc[0]")


WARNINGS = [
    (
        "workers-above-cpu-limit",
        {"workers": 4, "resources": {"limits": {"cpu": "2"}}},
        "config.waf.workers: 4 workers share a CPU limit of 2",
    ),
    (
        "body-inspections-above-workers",
        {"workers": 2, "body_inspections": 4},
        "config.waf.body_inspections: 4 bodies inspected at once on 2 worker(s)",
    ),
    (
        "memory-limit-tight",
        {"workers": 4, "resources": {"limits": {"memory": "300Mi"}}},
        "config.waf.resources.limits.memory: 300Mi is tight for 4 worker(s)",
    ),
]


@pytest.mark.parametrize(("waf", "expected"), [c[1:] for c in WARNINGS], ids=[c[0] for c in WARNINGS])
def test_worker_sizes_that_cannot_pay_off_warn(waf: dict[str, Any], expected: str) -> None:
    # An image of the operator's own, so the unpublished default's warning is not among them.
    own = {"registry": "registry.example.com", "repository": "platform/envoy-waf"}
    warnings = load({"waf": {"enabled": True, "image": own, **waf}}).warnings
    assert any(w.startswith(expected) for w in warnings), warnings
    # Only the releases' advisories remain (tests/unit/test_advisories.py): no sizing warning.
    assert not [
        w for w in load({"waf": {"enabled": True, "image": own, "workers": 4}}).warnings if "known issues" not in w
    ]
