"""Allow-list policies so the block works on default-deny clusters (Kubernetes, Cilium, Calico).

The flows are described once, provider-neutral (`Policy`/`Flow`/`Peer`), then rendered per provider.
Proxies are selected by the block-owned label stamped through the EnvoyProxy pod spec, never by Envoy
Gateway's own owning-gateway labels. Proxy egress opens DNS and xDS only: backends are user workloads.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import labels
from ..model import Checked, Config, Problem
from ..plan import Phase, Step
from ..proxy_ports import METRICS_PORT, READINESS_PORT, container_port
from . import waf
from .controller import RELEASE_NAME

XDS_PORT = 18000  # proxies -> controller; 18001 (rate limit) and 18002 (Wasm) are not proxy paths here
WEBHOOK_PORT = 9443  # apiserver -> controller topology-injector webhook
CONTROLLER_METRICS_PORT = 19001  # the controller's /metrics (the proxies' stats port has the same number)
CONTROLLER_LABELS = {"control-plane": "envoy-gateway", "app.kubernetes.io/instance": RELEASE_NAME}
# The chart stamps nothing but `app: certgen` on its certgen Job pods.
CERTGEN_LABELS = {"app": "certgen"}
DNS_LABELS = {"k8s-app": "kube-dns"}
DNS_NAMESPACE = "kube-system"
# Calico matches `nets` by address, so these two cover pods, nodes and the outside world alike.
ANYWHERE = ("0.0.0.0/0", "::/0")
# Cilium's "everyone": `world` is everything outside the cluster; `cluster` is this cluster's pods, the
# host, remote nodes, health, init, ingress, unmanaged endpoints and the kube-apiserver. A CIDR (and a
# NetworkPolicy ipBlock, which Cilium parses into the same CIDR selector) matches only `world`.
# `all` is never rendered: it would also match other clusters of a ClusterMesh.
CILIUM_EVERYONE = ("world", "cluster")


@dataclass(frozen=True)
class Peer:
    """Who is on the other end. kind: pods | apiserver | cidrs | anyone. namespace None = every namespace.

    `anyone` is every source, inside the cluster and out (the proxies' ingress: a gateway's point); each
    provider renders it in its own terms, because "0.0.0.0/0" does not mean everyone under Cilium."""

    kind: str
    labels: tuple[tuple[str, str], ...] = ()
    namespace: str | None = None
    cidrs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Flow:
    direction: str  # ingress | egress
    peer: Peer
    ports: tuple[tuple[str, int | None], ...]  # (protocol, port); None = every port of that protocol


@dataclass(frozen=True)
class Policy:
    name: str
    namespace: str | None  # None: cluster-wide (proxies in GatewayNamespace mode)
    selector: tuple[tuple[str, str], ...]
    flows: tuple[Flow, ...] = field(default=())


def _pairs(mapping: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(mapping.items()))


def proxy_selector(config: Config) -> dict[str, str]:
    return {labels.PROXY_ROLE_LABEL: labels.PROXY_ROLE, "app.kubernetes.io/instance": config.block_name}


def container_ports(listener_ports: list[int]) -> list[int]:
    """The ports the proxy container really listens on for the given listener ports."""
    return sorted({container_port(p) for p in listener_ports})


def _dns() -> Flow:
    peer = Peer("pods", _pairs(DNS_LABELS), DNS_NAMESPACE)
    return Flow("egress", peer, (("UDP", 53), ("TCP", 53)))


def _extra(config: Config, key: str, direction: str) -> list[Flow]:
    return [
        Flow(
            direction,
            Peer("cidrs", cidrs=(item["cidr"],)),
            tuple(("TCP", p) for p in item.get("ports", [])) or (("TCP", None),),
        )
        for item in config.get(f"network_policy.{key}")
    ]


def policies(config: Config) -> list[Policy]:
    ns = config.get("namespace")
    gateway_namespace = config.get("deploy_type") == "GatewayNamespace"
    proxies = _pairs(proxy_selector(config))
    controller = Peer("pods", _pairs(CONTROLLER_LABELS), ns)
    proxy_ports = config.get("network_policy.proxy_ingress_ports")
    ingress_ports: tuple[tuple[str, int | None], ...] = (
        tuple(("TCP", p) for p in [*container_ports(proxy_ports), METRICS_PORT, READINESS_PORT])
        if proxy_ports
        else (("TCP", None),)
    )
    monitoring = Peer("pods", (), config.get("network_policy.monitoring_namespace"))
    proxy_policy = Policy(
        name=f"{config.block_name}-proxies",
        namespace=None if gateway_namespace else ns,
        selector=proxies,
        flows=(
            Flow("ingress", Peer("anyone"), ingress_ports),
            *_extra(config, "extra_ingress_from", "ingress"),
            _dns(),
            Flow("egress", controller, (("TCP", XDS_PORT),)),
            *_waf_egress(config),
            *_extra(config, "extra_egress_to", "egress"),
        ),
    )
    controller_policy = Policy(
        name=f"{config.block_name}-controller",
        namespace=ns,
        selector=_pairs(CONTROLLER_LABELS),
        flows=(
            Flow("ingress", Peer("pods", proxies, None if gateway_namespace else ns), (("TCP", XDS_PORT),)),
            Flow("ingress", Peer("apiserver"), (("TCP", WEBHOOK_PORT),)),
            Flow("ingress", monitoring, (("TCP", CONTROLLER_METRICS_PORT),)),
            _dns(),
            Flow("egress", Peer("apiserver"), (("TCP", 443), ("TCP", 6443))),
        ),
    )
    certgen_policy = Policy(
        name=f"{config.block_name}-certgen",
        namespace=ns,
        selector=_pairs(CERTGEN_LABELS),
        flows=(_dns(), Flow("egress", Peer("apiserver"), (("TCP", 443), ("TCP", 6443)))),
    )
    result = [proxy_policy, controller_policy, certgen_policy]
    if config.get("waf.enabled"):
        result.append(
            Policy(
                name=f"{config.block_name}-waf",
                namespace=ns,
                selector=_pairs(waf.selector(config)),
                flows=(
                    # Only proxies may call the WAF; it needs nothing but DNS itself.
                    Flow(
                        "ingress", Peer("pods", proxies, None if gateway_namespace else ns), (("TCP", waf.GRPC_PORT),)
                    ),
                    Flow("ingress", monitoring, (("TCP", waf.METRICS_PORT),)),
                    _dns(),
                ),
            )
        )
    return result


def _waf_egress(config: Config) -> list[Flow]:
    if not config.get("waf.enabled"):
        return []
    peer = Peer("pods", _pairs(waf.selector(config)), config.get("namespace"))
    return [Flow("egress", peer, (("TCP", waf.GRPC_PORT),))]


# --- Kubernetes NetworkPolicy -------------------------------------------------------------------


def _k8s_peers(config: Config, peer: Peer) -> list[dict[str, Any]]:
    if peer.kind == "cidrs":
        return [{"ipBlock": {"cidr": c}} for c in peer.cidrs]
    if peer.kind == "apiserver":
        return [{"ipBlock": {"cidr": c}} for c in config.get("network_policy.api_server_cidrs")]
    entry: dict[str, Any] = {
        "namespaceSelector": (
            {"matchLabels": {"kubernetes.io/metadata.name": peer.namespace}} if peer.namespace else {}
        )
    }
    if peer.labels:
        entry["podSelector"] = {"matchLabels": dict(peer.labels)}
    return [entry]


def _k8s_ports(ports: tuple[tuple[str, int | None], ...]) -> list[dict[str, Any]]:
    return [{"protocol": proto, **({"port": port} if port is not None else {})} for proto, port in ports]


def kubernetes(config: Config, policy: Policy) -> dict[str, Any]:
    spec: dict[str, Any] = {"podSelector": {"matchLabels": dict(policy.selector)}, "policyTypes": []}
    for direction, peer_key in (("ingress", "from"), ("egress", "to")):
        rules = [
            # No peer list at all is the API's "all sources": an ipBlock of 0.0.0.0/0 would miss pods and
            # nodes under Cilium, which implements ipBlock as a CIDR selector (outside the cluster only).
            {"ports": _k8s_ports(f.ports)}
            if f.peer.kind == "anyone"
            else {peer_key: _k8s_peers(config, f.peer), "ports": _k8s_ports(f.ports)}
            for f in policy.flows
            if f.direction == direction
        ]
        if rules:
            spec["policyTypes"].append(direction.capitalize())
            spec[direction] = rules
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": labels.metadata(config, policy.name, "network-policy", policy.namespace or config.get("namespace")),
        "spec": spec,
    }


def _policy_object(
    config: Config, policy: Policy, api_version: str, kinds: tuple[str, str], spec: dict[str, Any]
) -> dict[str, Any]:
    """Namespaced kind, or the cluster-wide one when the policy has no namespace (GatewayNamespace proxies)."""
    return {
        "apiVersion": api_version,
        "kind": kinds[1] if policy.namespace is None else kinds[0],
        "metadata": labels.metadata(config, policy.name, "network-policy", policy.namespace),
        "spec": spec,
    }


# --- Cilium -------------------------------------------------------------------------------------


def _cilium_peer(peer: Peer, direction: str) -> dict[str, Any]:
    prefix = "from" if direction == "ingress" else "to"
    if peer.kind == "anyone":
        return {f"{prefix}Entities": list(CILIUM_EVERYONE)}
    if peer.kind == "cidrs":
        return {f"{prefix}CIDR": list(peer.cidrs)}
    if peer.kind == "apiserver":
        return {f"{prefix}Entities": ["kube-apiserver"]}
    match = dict(peer.labels)
    selector: dict[str, Any] = {"matchLabels": match}
    if peer.namespace:
        match["k8s:io.kubernetes.pod.namespace"] = peer.namespace
    else:
        # Without a namespace term a namespaced Cilium policy means "same namespace": say "any" explicitly.
        selector["matchExpressions"] = [{"key": "k8s:io.kubernetes.pod.namespace", "operator": "Exists"}]
    return {f"{prefix}Endpoints": [selector]}


def _cilium_ports(ports: tuple[tuple[str, int | None], ...]) -> list[dict[str, Any]]:
    return [
        {
            "ports": [
                {"port": str(port), "protocol": proto}
                if port is not None
                else {"port": "1", "endPort": 65535, "protocol": proto}
                for proto, port in ports
            ]
        }
    ]


def cilium(config: Config, policy: Policy) -> dict[str, Any]:
    spec: dict[str, Any] = {"endpointSelector": {"matchLabels": dict(policy.selector)}}
    for direction in ("ingress", "egress"):
        rules = [
            {**_cilium_peer(f.peer, direction), "toPorts": _cilium_ports(f.ports)}
            for f in policy.flows
            if f.direction == direction
        ]
        if rules:
            spec[direction] = rules
    return _policy_object(
        config, policy, "cilium.io/v2", ("CiliumNetworkPolicy", "CiliumClusterwideNetworkPolicy"), spec
    )


# --- Calico (projectcalico.org/v3) ---------------------------------------------------------------


def _calico_selector(pairs: tuple[tuple[str, str], ...]) -> str:
    return " && ".join(f"{k} == '{v}'" for k, v in pairs) or "all()"


def _calico_entity(peer: Peer, ports: list[int]) -> dict[str, Any]:
    if peer.kind in ("cidrs", "anyone"):
        entity: dict[str, Any] = {"nets": list(peer.cidrs or ANYWHERE)}
    elif peer.kind == "apiserver":
        # The `kubernetes` Service names the apiserver wherever it runs; Calico takes ports from it.
        return {"services": {"name": "kubernetes", "namespace": "default"}}
    else:
        entity = {"selector": _calico_selector(peer.labels)}
        entity["namespaceSelector"] = (
            f"kubernetes.io/metadata.name == '{peer.namespace}'" if peer.namespace else "all()"
        )
    if ports:
        entity["ports"] = ports
    return entity


def calico(config: Config, policy: Policy) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": _calico_selector(policy.selector), "types": []}
    for direction in ("ingress", "egress"):
        rules = []
        for flow in (f for f in policy.flows if f.direction == direction):
            for proto in sorted({p for p, _ in flow.ports}):
                ports = [port for p, port in flow.ports if p == proto and port is not None]
                rule: dict[str, Any] = {"action": "Allow", "protocol": proto}
                if direction == "ingress":
                    rule["source"] = _calico_entity(flow.peer, [])
                    if ports:
                        rule["destination"] = {"ports": ports}
                else:
                    rule["destination"] = _calico_entity(flow.peer, ports)
                rules.append(rule)
        if rules:
            spec["types"].append(direction.capitalize())
            spec[direction] = rules
    return _policy_object(config, policy, "projectcalico.org/v3", ("NetworkPolicy", "GlobalNetworkPolicy"), spec)


RENDERERS = {"kubernetes": kubernetes, "cilium": cilium, "calico": calico}


def build(config: Config) -> list[Step]:
    provider = config.get("network_policy.provider")
    if provider == "none":
        return []
    render = RENDERERS[provider]
    return [Step(Phase.NETWORK, render(config, policy)) for policy in policies(config)]


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """What each provider needs to select the API server, and what namespaced policies cannot cover."""
    policy = values["network_policy"]
    problems: list[Problem] = []
    warnings: list[str] = []
    if policy["provider"] == "kubernetes" and not policy["api_server_cidrs"]:
        problems.append(
            Problem(
                "config.network_policy.api_server_cidrs",
                "provider kubernetes selects the API "
                "server by address; list its CIDRs (kubectl get endpoints kubernetes -n default)",
            )
        )
    if policy["provider"] == "kubernetes" and values["deploy_type"] == "GatewayNamespace":
        warnings.append(
            "config.network_policy.provider: with GatewayNamespace the proxies run in every Gateway's "
            "namespace; namespaced NetworkPolicies cannot cover namespaces created later, so only the "
            "block namespace is covered. Use provider cilium or calico for cluster-wide policies"
        )
    return problems, warnings
