"""The WAF: an ext_proc service (Coraza + OWASP CRS, Go, image built from waf/), when asked the
EnvoyExtensionPolicy that puts it in front of the default Gateway, and (waf.enforce) the admission policy
that stops tenants' route-level EnvoyExtensionPolicies from switching it off. The pod is sized from its
worker count (resources()); the checks keep its body and response limits within what Envoy buffers."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

import yaml

from .. import advisories, body_buffer, credentials, formats, images, labels, placement, seclang, waf_exclusions
from ..model import Checked, Config, Problem
from ..plan import Phase, Step
from . import admission
from .gateway import target_gateway

GRPC_PORT = 9002
TMP = "/tmp"  # an emptyDir: the root filesystem is read-only
# What the WAF needs from Envoy besides the request (Envoy attributes, sent with the request headers): the
# real client for REMOTE_ADDR rules and the audit line (the PROXY protocol's address when the listener reads
# one), the listener's address, and the protocol for CRS's HTTP version check. Without them the WAF sees
# no client at all (Envoy Gateway asks for no attributes by default).
REQUEST_ATTRIBUTES = ("source.address", "source.port", "destination.address", "destination.port", "request.protocol")
METRICS_PORT = 9090
ROLE = "waf"
CONFIG_FILE = "waf.yaml"
# waf.* keys passed to the service's settings file under the same name, only when set: the pod's CPUs
# (GOMAXPROCS), the hostile-body bounds (issue 26: parts per multipart body, bodies inspected at once, how
# long a body waits for a slot) and the allowed request media types, whose default (the CRS's list and every
# +json type) is the service's alone (waf/internal/settings.DefaultContentTypes), never a copy here.
OPTIONAL_SETTINGS = (
    "workers",
    "max_multipart_parts",
    "body_inspections",
    "body_queue_timeout_ms",
    "allowed_request_content_types",
)
# Route kinds on the HTTP listeners a Gateway-level WAF policy covers (Envoy Gateway applies a
# Gateway-level EnvoyExtensionPolicy to HTTP listeners only: internal/gatewayapi/envoyextensionpolicy.go).
ROUTE_KINDS = ("HTTPRoute", "GRPCRoute")
# What an image built from waf/ carries (waf/go.mod's Coraza, waf/Dockerfile's CRS_VERSION; a unit test keeps
# them equal), checked against the known-vulnerable releases when the WAF is on.
SHIPPED = ((advisories.CORAZA, "v3.8.1"), (advisories.CRS, "v4.28.0"))
SECURITY_DOC = "docs/security.md#known-vulnerable-releases"
EEP_RESOURCE = admission.Resource("gateway.envoyproxy.io", "v1alpha1", "envoyextensionpolicies")


def name(config: Config) -> str:
    return f"{config.block_name}-waf"


# The WAF's pods name no service account: they run as the namespace's `default` one (with no API token).
SERVICE_ACCOUNT = "default"


def reserved_names(config: Config) -> tuple[str, ...]:
    """The WAF's names in the block's namespace that no EnvoyProxy may reuse (tenant_guards.envoy_proxy): its
    Deployment, Service, ConfigMap and disruption budget (one name) and the service account its pods run as.
    Reserved whether or not waf.enabled, so enabling it later never meets a proxy fleet under its name."""
    return (name(config), SERVICE_ACCOUNT)


def selector(config: Config) -> dict[str, str]:
    return {"app.kubernetes.io/instance": config.block_name, labels.PROXY_ROLE_LABEL: ROLE}


def settings(config: Config) -> dict[str, Any]:
    """The service's settings file (waf/internal/settings, strict: unknown keys fail), mounted from the ConfigMap."""
    waf = config.get("waf")
    out: dict[str, Any] = {
        "crs_dir": "/opt/crs",
        "mode": waf["mode"],
        "paranoia_level": waf["paranoia_level"],
        "inbound_anomaly_threshold": waf["anomaly_threshold"],
        "allowed_methods": list(waf["allowed_methods"]),
        "validate_utf8": waf["validate_utf8"],
        "exclude_rule_ids": list(waf["exclude_rule_ids"]),
        "exclude_rule_tags": list(waf["exclude_rule_tags"]),
        # The curated exclusions, then the user's: the user's last, so that they can undo a curated one.
        "extra_directives": curated(waf)[1] + str(waf["extra_directives"]),
        "body_limit": waf["body"]["limit"],
        "body_limit_action": waf["body"]["limit_action"],
        "inspect_response": waf["response_inspection"]["enabled"],
        "response_body_limit": waf["response_inspection"]["body_limit"],
        "block_status": waf["block_status"],
        "listen": f"0.0.0.0:{GRPC_PORT}",
        "metrics_port": METRICS_PORT,
    }
    if curated(waf)[0]:
        out["setup_directives"] = curated(waf)[0]
    # Unset, each key is left out and the service's own default applies (workers: the CPU limit rounded up;
    # the others: waf/internal/settings.Defaults), so a config that sets none renders the settings file (and
    # the pods' checksum) unchanged.
    for key in OPTIONAL_SETTINGS:
        if waf.get(key) is not None:
            out[key] = list(waf[key]) if isinstance(waf[key], list | tuple) else waf[key]
    return out


