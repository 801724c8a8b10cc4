"""EnvoyProxy pair: `shared` (mergeGateways, one VIP) and `dedicated` (a proxy fleet per Gateway), with what
keeps a fleet serving through rollouts and node drains: a disruption budget, optional autoscaling, drain
settings, a surge-only rolling update, topology spread and placement (docs/operations.md#proxy-availability)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import images, labels, loadbalancer, placement
from ..formats import seconds
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


# Node and zone labels the topology spread uses (well-known labels the kubelet and cloud providers set).
NODE_KEY = "kubernetes.io/hostname"
ZONE_KEY = "topology.kubernetes.io/zone"
# One ReplicaSet's pods: each fleet (and each rollout's new pods) spreads on its own, not against the old
# ReplicaSet's pods or another Gateway's fleet of the same class.
SPREAD_MATCH_LABEL_KEYS = ["pod-template-hash"]


def fleet_size(data_plane: Mapping[str, Any]) -> int:
    """The fewest proxies a fleet runs: what the disruption budget and the rollout must keep."""
    if data_plane["kind"] != "Deployment":
        return 0  # one per node: no replica count, and node drains skip DaemonSet pods anyway
    autoscaling = data_plane["autoscaling"]
    return int(autoscaling["min_replicas"] if autoscaling["enabled"] else data_plane["replicas"])


def _pod(config: Config, class_name: str) -> dict[str, Any]:
    data_plane = config.get("data_plane")
    pod_labels = labels.proxy_pod(config, class_name)
    pod: dict[str, Any] = {"labels": pod_labels}
    if data_plane["node_selector"]:
        pod["nodeSelector"] = dict(sorted(data_plane["node_selector"].items()))
    if data_plane["tolerations"]:
        pod["tolerations"] = placement.tolerations(data_plane["tolerations"])
    if data_plane["priority_class_name"]:
        pod["priorityClassName"] = data_plane["priority_class_name"]
    if pull_secrets := images.pull_secrets(config):
        pod["imagePullSecrets"] = pull_secrets
    spread = data_plane["topology_spread"]
    if data_plane["kind"] == "Deployment" and spread["enabled"]:
        selector = {"matchLabels": dict(sorted(pod_labels.items()))}
        pod["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": key,
                "whenUnsatisfiable": when,
                "labelSelector": selector,
                "matchLabelKeys": list(SPREAD_MATCH_LABEL_KEYS),
                # A cordoned (draining) node carries the unschedulable taint: counting it as an empty domain
                # would make every other node "too full" and hold the replacement pod Pending.
                "nodeTaintsPolicy": "Honor",
            }
            for key, when in ((NODE_KEY, spread["when_unsatisfiable"]), (ZONE_KEY, "ScheduleAnyway"))
        ]
    return pod


def _strategy(kind: str) -> dict[str, Any]:
    """Rolling updates add new proxies before removing old ones, so a fleet never runs below its size, and
    they replace the whole fleet at once: a proxy that keeps running across a controller upgrade can lose its
    TLS certificates (envoyproxy/gateway#9918, v1.9.0 -> v1.9.1: listeners go active without them 15 s after
    the new controller's first push), so every old pod has to be out of the endpoints by then. The cost is
    a second fleet's requests (CPU, memory) for the length of one rollout (docs/operations.md)."""
    del kind  # the same for a Deployment and a DaemonSet (one surge pod per node)
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}}


def _workload(config: Config, class_name: str) -> tuple[str, dict[str, Any]]:
    container: dict[str, Any] = {"image": images.reference(config.get("image.proxy"))}
    resources = placement.resources(config.get("data_plane.resources"))
    if resources:
        container["resources"] = resources
    kind = config.get("data_plane.kind")
    workload: dict[str, Any] = {}
    if kind == "Deployment" and not config.get("data_plane.autoscaling.enabled"):
        # With autoscaling the HPA owns the count: a replicas value here would be written back on every
        # reconcile and fight it (envoyproxy/gateway#5751).
        workload["replicas"] = config.get("data_plane.replicas")
    workload["strategy"] = _strategy(kind)
    workload["pod"] = _pod(config, class_name)
    workload["container"] = container
    key = "envoyDeployment" if kind == "Deployment" else "envoyDaemonSet"
    return key, workload


