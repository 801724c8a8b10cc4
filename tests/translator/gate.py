"""The translator gate: the block's rendered objects plus a tenant's, through Envoy Gateway's translator, and
every status condition the translator computes read back object by object.

egctl translates for one GatewayClass and one EnvoyProxy per run (the loader keeps the last of each), so
the gate runs it once per GatewayClass of Envoy Gateway's controller, with the EnvoyProxy that class's
parametersRef names, and everything else (all Gateways, routes, policies, backends, Secrets). Gateways of
the other class are skipped by the translator in that run, exactly as the controller does per class.

Checked, by name, for every object of the input (never only for what the output happens to contain):
- GatewayClass: Accepted (the gate resolves parametersRef itself: egctl does not, the controller does);
- EnvoyProxy: Accepted (ancestor: its GatewayClass);
- Gateway: no Gateway-level condition False; every listener Accepted, ResolvedRefs, Programmed and at
  least one attached route; the Gateway's own Accepted is derived from its listeners exactly as the
  controller derives it (status.UpdateGatewayStatusAccepted), since egctl leaves it to the provider;
- route: per parentRef Accepted and ResolvedRefs;
- policy: per targetRef Accepted. A policy whose target does not exist gets no status at all from the
  translator (Envoy Gateway ignores it silently), which the gate reports as such.
Any other condition the translator sets fails with the translator's own message.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envoy_block.components.gatewayclasses import CONTROLLER_NAME

from . import egctl

ROUTE_KINDS = ("HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute", "UDPRoute")
POLICY_KINDS = ("ClientTrafficPolicy", "BackendTrafficPolicy", "SecurityPolicy", "EnvoyExtensionPolicy")
# egctl's output key for each kind (the JSON field names of resource.Resources).
OUTPUT_KEY = {
    "Gateway": "gateways",
    "HTTPRoute": "httpRoutes",
    "GRPCRoute": "grpcRoutes",
    "TLSRoute": "tlsRoutes",
    "TCPRoute": "tcpRoutes",
    "UDPRoute": "udpRoutes",
    "ClientTrafficPolicy": "clientTrafficPolicies",
    "BackendTrafficPolicy": "backendTrafficPolicies",
    "SecurityPolicy": "securityPolicies",
    "EnvoyExtensionPolicy": "envoyExtensionPolicies",
}
LISTENER_CONDITIONS = ("Accepted", "ResolvedRefs", "Programmed")
ROUTE_CONDITIONS = ("Accepted", "ResolvedRefs")
# Cluster IPs the gate hands out to Services that have none, as the API server would on create.
SERVICE_CIDR = ipaddress.ip_network("10.96.128.0/20")


@dataclass(frozen=True)
class Check:
    """One named condition of one named object; `message` is the translator's (or says why it has none)."""

    subject: str
    condition: str
    ok: bool
    message: str

    def __str__(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.subject}: {self.condition} - {self.message}"


@dataclass
class Verdict:
    """Every status check, the xDS per IR key, and what each GatewayClass's run was fed."""

    checks: list[Check] = field(default_factory=list)
    # xDS IR key ("<namespace>/<gateway>", or the class name when egctl merges) -> Envoy config dump.
    xds: dict[str, dict[str, Any]] = field(default_factory=dict)
    inputs: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]

    def report(self) -> str:
        return "\n".join(str(c) for c in self.failures) or "all checks passed"


def _ns(obj: Mapping[str, Any]) -> str:
    return str(obj["metadata"].get("namespace", ""))


def identity(obj: Mapping[str, Any]) -> str:
    """How checks name an object: "<Kind> <namespace>/<name>" (cluster-scoped: "<Kind> <name>")."""
    namespace = _ns(obj)
    return f"{obj['kind']} {namespace + '/' if namespace else ''}{obj['metadata']['name']}"


