"""Read rendered network policies of every provider back into one neutral form, independently of the
builder, so invariants are stated once and checked for Kubernetes, Cilium and Calico alike.

Peer forms: ("cidr", cidr) | ("pods", namespace or "*", frozenset(labels)) | ("apiserver",) |
("entity", name) | ("anyone",) (a NetworkPolicy rule without a peer list: every source or destination).
Ports: (protocol, port) with port None meaning every port.

Each policy also says which directions it enforces (makes the selected pods default-deny in), in the
provider's own terms: a NetworkPolicy's `policyTypes` (absent: Ingress, plus Egress when it has egress
rules), Calico's `types` (absent: Egress when it has egress rules only, both with both, else Ingress), and
Cilium's rule sections (a non-empty ingress/ingressDeny or egress/egressDeny section, unless
`enableDefaultDeny` switches that direction off). Rules in a direction the policy does not enforce are
ignored by the CNI (Kubernetes, Calico) or allow without denying anything else (Cilium): `read` refuses
such a policy, and `direction_errors` names it for the gate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tests.support.helpers import objects

PROVIDERS: dict[str, dict[str, Any]] = {
    "kubernetes": {"provider": "kubernetes", "api_server_cidrs": ["10.96.0.1/32"]},
    "cilium": {"provider": "cilium"},
    "calico": {"provider": "calico"},
}
DEPLOY_TYPES: dict[str, dict[str, Any]] = {
    "ControllerNamespace": {},
    "GatewayNamespace": {"deploy_type": "GatewayNamespace", "gatewayclass": {"shared": {"merge_gateways": False}}},
}
NETPOL_KINDS = {"NetworkPolicy", "CiliumNetworkPolicy", "CiliumClusterwideNetworkPolicy", "GlobalNetworkPolicy"}
NS_KEY = "k8s:io.kubernetes.pod.namespace"


@dataclass(frozen=True)
class Rule:
    direction: str
    peers: tuple[tuple[Any, ...], ...]
    ports: frozenset[tuple[str, int | None]]


@dataclass(frozen=True)
class ReadPolicy:
    name: str
    kind: str
    namespace: str | None
    selector: dict[str, str]
    rules: tuple[Rule, ...]
    enforces: frozenset[str]  # "ingress", "egress": the directions its selected pods are default-deny in

    def egress(self) -> list[Rule]:
        return [r for r in self.rules if r.direction == "egress"]

    def ingress(self) -> list[Rule]:
        return [r for r in self.rules if r.direction == "ingress"]


class PolicyError(AssertionError):
    """A rendered policy that does not do what its rules say (rules in a direction it does not enforce)."""


def enforced(obj: dict[str, Any]) -> frozenset[str]:
    """The directions `obj` makes its selected pods default-deny in, with its provider's semantics."""
    spec = obj["spec"]
    has = {d: bool(spec.get(d)) for d in ("ingress", "egress")}
    if obj["apiVersion"].startswith("cilium.io"):
        switch = spec.get("enableDefaultDeny") or {}
        return frozenset(
            d for d in ("ingress", "egress") if (has[d] or spec.get(f"{d}Deny")) and switch.get(d, True) is not False
        )
    key = "policyTypes" if obj["apiVersion"].startswith("networking.k8s.io") else "types"
    if key in spec:
        return frozenset(str(t).lower() for t in spec[key])
    if key == "types" and has["egress"] and not has["ingress"]:
        return frozenset({"egress"})  # Calico's default: Egress alone when only egress rules are present
    return frozenset({"ingress", *(["egress"] if has["egress"] else [])})


def direction_errors(obj: dict[str, Any]) -> list[str]:
    """One error per direction `obj` has rules in but does not enforce (the CNI would ignore them)."""
    enforces = enforced(obj)
    return [
        f"{obj['kind']} {obj['metadata']['name']}: {direction} rules present but {direction} is not enforced "
        f"(policyTypes/types/enableDefaultDeny): the pods it selects are not default-deny on {direction}"
        for direction in ("ingress", "egress")
        if obj["spec"].get(direction) and direction not in enforces
    ]


def config_for(provider: str, deploy_type: str, **network: Any) -> dict[str, Any]:
    return {**DEPLOY_TYPES[deploy_type], "network_policy": {**PROVIDERS[provider], **network}}


