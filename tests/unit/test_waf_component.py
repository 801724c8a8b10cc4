"""Invariants of the WAF objects: fail-closed unless asked, PSS-restricted pods that survive disruption,
settings the service really accepts, and a config change that rolls the pods (and only then).

Mutation check (done once): defaulting waf.fail_open to true in schema.json turned
test_waf_objects[eep-fail-closed-by-default] red. Mutation: rendering processingMode.response whatever
waf.response_inspection.enabled says -> red ([eep-no-response-phase], [eep-response-off-explicitly]).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from envoy_waf.settings import Settings
from tests.support.helpers import MISSING, at, find, kinds, load, with_gateway

ON = with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}}})
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
    ("eep-body-buffered", ON, "EnvoyExtensionPolicy", "spec.extProc[0].processingMode.request", {"body": "Buffered"}),
    (
        "eep-headers-only",
        {"waf": {"enabled": True, "body": {"enabled": False}, "default_policy": {"enabled": True}}},
        "EnvoyExtensionPolicy",
        "spec.extProc[0].processingMode.request",
        {},
    ),
    ("eep-no-response-phase", ON, "EnvoyExtensionPolicy", "spec.extProc[0].processingMode.response", MISSING),
    (
        "eep-response-when-inspecting",
        {"waf": {"enabled": True, "default_policy": {"enabled": True}, "response_inspection": {"enabled": True}}},
        "EnvoyExtensionPolicy",
        "spec.extProc[0].processingMode",
        {"request": {"body": "Buffered"}, "response": {"body": "BufferedPartial"}},
    ),
    (
        "eep-response-off-explicitly",
        {"waf": {"enabled": True, "default_policy": {"enabled": True}, "response_inspection": {"enabled": False}}},
        "EnvoyExtensionPolicy",
        "spec.extProc[0].processingMode",
        {"request": {"body": "Buffered"}},
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
        {"request": {}, "response": {"body": "BufferedPartial"}},
    ),
    ("eep-timeout", ON, "EnvoyExtensionPolicy", "spec.extProc[0].messageTimeout", "250ms"),
]


@pytest.mark.parametrize(("config", "kind", "path", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_waf_objects(config: dict[str, Any], kind: str, path: str, expected: Any) -> None:
    assert at(find(with_gateway(config), kind), path) == expected


def test_absent_when_disabled_and_no_policy_unless_asked() -> None:
    assert not {"Deployment", "Service", "ConfigMap", "PodDisruptionBudget"} & set(kinds({}))
    assert "EnvoyExtensionPolicy" not in kinds({"waf": {"enabled": True}})


def test_settings_are_what_the_service_accepts(tmp_path: Any) -> None:
    """The ConfigMap's waf.yaml loads with the service's own strict Settings loader (unknown keys fail)."""
    data = yaml.safe_load(find(ON, "ConfigMap")["data"]["waf.yaml"])
    crs = tmp_path / "crs"
    (crs / "rules").mkdir(parents=True)
    (crs / "rules" / "REQUEST-901-INITIALIZATION.conf").write_text("", encoding="utf-8")
    path = tmp_path / "waf.yaml"
    path.write_text(yaml.safe_dump({**data, "crs_dir": str(crs)}), encoding="utf-8")
    settings = Settings.load(path)
    assert settings.mode == "block"
    assert settings.listen.endswith(":9002")


@pytest.mark.parametrize(
    ("waf", "expected"),
    [
        (
            {},
            Settings(crs_dir="/opt/crs", validate_utf8=True),
        ),
        (
            {"allowed_methods": ["GET", "M-SEARCH"], "allowed_request_content_types": ["application/json"]},
            Settings(
                crs_dir="/opt/crs",
                allowed_methods=("GET", "M-SEARCH"),
                allowed_request_content_types=("application/json",),
            ),
        ),
        ({"validate_utf8": False}, Settings(crs_dir="/opt/crs", validate_utf8=False)),
    ],
    ids=["defaults-are-the-services", "lists", "utf8-off"],
)
def test_crs_settings_reach_the_service(waf: dict[str, Any], expected: Settings) -> None:
    """waf.allowed_methods, allowed_request_content_types and validate_utf8 arrive in the service's
    settings unchanged, and the block's defaults are the service's (REST verbs, CRS content types, UTF-8 on).

    Mutation check (done once, restored): leaving validate_utf8 out of components/waf.settings turned
    [utf8-off] red."""
    cfg = with_gateway({"waf": {"enabled": True, "default_policy": {"enabled": True}, **waf}})
    data = yaml.safe_load(find(cfg, "ConfigMap")["data"]["waf.yaml"])
    for key in ("allowed_methods", "allowed_request_content_types", "validate_utf8"):
        assert data[key] == (list(getattr(expected, key)) if key != "validate_utf8" else expected.validate_utf8)


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
    default = Settings(crs_dir="/opt/crs")
    assert (default.inspect_response, default.response_body_limit) == (False, 65536)
    crs = tmp_path / "crs"
    (crs / "rules").mkdir(parents=True)
    (crs / "rules" / "REQUEST-901-INITIALIZATION.conf").write_text("", encoding="utf-8")
    path = tmp_path / "waf.yaml"
    path.write_text(yaml.safe_dump({**data, "crs_dir": str(crs)}), encoding="utf-8")
    assert (Settings.load(path).inspect_response, Settings.load(path).response_body_limit) == expected


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