def curated(waf: Mapping[str, Any]) -> tuple[str, str]:
    """The block's curated exclusions for the paranoia level (waf.curated_exclusions; none at level 1): the
    runtime ones before the CRS (the settings' setup_directives), the others after it."""
    return waf_exclusions.directives(waf["paranoia_level"]) if waf["curated_exclusions"] else ("", "")


def config_map(config: Config) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": labels.metadata(config, name(config), ROLE, config.get("namespace")),
        "data": {CONFIG_FILE: yaml.safe_dump(settings(config), sort_keys=True)},
    }


def deployment(config: Config) -> dict[str, Any]:
    waf = config.get("waf")
    pod_labels = {**labels.pod_template(config, ROLE), **selector(config), labels.LOG_SOURCE_LABEL: labels.LOG_SOURCE}
    # The settings' hash in the pod template: changed rules roll the pods, unchanged ones never do.
    checksum = hashlib.sha256(config_map(config)["data"][CONFIG_FILE].encode()).hexdigest()[:16]
    probe = {"grpc": {"port": GRPC_PORT}, "periodSeconds": 10, "failureThreshold": 3}
    resources = placement.resources(waf["resources"])
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
                    **({"imagePullSecrets": secrets} if (secrets := images.pull_secrets(config)) else {}),
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
                            "volumeMounts": [
                                {"name": "settings", "mountPath": "/etc/envoy-waf", "readOnly": True},
                                {"name": "tmp", "mountPath": TMP},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "settings", "configMap": {"name": name(config)}},
                        {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
                    ],
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
    request: dict[str, Any] = {"attributes": list(REQUEST_ATTRIBUTES)}
    if waf["body"]["enabled"]:
        request["body"] = "Buffered"
    mode: dict[str, Any] = {"request": request}
    if waf["response_inspection"]["enabled"]:
        # Presence of `response` sends the response headers. BufferedPartial, not Buffered: Buffered turns
        # every response larger than the Gateway's buffer into Envoy's 500 (downloads included); partial
        # hands the WAF the first buffer-full and streams the rest (waf/tests/test_response_inspection.py).
        mode["response"] = {"body": "BufferedPartial"}
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
                    # Presence of `request` sends the headers (and the attributes); the body only when buffered.
                    "processingMode": mode,
                    "messageTimeout": waf["message_timeout"],
                    "failOpen": waf["fail_open"],
                    # No backendSettings: Envoy multiplexes the WAF's streams over HTTP/2 (one connection per
                    # Envoy thread and WAF pod) and balances each stream over the pods itself (Envoy Gateway
                    # hands it the Service's endpoints). One stream per connection measured slower since
                    # 0.14.0's engine (issue 26, make bench-waf: 0.83-0.89x the GET req/s, level on bodies).
                }
            ],
        },
    }


def enforcement_name(config: Config) -> str:
    return f"{config.block_name}-waf-enforce"


