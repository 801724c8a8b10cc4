"""Where each LoadBalancer provider reads a fixed address, shared by validation and the EnvoyProxy builder.

- Cilium LB-IPAM requests the union of spec.loadBalancerIP and `lbipam.cilium.io/ips` (alias
  `io.cilium/lb-ipam-ips`); the block writes the annotation only (spec.loadBalancerIP is deprecated).
- MetalLB reads `metallb.io/loadBalancerIPs` (0.14.9 and later), else `metallb.universe.tf/loadBalancerIPs`,
  else spec.loadBalancerIP, and refuses a Service carrying an annotation and spec.loadBalancerIP together
  ("service can not have both"). The block writes both annotation keys (same value, read by every MetalLB
  release) and never spec.loadBalancerIP.
- Cloud controllers read spec.loadBalancerIP, which Envoy Gateway copies from the EnvoyProxy.
"""

from __future__ import annotations

PROVIDERS = ("cilium", "metallb", "cloud")
# Annotation keys the block renders per provider; "all" also holds the aliases a user might write by hand.
VIP_ANNOTATIONS: dict[str, frozenset[str]] = {
    "cilium": frozenset({"lbipam.cilium.io/ips"}),
    "metallb": frozenset({"metallb.io/loadBalancerIPs", "metallb.universe.tf/loadBalancerIPs"}),
    "cloud": frozenset(),
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


def vip_fields(provider: str, ip: str) -> tuple[dict[str, str], dict[str, str]]:
    """(envoyService fields, Service annotations) that ask `provider` for `ip`, and nothing else."""
    spec = {"loadBalancerIP": ip} if provider in READS_SPEC else {}
    return spec, dict.fromkeys(sorted(VIP_ANNOTATIONS[provider]), ip)


def is_proxy_protocol_annotation(key: str) -> bool:
    """An annotation that makes a cloud load balancer send the PROXY protocol header (Hetzner
    `load-balancer.hetzner.cloud/uses-proxyprotocol`, AWS `service.beta.kubernetes.io/aws-load-balancer-proxy-protocol`,
    DigitalOcean, OpenStack, Scaleway, Linode, OVH, Civo ...): every known key names it in the key itself."""
    return "proxyprotocol" in key.lower().replace("-", "").replace("_", "")
