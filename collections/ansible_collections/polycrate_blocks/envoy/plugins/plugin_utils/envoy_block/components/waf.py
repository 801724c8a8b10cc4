"""The WAF: an ext_proc service (libmodsecurity + OWASP CRS, image built from waf/) and, when asked, the
EnvoyExtensionPolicy that puts it in front of the default Gateway."""

from __future__ import annotations

import hashlib
from typing import Any

import yaml

from .. import images, labels
from ..config import Config
from ..plan import Phase, Step
from .gateway import target_gateway

GRPC_PORT = 9002
METRICS_PORT = 9090
ROLE = "waf"
CONFIG_FILE = "waf.yaml"


def name(config: Config) -> str:
    return f"{config.block_name}-waf"


def selector(config: Config) -> dict[str, str]:
    return {"app.kubernetes.io/instance": config.block_name, labels.PROXY_ROLE_LABEL: ROLE}


def settings(config: Config) -> dict[str, Any]:
    """The service's settings file (envoy_waf.settings.Settings), mounted from the ConfigMap."""
    waf = config.get("waf")
    return {
        "crs_dir": "/opt/crs",
        "mode": waf["mode"],
        "paranoia_level": waf["paranoia_level"],
        "inbound_anomaly_threshold": waf["anomaly_threshold"],
        "exclude_rule_ids": list(waf["exclude_rule_ids"]),
        "exclude_rule_tags": list(waf["exclude_rule_tags"]),
        "extra_directives": waf["extra_directives"],
        "body_limit": waf["body"]["limit"],
        "body_limit_action": waf["body"]["limit_action"],
        "block_status": waf["block_status"],
        "listen": f"0.0.0.0:{GRPC_PORT}",
        "metrics_port": METRICS_PORT,
    }


def config_map(config: Config) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": labels.metadata(config, name(config), ROLE, config.get("namespace")),
        "data": {CONFIG_FILE: yaml.safe_dump(settings(config), sort_keys=True)},
    }


def deployment(config: Config) -> dict[str, Any]:
    waf = config.get("waf")
    pod_labels = {**labels.standard(config, ROLE), **selector(config), labels.LOG_SOURCE_LABEL: labels.LOG_SOURCE}
    # The settings' hash in the pod template: changed rules roll the pods, unchanged ones never do.
    checksum = hashlib.sha256(config_map(config)["data"][CONFIG_FILE].encode()).hexdigest()[:16]
    probe = {"grpc": {"port": GRPC_PORT}, "periodSeconds": 10, "failureThreshold": 3}
    resources = {
        part: dict(sorted(waf["resources"][part].items()))
        for part in ("requests", "limits")
        if waf["resources"].get(part)
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": labels.metadata(config, name(config), ROLE, config.get("namespace")),
        "spec": {
            "replicas": waf["replicas"],
            "selector": {"matchLabels": selector(config)},
            "template": {
                "metadata": {"labels": pod_labels, "annotations": {"envoy.polycrate.io/config-sha256": checksum}},
                "spec": {
                    "automountServiceAccountToken": False,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65532,
                        "runAsGroup": 65532,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": key,
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": selector(config)},
                        }
                        for key in ("kubernetes.io/hostname", "topology.kubernetes.io/zone")
                    ],
                    "terminationGracePeriodSeconds": 15,
                    "containers": [
                        {
                            "name": "waf",
                            "image": images.reference(waf["image"]),
                            "args": ["--config", f"/etc/envoy-waf/{CONFIG_FILE}"],
                            "ports": [
                                {"name": "grpc", "containerPort": GRPC_PORT, "protocol": "TCP"},
                                {"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
                            ],
                            "readinessProbe": probe,
                            "livenessProbe": {**probe, "initialDelaySeconds": 10},
                            "resources": resources,
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "readOnlyRootFilesystem": True,
                                "capabilities": {"drop": ["ALL"]},
                            },
                            "volumeMounts": [{"name": "settings", "mountPath": "/etc/envoy-waf", "readOnly": True}],
                        }
                    ],
                    "volumes": [{"name": "settings", "configMap": {"name": name(config)}}],
                },
            },
        },
    }


def service(config: Config) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": labels.metadata(config, name(config), ROLE, config.get("namespace")),
        "spec": {
            "selector": selector(config),
            "ports": [
                {
                    "name": "grpc",
                    "port": GRPC_PORT,
                    "targetPort": "grpc",
                    "protocol": "TCP",
                    "appProtocol": "kubernetes.io/h2c",
                }
            ],
        },
    }


def disruption_budget(config: Config) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": labels.metadata(config, name(config), ROLE, config.get("namespace")),
        "spec": {"minAvailable": 1, "selector": {"matchLabels": selector(config)}},
    }


def extension_policy(config: Config) -> dict[str, Any]:
    waf = config.get("waf")
    request: dict[str, Any] = {"body": "Buffered"} if waf["body"]["enabled"] else {}
    target = target_gateway(config, "waf")
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyExtensionPolicy",
        "metadata": labels.metadata(config, f"{target}-waf", "policy", config.get("namespace")),
        "spec": {
            "targetRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": target}],
            "extProc": [
                {
                    "backendRefs": [{"group": "", "kind": "Service", "name": name(config), "port": GRPC_PORT}],
                    # Presence of `request` sends the headers; the body only when buffered.
                    "processingMode": {"request": request},
                    "messageTimeout": waf["message_timeout"],
                    "failOpen": waf["fail_open"],
                }
            ],
        },
    }


def build(config: Config) -> list[Step]:
    if not config.get("waf.enabled"):
        return []
    steps = [
        Step(Phase.WAF, config_map(config)),
        Step(Phase.WAF, deployment(config)),
        Step(Phase.WAF, service(config)),
        Step(Phase.WAF, disruption_budget(config)),
    ]
    if config.get("waf.default_policy.enabled"):
        steps.append(Step(Phase.POLICY, extension_policy(config), wait_condition="Accepted"))
    return steps