def enforcement(config: Config) -> tuple[dict[str, Any], dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding: deny EnvoyExtensionPolicies that would take the WAF off a route.

    Envoy Gateway v1.9.0 lets a route-level policy without spec.mergeType replace the Gateway-level one
    on its routes (internal/gatewayapi/envoyextensionpolicy.go: a route that already has extensions is
    skipped by the Gateway policy), and merging replaces lists, so a merged route policy that brings its
    own extProc replaces the WAF's entry too (internal/utils/merge.go: strategic merge on a CRD type and
    JSON merge patch both replace lists). So a policy targeting HTTPRoutes/GRPCRoutes must merge and must
    not carry extProc; policies on Gateways, ListenerSets and TCP/TLS/UDP routes are not affected.
    """
    kinds = ", ".join(admission.cel_string(k) for k in ROUTE_KINDS)
    targets_routes = " || ".join(
        (
            "(has(object.spec.targetRef) && object.spec.targetRef.kind in variables.routeKinds)",
            "(has(object.spec.targetRefs) && object.spec.targetRefs.exists(ref, ref.kind in variables.routeKinds))",
            "(has(object.spec.targetSelectors) && "
            "object.spec.targetSelectors.exists(sel, sel.kind in variables.routeKinds))",
        )
    )
    waf_service = f"{name(config)} in namespace {config.get('namespace')}"
    rules = (
        admission.Rule(
            "!variables.targetsRoutes || has(object.spec.mergeType)",
            "this EnvoyExtensionPolicy targets HTTPRoutes/GRPCRoutes without spec.mergeType, so it would replace "
            f"the Gateway's policy on those routes and switch the WAF ({waf_service}) off there. Set "
            "spec.mergeType: StrategicMerge to merge into the Gateway's policy; where the Gateway has no "
            "policy, yours applies alone.",
        ),
        admission.Rule(
            "!variables.targetsRoutes || !has(object.spec.extProc) || size(object.spec.extProc) == 0",
            "spec.extProc in an EnvoyExtensionPolicy on HTTPRoutes/GRPCRoutes replaces the Gateway policy's "
            f"extProc list, the WAF ({waf_service}) included, even when merged (Envoy Gateway merges lists by "
            "replacing them). Remove extProc (wasm, lua and dynamicModule merge), or ask the platform team to "
            "add your processor to the Gateway's policy.",
        ),
    )
    return admission.objects(
        config,
        enforcement_name(config),
        EEP_RESOURCE,
        rules,
        variables=(("routeKinds", f"[{kinds}]"), ("targetsRoutes", targets_routes)),
    )


def build(config: Config) -> list[Step]:
    if not config.get("waf.enabled"):
        return []
    # With the WAF's policy in the plan, install lets the Deployment roll out with the new settings before the
    # EnvoyExtensionPolicy (Phase.POLICY, later) is applied: a WAF that cannot start is never put in the request
    # path (fail-closed, every request would fail).
    policy = bool(config.get("waf.default_policy.enabled"))
    steps = [
        Step(Phase.WAF, config_map(config)),
        Step(Phase.WAF, deployment(config), rollout=policy),
        Step(Phase.WAF, service(config)),
        Step(Phase.WAF, disruption_budget(config)),
    ]
    if policy:
        steps.append(Step(Phase.POLICY, extension_policy(config), wait_condition="Accepted"))
    if config.get("waf.enforce"):
        steps += admission.steps(enforcement(config))
    return steps


# The WAF pod's size follows its worker count (waf.workers: the Go process's GOMAXPROCS, each keeping one CPU
# busy under load). Sized as for the Python workers it replaced (75 MiB each): one Go process with the CRS
# holds about 80 MiB idle and 250 MiB under 16 KiB JSON load (make bench-waf), within the derived limits. Under
# the limit the service runs Go's collector at GOGC 400 (waf/BUILD.md): a busy pod's heap may reach five times
# its live data, capped by the soft limit (80% of the memory limit), by design.
DEFAULT_WORKERS = 2
_WORKER_RSS_MIB = 96  # per worker, with some room; below this per worker a memory limit gets the pod OOM-killed


def workers(waf: Mapping[str, Any]) -> int:
    """The workers a WAF pod runs: waf.workers, else what the service derives from its CPU limit (the quota,
    rounded up), else DEFAULT_WORKERS (the default CPU limit is that many CPUs)."""
    if waf.get("workers") is not None:
        return int(waf["workers"])
    cpu = waf["resources"].get("limits", {}).get("cpu")
    if cpu:
        return max(1, math.ceil(formats.quantity_bytes(cpu)))
    return DEFAULT_WORKERS


def resources(waf: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """waf.resources with every key the user did not set derived from the worker count (a derived request
    at most the limit). The CPU limit is always set: without one the service would start a worker per CPU
    of the node."""
    n = workers(waf)
    derived = {
        "requests": {"cpu": f"{250 * n}m", "memory": f"{64 + 128 * n}Mi"},
        "limits": {"cpu": str(n), "memory": f"{128 + 256 * n}Mi"},
    }
    user = waf["resources"]
    limits = {**derived["limits"], **user.get("limits", {})}
    requests = dict(derived["requests"])
    for key, limit in limits.items():  # a derived request never exceeds the limit the user set
        if formats.quantity_bytes(requests[key]) > formats.quantity_bytes(limit):
            requests[key] = limit
    return {"requests": {**requests, **user.get("requests", {})}, "limits": limits}


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """The WAF's switches need the service, its body and response limits fit what Envoy buffers, and its pod's
    resources carry its workers. `values["waf"]["resources"]` is already sized (resources())."""
    problems: list[Problem] = []
    warnings: list[str] = []
    waf = values["waf"]
    if waf["enabled"] and waf["fail_open"]:
        warnings.append(
            "config.waf.fail_open: while the WAF is unreachable traffic passes UNFILTERED, attacks "
            "included; fail closed (the default) answers 500 instead"
        )
    if waf["default_policy"]["enabled"] and not waf["enabled"]:
        problems.append(Problem("config.waf.default_policy.enabled", "needs waf.enabled: true"))
    problems += credentials.pair_problems("config.waf.image_build.auth", waf["image_build"]["auth"])
    if waf["enforce"] and not waf["enabled"]:
        problems.append(
            Problem(
                "config.waf.enforce",
                "guards the WAF's policies; set waf.enabled: true (and attach the WAF), or remove waf.enforce",
            )
        )
    if waf["extra_directives"]:
        found = seclang.problems(waf["extra_directives"])
        problems += [
            Problem(
                "config.waf.extra_directives", f"{message}; the WAF would not start (fail-closed: every request fails)"
            )
            for message in found[:10]
        ]
    if waf["enabled"]:
        warnings += [
            f"config.waf.image: an image built from waf/ carries {product} {shipped}. {issues}; rebuild the image "
            f"with such a release (waf/BUILD.md) and set waf.image.tag ({SECURITY_DOC})"
            for product, shipped in SHIPPED
            if (issues := advisories.findings(product, shipped))
        ]
    problems += _body_problems(values, raw)
    problems += _response_problems(values)
    problems_workers, warnings_workers = _worker_problems(values, raw)
    problems += problems_workers
    warnings += warnings_workers
    return problems, warnings


def _worker_problems(values: Mapping[str, Any], raw: Mapping[str, Any]) -> tuple[list[Problem], list[str]]:
    """Effective WAF resources Kubernetes accepts, and a worker count they can carry."""
    waf = values["waf"]
    user = raw.get("waf", {}).get("resources", {})
    resources = waf["resources"]
    n = workers(waf)
    problems: list[Problem] = []
    warnings: list[str] = []
    for key in ("cpu", "memory"):
        request, limit = resources["requests"][key], resources["limits"][key]
        if formats.quantity_bytes(request) > formats.quantity_bytes(limit):
            origin = "" if key in user.get("limits", {}) else f", derived from {n} worker(s)"
            problems.append(
                Problem(
                    f"config.waf.resources.requests.{key}",
                    f"{request} is above the limit {limit} (waf.resources.limits.{key}{origin}): Kubernetes "
                    f"rejects such a pod; lower the request, or raise waf.resources.limits.{key}",
                )
            )
    if not waf["enabled"]:
        return problems, warnings
    cpu_limit = user.get("limits", {}).get("cpu")
    if waf.get("workers") is not None and cpu_limit and math.ceil(formats.quantity_bytes(cpu_limit)) < n:
        warnings.append(
            f"config.waf.workers: {n} workers share a CPU limit of {cpu_limit} "
            "(waf.resources.limits.cpu): each worker is CPU-bound, so the extra ones only add memory and "
            "latency; raise the limit to the worker count, or remove it (it then follows the workers)"
        )
    inspections = waf.get("body_inspections")
    if inspections is not None and inspections > n:
        warnings.append(
            f"config.waf.body_inspections: {inspections} bodies inspected at once on {n} worker(s): each "
            "inspection keeps a CPU busy, so the extra ones only slow every request down (headers-only ones "
            f"included) and add memory; set it to {n} or fewer, or remove it (it then follows the workers)"
        )
    memory_limit = user.get("limits", {}).get("memory")
    if memory_limit and formats.quantity_bytes(memory_limit) < (32 + _WORKER_RSS_MIB * n) * 2**20:
        warnings.append(
            f"config.waf.resources.limits.memory: {memory_limit} is tight for {n} worker(s) (each holds its own "
            f"rules, about 75 MiB): the pod may be OOM-killed; allow {32 + _WORKER_RSS_MIB * n}Mi or more, or "
            "remove it (it then follows the workers)"
        )
    return problems, warnings


def _body_problems(values: Mapping[str, Any], raw: Mapping[str, Any]) -> list[Problem]:
    """The body the WAF's Gateway buffers (body_buffer.needed) must fit what limit_action promises, and the
    proxies' memory."""
    body = values["waf"]["body"]
    at = "config.waf.body.max_size"
    problems: list[Problem] = []
    if body["limit_action"] != "partial" and "max_size" in raw.get("waf", {}).get("body", {}):
        problems.append(
            Problem(
                at,
                "only used with limit_action partial (with reject the proxies accept bodies up to waf.body.limit "
                "and no more); remove it, or set waf.body.limit_action: partial",
            )
        )
    if body["limit_action"] == "partial" and body["max_size"] <= body["limit"]:
        problems.append(
            Problem(
                at,
                f"{body['max_size']} is not above waf.body.limit ({body['limit']}), so partial never applies: "
                "Envoy buffers the whole body before the WAF sees it and answers 413 itself past max_size; raise "
                "max_size above limit, or use limit_action: reject",
            )
        )
    size = body_buffer.needed(values)
    memory = values["data_plane"]["resources"].get("limits", {}).get("memory")
    if size is not None and memory and size >= formats.quantity_bytes(memory):
        key = "max_size" if body["limit_action"] == "partial" else "limit"
        problems.append(
            Problem(
                f"config.waf.body.{key}",
                f"the WAF's Gateway would buffer request bodies of up to {size} bytes in a proxy, not less than "
                f"its memory limit data_plane.resources.limits.memory ({memory}): one such request gets the proxy "
                f"OOM-killed; lower waf.body.{key}, or raise the memory limit",
            )
        )
    return problems


