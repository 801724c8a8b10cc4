"""EnvoyProxy pair: `shared` (mergeGateways, one VIP) and `dedicated` (a proxy fleet per Gateway)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import images, labels, loadbalancer
from ..model import Checked, Config, Problem
from ..plan import Phase, Step
from .gateway import proxy_protocol_scope

# JSON access log to stdout: one line per request, fields a log pipeline can index without parsing.
ACCESS_LOG_FIELDS = {
    "start_time": "%START_TIME%",
    "method": "%REQ(:METHOD)%",
    "path": "%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%",
    "protocol": "%PROTOCOL%",
    "authority": "%REQ(:AUTHORITY)%",
    "response_code": "%RESPONSE_CODE%",
    "response_flags": "%RESPONSE_FLAGS%",
    "response_code_details": "%RESPONSE_CODE_DETAILS%",
    "bytes_received": "%BYTES_RECEIVED%",
    "bytes_sent": "%BYTES_SENT%",
    "duration_ms": "%DURATION%",
    "upstream_service_time": "%RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)%",
    "upstream_host": "%UPSTREAM_HOST%",
    "upstream_cluster": "%UPSTREAM_CLUSTER%",
    "downstream_remote_address": "%DOWNSTREAM_REMOTE_ADDRESS%",
    "x_forwarded_for": "%REQ(X-FORWARDED-FOR)%",
    "user_agent": "%REQ(USER-AGENT)%",
    "request_id": "%REQ(X-REQUEST-ID)%",
    "route_name": "%ROUTE_NAME%",
}


def _resources(config: Config) -> dict[str, Any]:
    spec = config.get("data_plane.resources")
    return {part: dict(sorted(spec[part].items())) for part in ("requests", "limits") if spec.get(part)}


def _service(config: Config, shared: bool) -> dict[str, Any]:
    service = config.get("service")
    annotations = dict(service["annotations"])
    spec: dict[str, Any] = {
        "type": service["type"],
        "externalTrafficPolicy": service["external_traffic_policy"],
    }
    if shared and service["loadbalancer_ip"]:
        # Only forms the provider(s) read: MetalLB refuses a Service that carries its annotation and
        # spec.loadBalancerIP together, and leaves it Pending.
        provider = service.get("loadbalancer_provider")
        fields, vip_annotations = loadbalancer.vip_fields(provider, service["loadbalancer_ip"])
        spec.update(fields)
        annotations.update(vip_annotations)
    if shared and proxy_protocol_scope(config) == "class":
        # The load balancer sends PROXY headers on every port of this one Service of the merged class.
        annotations.update(config.get("client_traffic.proxy_protocol.service_annotations"))
    if annotations:
        spec["annotations"] = dict(sorted(annotations.items()))
    return spec


def _workload(config: Config, class_name: str) -> tuple[str, dict[str, Any]]:
    container: dict[str, Any] = {"image": images.reference(config.get("image.proxy"))}
    resources = _resources(config)
    if resources:
        container["resources"] = resources
    workload: dict[str, Any] = {}
    if config.get("data_plane.kind") == "Deployment":
        workload["replicas"] = config.get("data_plane.replicas")
    workload["pod"] = {"labels": labels.proxy_pod(config, class_name)}
    workload["container"] = container
    key = "envoyDeployment" if config.get("data_plane.kind") == "Deployment" else "envoyDaemonSet"
    return key, workload


def _telemetry(config: Config) -> dict[str, Any]:
    if not config.get("logging.access_log"):
        return {"accessLog": {"disable": True}}
    return {
        "accessLog": {
            "settings": [
                {
                    "format": {"type": "JSON", "json": dict(ACCESS_LOG_FIELDS)},
                    "sinks": [{"type": "File", "file": {"path": "/dev/stdout"}}],
                }
            ]
        }
    }


def envoy_proxy(config: Config, shared: bool) -> dict[str, Any]:
    class_name = config.get("gatewayclass.shared.name" if shared else "gatewayclass.dedicated.name")
    workload_key, workload = _workload(config, class_name)
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyProxy",
        "metadata": labels.metadata(config, class_name, "proxy-config", config.get("namespace")),
        "spec": {
            "mergeGateways": bool(config.get("gatewayclass.shared.merge_gateways")) if shared else False,
            "logging": {"level": {"default": config.get("logging.level")}},
            "telemetry": _telemetry(config),
            "provider": {
                "type": "Kubernetes",
                "kubernetes": {
                    workload_key: workload,
                    "envoyService": _service(config, shared),
                },
            },
        },
    }


def build(config: Config) -> list[Step]:
    return [
        Step(Phase.PROXY_CONFIG, envoy_proxy(config, shared=True)),
        Step(Phase.PROXY_CONFIG, envoy_proxy(config, shared=False)),
    ]


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """The proxies' Service and data plane: a fixed VIP in forms its provider reads, on one Service only."""
    warnings: list[str] = []
    service = values["service"]
    problems = _service_problems(values)
    data_plane = values["data_plane"]
    if service["external_traffic_policy"] == "Local" and data_plane["kind"] == "Deployment":
        warnings.append(
            "config.service.external_traffic_policy: Local with a Deployment data plane drops traffic "
            "on nodes without a proxy pod and keeps the client IP only where one runs; use "
            "data_plane.kind: DaemonSet to keep the client IP on every node"
        )
    if data_plane["kind"] == "DaemonSet" and "replicas" in raw.get("data_plane", {}):
        warnings.append("config.data_plane.replicas: ignored with data_plane.kind DaemonSet (one proxy per node)")
    return problems, warnings


def _service_problems(values: Mapping[str, Any]) -> list[Problem]:
    """A fixed VIP must reach exactly one Service, in forms its LoadBalancer provider reads."""
    service = values["service"]
    problems: list[Problem] = []
    if service["loadbalancer_ip"] and service["type"] != "LoadBalancer":
        problems.append(
            Problem(
                "config.service.loadbalancer_ip",
                f"needs service.type LoadBalancer (is {service['type']}); remove loadbalancer_ip or change the type",
            )
        )
    if service["loadbalancer_ip"] and not values["gatewayclass"]["shared"]["merge_gateways"]:
        problems.append(
            Problem(
                "config.service.loadbalancer_ip",
                "the shared class does not merge Gateways (gatewayclass.shared.merge_gateways: false), so every "
                "Gateway of the class gets its own Service and each would ask for this one address; set "
                "gatewayclass.shared.merge_gateways: true, or remove loadbalancer_ip",
            )
        )
    for key in sorted(service["annotations"]):
        if key in loadbalancer.VIP_ANNOTATIONS["all"]:
            problems.append(
                Problem(
                    f"config.service.annotations.{key}",
                    "service.annotations go on every proxy Service of both classes, so each would ask for this "
                    "address; remove it and set service.loadbalancer_ip (and service.loadbalancer_provider if "
                    "you want one provider's form only), which only the shared Service carries",
                )
            )
    return problems