def _availability(config: Config) -> dict[str, Any]:
    """envoyPDB and envoyHpa for the provider block (Deployment fleets only)."""
    data_plane = config.get("data_plane")
    out: dict[str, Any] = {}
    if fleet_size(data_plane) >= 2:
        out["envoyPDB"] = {"maxUnavailable": data_plane["disruption_budget"]["max_unavailable"]}
    autoscaling = data_plane["autoscaling"]
    if data_plane["kind"] == "Deployment" and autoscaling["enabled"]:
        out["envoyHpa"] = {
            "minReplicas": autoscaling["min_replicas"],
            "maxReplicas": autoscaling["max_replicas"],
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": autoscaling["cpu_utilization"]},
                    },
                }
            ],
        }
    return out


def _shutdown(config: Config) -> dict[str, Any]:
    shutdown = config.get("data_plane.shutdown")
    return {"drainTimeout": shutdown["drain_timeout"], "minDrainDuration": shutdown["min_drain_duration"]}


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
            "shutdown": _shutdown(config),
            "provider": {
                "type": "Kubernetes",
                "kubernetes": {
                    workload_key: workload,
                    **_availability(config),
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
    availability, availability_warnings = _availability_problems(data_plane, raw.get("data_plane") or {})
    placed = placement.toleration_problems("config.data_plane.tolerations", data_plane["tolerations"])
    return problems + availability + placed, warnings + availability_warnings


def _availability_problems(data_plane: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """Settings that would let a fleet drop below its size, block every drain, or fight over replicas."""
    problems: list[Problem] = []
    warnings: list[str] = []
    autoscaling = data_plane["autoscaling"]
    if autoscaling["enabled"] and data_plane["kind"] == "DaemonSet":
        problems.append(
            Problem(
                "config.data_plane.autoscaling.enabled",
                "a DaemonSet runs one proxy per node and cannot be autoscaled (Envoy Gateway refuses envoyHpa with "
                "envoyDaemonSet); set data_plane.kind: Deployment, or autoscaling.enabled: false",
            )
        )
    if autoscaling["enabled"] and autoscaling["min_replicas"] > autoscaling["max_replicas"]:
        problems.append(
            Problem(
                "config.data_plane.autoscaling.min_replicas",
                f"{autoscaling['min_replicas']} is above max_replicas {autoscaling['max_replicas']}; lower "
                "min_replicas or raise max_replicas",
            )
        )
    if autoscaling["enabled"] and not (data_plane["resources"].get("requests") or {}).get("cpu"):
        problems.append(
            Problem(
                "config.data_plane.autoscaling.cpu_utilization",
                "is a percentage of the proxies' CPU request, and data_plane.resources.requests.cpu is not set; "
                "set it (e.g. 100m)",
            )
        )
    if autoscaling["enabled"] and data_plane["kind"] == "Deployment" and "replicas" in raw:
        warnings.append(
            "config.data_plane.replicas: ignored with autoscaling.enabled (the autoscaler sets the count, "
            "between min_replicas and max_replicas)"
        )
    if data_plane["disruption_budget"]["max_unavailable"] == 0 and fleet_size(data_plane) >= 2:
        problems.append(
            Problem(
                "config.data_plane.disruption_budget.max_unavailable",
                "0 lets no proxy be evicted, so every node drain (and cluster upgrade) blocks until someone "
                "deletes the budget; use 1 or more",
            )
        )
    shutdown = data_plane["shutdown"]
    if seconds(shutdown["min_drain_duration"]) > seconds(shutdown["drain_timeout"]):
        problems.append(
            Problem(
                "config.data_plane.shutdown.min_drain_duration",
                f"{shutdown['min_drain_duration']} is longer than drain_timeout {shutdown['drain_timeout']}, "
                "which ends the drain first; lower min_drain_duration or raise drain_timeout",
            )
        )
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