def _response_problems(values: Mapping[str, Any]) -> list[Problem]:
    """Response inspection needs the service, and Envoy hands the WAF at most the Gateway's buffer of a
    response (processing mode BufferedPartial): a larger body_limit would promise bytes never inspected."""
    waf = values["waf"]
    inspection = waf["response_inspection"]
    if not inspection["enabled"]:
        return []
    if not waf["enabled"]:
        return [Problem("config.waf.response_inspection.enabled", "needs waf.enabled: true")]
    if not waf["default_policy"]["enabled"]:
        return []  # the user's own EnvoyExtensionPolicy and ClientTrafficPolicy decide what reaches the WAF
    buffer = max(body_buffer.needed(values) or 0, body_buffer.ENVOY_GATEWAY_CONNECTION_BUFFER)
    if inspection["body_limit"] > buffer:
        return [
            Problem(
                "config.waf.response_inspection.body_limit",
                f"{inspection['body_limit']} is above the WAF Gateway's buffer ({buffer} bytes: waf.body.limit, or "
                "max_size with limit_action partial, and never below 32768), and Envoy hands the WAF at most that "
                "much of a response; lower body_limit, or raise waf.body.limit",
            )
        ]
    return []


# The default waf.image names a repository that has never been published: a WAF on it never starts
# (ImagePullBackOff, found only by status). install and plan refuse it before anything is applied.
UNPUBLISHED_IMAGE = ("docker.io", "polycrate/envoy-waf")


def unpublished_image(values: Mapping[str, Any]) -> Problem | None:
    """The problem with an enabled WAF on the unpublished default image (any tag), else None."""
    waf = values["waf"]
    if not waf["enabled"] or (waf["image"]["registry"], waf["image"]["repository"]) != UNPUBLISHED_IMAGE:
        return None
    return Problem(
        "config.waf.image",
        f"{'/'.join(UNPUBLISHED_IMAGE)} is a placeholder that was never published (pods would not start); "
        "set waf.image.registry, waf.image.repository and waf.image.tag to a registry your nodes pull from and "
        "run the waf-image action (polycrate run envoy waf-image, or make waf-image), which builds waf/ and "
        "pushes it there (by hand: waf/BUILD.md)",
    )