def _k8s(obj: dict[str, Any], api_cidrs: set[str]) -> list[Rule]:
    rules = []
    for direction, key in (("ingress", "from"), ("egress", "to")):
        for rule in obj["spec"].get(direction, []):
            peers: list[tuple[Any, ...]] = [] if key in rule else [("anyone",)]
            for peer in rule.get(key, []):
                if "ipBlock" in peer:
                    cidr = peer["ipBlock"]["cidr"]
                    peers.append(("apiserver",) if cidr in api_cidrs else ("cidr", cidr))
                else:
                    ns = peer.get("namespaceSelector", {}).get("matchLabels", {}).get("kubernetes.io/metadata.name")
                    if "namespaceSelector" not in peer:
                        ns = obj["metadata"]["namespace"]
                    labels = frozenset(peer.get("podSelector", {}).get("matchLabels", {}).items())
                    peers.append(("pods", ns or "*", labels))
            ports = frozenset((p["protocol"], p.get("port")) for p in rule.get("ports", []))
            rules.append(Rule(direction, tuple(peers), ports))
    return rules


def _cilium(obj: dict[str, Any]) -> list[Rule]:
    rules = []
    for direction, prefix in (("ingress", "from"), ("egress", "to")):
        for rule in obj["spec"].get(direction, []):
            peers: list[tuple[Any, ...]] = [("cidr", c) for c in rule.get(f"{prefix}CIDR", [])]
            for entity in rule.get(f"{prefix}Entities", []):
                peers.append(("apiserver",) if entity == "kube-apiserver" else ("entity", entity))
            for sel in rule.get(f"{prefix}Endpoints", []):
                labels = dict(sel.get("matchLabels", {}))
                any_ns = any(e["key"] == NS_KEY and e["operator"] == "Exists" for e in sel.get("matchExpressions", []))
                ns = labels.pop(NS_KEY, None) or ("*" if any_ns else obj["metadata"].get("namespace", "*"))
                peers.append(("pods", ns, frozenset(labels.items())))
            ports = set()
            for block in rule.get("toPorts", []):
                for p in block["ports"]:
                    whole = p["port"] == "1" and p.get("endPort") == 65535
                    ports.add((p["protocol"], None if whole else int(p["port"])))
            rules.append(Rule(direction, tuple(peers), frozenset(ports)))
    return rules


def _calico_labels(expr: str) -> dict[str, str]:
    if expr == "all()":
        return {}
    out = {}
    for term in expr.split(" && "):
        key, _, value = term.partition(" == ")
        out[key] = value.strip("'")
    return out


def _calico(obj: dict[str, Any]) -> list[Rule]:
    rules = []
    for direction, side in (("ingress", "source"), ("egress", "destination")):
        for rule in obj["spec"].get(direction, []):
            entity = rule.get(side, {})
            peers: list[tuple[Any, ...]] = [("cidr", c) for c in entity.get("nets", [])]
            if entity.get("services") == {"name": "kubernetes", "namespace": "default"}:
                peers.append(("apiserver",))
            if "selector" in entity:
                ns_expr = entity.get("namespaceSelector")
                ns = (
                    "*"
                    if ns_expr == "all()"
                    else (
                        _calico_labels(ns_expr).get("kubernetes.io/metadata.name")
                        if ns_expr
                        else obj["metadata"].get("namespace", "*")
                    )
                )
                peers.append(("pods", ns, frozenset(_calico_labels(entity["selector"]).items())))
            port_list = rule.get("destination", {}).get("ports") or [None]
            rules.append(Rule(direction, tuple(peers), frozenset((rule["protocol"], p) for p in port_list)))
    return rules


def read(cfg: dict[str, Any]) -> dict[str, ReadPolicy]:
    """Every rendered network policy of `cfg`, by name suffix (proxies, controller, certgen)."""
    api = set(cfg.get("network_policy", {}).get("api_server_cidrs", []))
    out = {}
    for obj in objects(cfg):
        if obj["kind"] not in NETPOL_KINDS:
            continue
        errors = direction_errors(obj)
        if errors:
            raise PolicyError("; ".join(errors))
        spec = obj["spec"]
        if obj["apiVersion"].startswith("networking.k8s.io"):
            selector, rules = spec["podSelector"]["matchLabels"], _k8s(obj, api)
        elif obj["apiVersion"].startswith("cilium.io"):
            selector, rules = spec["endpointSelector"]["matchLabels"], _cilium(obj)
        else:
            selector, rules = _calico_labels(spec["selector"]), _calico(obj)
        role = obj["metadata"]["name"].rsplit("-", 1)[-1]
        out[role] = ReadPolicy(
            obj["metadata"]["name"],
            obj["kind"],
            obj["metadata"].get("namespace"),
            selector,
            tuple(rules),
            enforced(obj),
        )
    return out
