"""Where each LoadBalancer provider reads a fixed address, shared by validation and the EnvoyProxy builder.

- Cilium LB-IPAM requests the union of spec.loadBalancerIP and `lbipam.cilium.io/ips` (alias
  `io.cilium/lb-ipam-ips`); the block writes the annotation only (spec.loadBalancerIP is deprecated).
- MetalLB reads `metallb.io/loadBalancerIPs` (0.14.9 and later), else `metallb.universe.tf/loadBalancerIPs`,
  else spec.loadBalancerIP, and refuses a Service carrying an annotation and spec.loadBalancerIP together
  ("service can not have both"). The block writes both annotation keys (same value, read by every MetalLB
  release) and never spec.loadBalancerIP.
- Cloud controllers read spec.loadBalancerIP, which Envoy Gateway copies from the EnvoyProxy.

With no provider named, the block writes the Cilium and both MetalLB annotations and no spec.loadBalancerIP:
each provider reads its own key and ignores the others', so the same Service gets the address from either
(a cloud controller, which reads only spec.loadBalancerIP, needs `cloud` named).
"""

from __future__ import annotations

PROVIDERS = ("cilium", "metallb", "cloud")
# Annotation keys the block renders per provider; "all" also holds the aliases a user might write by hand.
# None (no provider named) is what both Cilium LB-IPAM and MetalLB accept.
VIP_ANNOTATIONS: dict[str | None, frozenset[str]] = {
    "cilium": frozenset({"lbipam.cilium.io/ips"}),
    "metallb": frozenset({"metallb.io/loadBalancerIPs", "metallb.universe.tf/loadBalancerIPs"}),
    "cloud": frozenset(),
    None: frozenset({"lbipam.cilium.io/ips", "metallb.io/loadBalancerIPs", "metallb.universe.tf/loadBalancerIPs"}),
    "all": frozenset(
        {
            "lbipam.cilium.io/ips",
            "io.cilium/lb-ipam-ips",
            "metallb.io/loadBalancerIPs",
            "metallb.universe.tf/loadBalancerIPs",
        }
    ),
}
# Providers that read the address from spec.loadBalancerIP (the others must never see it set).
READS_SPEC = frozenset({"cloud"})


def vip_fields(provider: str | None, ip: str) -> tuple[dict[str, str], dict[str, str]]:
    """(envoyService fields, Service annotations) that ask `provider` (None: Cilium or MetalLB) for `ip`."""
    spec = {"loadBalancerIP": ip} if provider in READS_SPEC else {}
    return spec, dict.fromkeys(sorted(VIP_ANNOTATIONS[provider]), ip)


def is_proxy_protocol_annotation(key: str) -> bool:
    """An annotation that makes a cloud load balancer send the PROXY protocol header (Hetzner
    `load-balancer.hetzner.cloud/uses-proxyprotocol`, AWS `service.beta.kubernetes.io/aws-load-balancer-proxy-protocol`,
    DigitalOcean, OpenStack, Scaleway, Linode, OVH, Civo ...): every known key names it in the key itself."""
    return "proxyprotocol" in key.lower().replace("-", "").replace("_", "")