def with_cluster_ips(objects: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Copies of `objects` in which every Service has a cluster IP (egctl routes to it: no endpoints)."""
    hosts = SERVICE_CIDR.hosts()
    result = []
    for obj in objects:
        copied = dict(obj)
        if obj["kind"] == "Service" and not obj.get("spec", {}).get("clusterIP"):
            copied["spec"] = {**obj["spec"], "clusterIP": str(next(hosts))}
        result.append(copied)
    return result


def _conditions(status: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return list((status or {}).get("conditions") or [])


def _judge(subject: str, conditions: Sequence[Mapping[str, Any]], expected: Sequence[str]) -> list[Check]:
    """Each expected condition True; any other condition the translator set fails with its message. When
    two runs report on the same object, a condition is True only if every report of it is."""
    checks = []
    by_type: dict[str, list[Mapping[str, Any]]] = {}
    for condition in conditions:
        by_type.setdefault(str(condition["type"]), []).append(condition)
    for kind in expected:
        reports = by_type.get(kind)
        if not reports:
            checks.append(Check(subject, kind, False, "the translator set no such condition"))
            continue
        worst = next((r for r in reports if r["status"] != "True"), reports[0])
        checks.append(Check(subject, kind, worst["status"] == "True", f"{worst.get('reason')}: {worst.get('message')}"))
    for kind, reports in sorted(by_type.items()):
        if kind not in expected:
            found = reports[0]
            message = f"unexpected {found['status']} {found.get('reason')}: {found.get('message')}"
            checks.append(Check(subject, kind, False, message))
    return checks


def _envoy_proxy_for(
    gateway_class: Mapping[str, Any], objects: Sequence[dict[str, Any]]
) -> dict[str, Any] | str | None:
    """The EnvoyProxy the class's parametersRef names, None without one, or why it cannot be found."""
    ref = gateway_class["spec"].get("parametersRef")
    if ref is None:
        return None
    # The controller reads the EnvoyProxy from parametersRef.namespace, falling back to `default`.
    namespace = ref.get("namespace", "default")
    for obj in objects:
        if (
            obj["kind"] == ref.get("kind")
            and str(obj["apiVersion"]).split("/")[0] == ref.get("group")
            and obj["metadata"]["name"] == ref.get("name")
            and _ns(obj) == namespace
        ):
            return obj
    return f"parametersRef names {ref.get('kind')} {namespace}/{ref.get('name')}, which does not exist"


def _parent_key(ref: Mapping[str, Any], default_namespace: str) -> tuple[str, str, str, str]:
    return (
        str(ref.get("kind", "Gateway")),
        str(ref.get("namespace") or default_namespace),
        str(ref["name"]),
        str(ref.get("sectionName") or ""),
    )


def run(objects: Sequence[Mapping[str, Any]]) -> Verdict:
    """Translate `objects` (rendered + tenant) once per Envoy Gateway GatewayClass and judge every status."""
    fed = with_cluster_ips(o for o in objects if o["kind"] in egctl.TRANSLATOR_KINDS)
    verdict = Verdict()
    classes = [o for o in fed if o["kind"] == "GatewayClass" and o["spec"].get("controllerName") == CONTROLLER_NAME]
    others = [o for o in fed if o["kind"] not in ("GatewayClass", "EnvoyProxy")]
    runs: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for gateway_class in classes:
        proxy = _envoy_proxy_for(gateway_class, fed)
        if isinstance(proxy, str):
            verdict.checks.append(
                Check(
                    identity(gateway_class),
                    "Accepted",
                    False,
                    f"{proxy}: the controller sets Accepted=False/InvalidParameters (the gate's own check: "
                    "egctl does not resolve parametersRef)",
                )
            )
            continue
        run_input = [gateway_class, *([proxy] if proxy else []), *others]
        verdict.inputs[gateway_class["metadata"]["name"]] = run_input
        runs.append((gateway_class, run_input))
    outputs = egctl.translate_all([run_input for _, run_input in runs])

    gateway_classes = {}
    for (gateway_class, run_input), output in zip(runs, outputs, strict=True):
        name = gateway_class["metadata"]["name"]
        gateway_classes[name] = output
        verdict.checks += _judge(
            identity(gateway_class), _conditions(output.get("gatewayClass", {}).get("status")), ["Accepted"]
        )
        fed_proxy = next((o for o in run_input if o["kind"] == "EnvoyProxy"), None)
        if fed_proxy is not None:
            ancestors = (output.get("envoyProxyForGatewayClass") or {}).get("status", {}).get("ancestors") or []
            mine = [a for a in ancestors if a.get("ancestorRef", {}).get("name") == name]
            subject = f"{identity(fed_proxy)} (for {identity(gateway_class)})"
            verdict.checks += _judge(subject, _conditions(mine[0]) if mine else [], ["Accepted"])
        for key, dump in (output.get("xds") or {}).items():
            verdict.xds[key] = dump

    not_translated = {c["metadata"]["name"] for c in classes} - set(gateway_classes)
    verdict.checks += _gateways(fed, gateway_classes, not_translated)
    verdict.checks += _routes(fed, outputs)
    verdict.checks += _policies(fed, outputs)
    return verdict


def _gateways(
    fed: Sequence[Mapping[str, Any]], outputs: Mapping[str, Mapping[str, Any]], not_translated: set[str]
) -> list[Check]:
    checks = []
    for gateway in (o for o in fed if o["kind"] == "Gateway"):
        subject = identity(gateway)
        output = outputs.get(gateway["spec"]["gatewayClassName"])
        translated = [
            g
            for g in (output or {}).get("gateways") or []
            if g["metadata"]["name"] == gateway["metadata"]["name"] and _ns(g) == _ns(gateway)
        ]
        if not translated:
            why = (
                "was not translated (see its Accepted check)"
                if gateway["spec"]["gatewayClassName"] in not_translated
                else "is no Envoy Gateway class among the objects: no controller picks it up"
            )
            checks.append(
                Check(subject, "Accepted", False, f"gatewayClassName {gateway['spec']['gatewayClassName']!r} {why}")
            )
            continue
        status = translated[0].get("status") or {}
        for condition in _conditions(status):
            # egctl sets Gateway-level conditions only when something is wrong, or ResolvedRefs for TLS refs.
            ok = condition["status"] == "True" and condition["type"] in ("ResolvedRefs", "Accepted")
            checks.append(
                Check(subject, str(condition["type"]), ok, f"{condition.get('reason')}: {condition.get('message')}")
            )
        listeners = {str(s["name"]): s for s in status.get("listeners") or []}
        accepted = []
        for spec in gateway["spec"]["listeners"]:
            listener_subject = f"{subject} listener {spec['name']}"
            listener = listeners.get(str(spec["name"]))
            judged = _judge(listener_subject, _conditions(listener), LISTENER_CONDITIONS)
            checks += judged
            attached = int((listener or {}).get("attachedRoutes", 0))
            checks.append(Check(listener_subject, "attachedRoutes", attached > 0, f"{attached} route(s) attached"))
            accepted.append(next(c.ok for c in judged if c.condition == "Accepted"))
        checks.append(
            Check(
                subject,
                "Accepted (derived from its listeners, as the controller does)",
                all(accepted),
                f"{sum(accepted)} of {len(accepted)} listeners Accepted",
            )
        )
    return checks


def _routes(fed: Sequence[Mapping[str, Any]], outputs: Sequence[Mapping[str, Any]]) -> list[Check]:
    checks = []
    for route in (o for o in fed if o["kind"] in ROUTE_KINDS):
        parents: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
        for output in outputs:
            for translated in output.get(OUTPUT_KEY[route["kind"]]) or []:
                if translated["metadata"]["name"] != route["metadata"]["name"] or _ns(translated) != _ns(route):
                    continue
                for parent in (translated.get("status") or {}).get("parents") or []:
                    key = _parent_key(parent["parentRef"], _ns(route))
                    parents.setdefault(key, []).extend(_conditions(parent))
        for ref in route["spec"]["parentRefs"]:
            key = _parent_key(ref, _ns(route))
            subject = f"{identity(route)} parent {key[0]} {key[1]}/{key[2]}{'/' + key[3] if key[3] else ''}"
            if key not in parents:
                checks.append(
                    Check(
                        subject,
                        "Accepted",
                        False,
                        "the translator gave no status for this parentRef: "
                        "the parent is no Gateway of an Envoy Gateway class among the objects",
                    )
                )
                continue
            checks += _judge(subject, parents[key], ROUTE_CONDITIONS)
    return checks


def _policies(fed: Sequence[Mapping[str, Any]], outputs: Sequence[Mapping[str, Any]]) -> list[Check]:
    checks = []
    for policy in (o for o in fed if o["kind"] in POLICY_KINDS):
        ancestors: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
        for output in outputs:
            for translated in output.get(OUTPUT_KEY[policy["kind"]]) or []:
                if translated["metadata"]["name"] != policy["metadata"]["name"] or _ns(translated) != _ns(policy):
                    continue
                for ancestor in (translated.get("status") or {}).get("ancestors") or []:
                    key = _parent_key(ancestor["ancestorRef"], _ns(policy))
                    ancestors.setdefault(key, []).extend(_conditions(ancestor))
        refs = policy["spec"].get("targetRefs") or (
            [policy["spec"]["targetRef"]] if "targetRef" in policy["spec"] else []
        )
        for ref in refs:
            key = _parent_key({**ref, "namespace": _ns(policy)}, _ns(policy))
            subject = f"{identity(policy)} target {key[0]} {key[1]}/{key[2]}{'/' + key[3] if key[3] else ''}"
            if key not in ancestors:
                checks.append(
                    Check(
                        subject,
                        "Accepted",
                        False,
                        "the translator gave this policy no status for this "
                        "target: Envoy Gateway ignores a policy whose target it cannot find, silently",
                    )
                )
                continue
            checks += _judge(subject, ancestors.pop(key), ["Accepted"])
        for key, conditions in sorted(ancestors.items()):
            checks += _judge(f"{identity(policy)} ancestor {key[0]} {key[1]}/{key[2]}", conditions, ["Accepted"])
    return checks
