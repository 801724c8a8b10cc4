"""Invariant: a fixed VIP (`service.loadbalancer_ip`) reaches the shared proxy Service in the one form the
configured LoadBalancer provider reads, so the provider assigns it instead of leaving it Pending, and only
one Service of the class ever asks for it.

What each provider reads (models below, from their sources):
- MetalLB (controller/service.go getDesiredLbIPs): `metallb.io/loadBalancerIPs` (>= 0.14.9), else the
  deprecated `metallb.universe.tf/loadBalancerIPs`, else spec.loadBalancerIP - and it refuses a Service
  with an annotation AND spec.loadBalancerIP ("service can not have both"): Pending forever.
- Cilium LB-IPAM (operator/pkg/lbipam getSVCRequestedIPs): the union of spec.loadBalancerIP and
  `lbipam.cilium.io/ips` (alias `io.cilium/lb-ipam-ips`).
- Cloud controllers: spec.loadBalancerIP (Envoy Gateway passes it through,
  internal/infrastructure/kubernetes/resource/resource.go ~42-45).
The old comment "Cilium LB-IPAM and MetalLB ignore spec.loadBalancerIP" was wrong for both.

With `merge_gateways: false` every Gateway of the shared class gets its own Service from the same
EnvoyProxy, and each would ask for the same address: rejected.

With no provider named, the Cilium and both MetalLB annotations are rendered (never spec.loadBalancerIP),
which each of the two accepts.

Mutation checks (done once): rendering spec.loadBalancerIP for every provider (as before) turned
test_the_provider_assigns_the_vip[metallb] red; rendering spec.loadBalancerIP beside the annotations when no
provider is named turned test_a_vip_without_a_provider_is_assigned_by_cilium_and_by_metallb red; dropping
the merge_gateways rule in config.py turned
test_vip_needs_a_merged_shared_class red; dropping the service.annotations rule turned
test_vip_annotations_only_through_loadbalancer_ip red.
"""

from __future__ import annotations

from typing import Any

import pytest

from envoy_block.loadbalancer import VIP_ANNOTATIONS
from tests.support.helpers import MISSING, at, find, load, problems

K = "spec.provider.kubernetes.envoyService"
VIP = "192.0.2.10"


class Pending(Exception):
    """The provider refuses the Service: it stays <pending>."""


def metallb_assigns(service: dict[str, Any]) -> list[str]:
    annotations = service.get("annotations", {})
    wanted = annotations.get("metallb.io/loadBalancerIPs") or annotations.get("metallb.universe.tf/loadBalancerIPs")
    if wanted and service.get("loadBalancerIP"):
        raise Pending("service can not have both metallb.io/loadBalancerIPs and svc.Spec.LoadBalancerIP")
    if wanted:
        return [ip.strip() for ip in wanted.split(",")]
    return [service["loadBalancerIP"]] if service.get("loadBalancerIP") else []


def cilium_assigns(service: dict[str, Any]) -> list[str]:
    annotations = service.get("annotations", {})
    wanted = [service["loadBalancerIP"]] if service.get("loadBalancerIP") else []
    value = annotations.get("lbipam.cilium.io/ips") or annotations.get("io.cilium/lb-ipam-ips") or ""
    wanted += [ip.strip() for ip in value.split(",") if ip.strip()]
    return list(dict.fromkeys(wanted))


def cloud_assigns(service: dict[str, Any]) -> list[str]:
    return [service["loadBalancerIP"]] if service.get("loadBalancerIP") else []


PROVIDERS = {"metallb": metallb_assigns, "cilium": cilium_assigns, "cloud": cloud_assigns}


def _cfg(provider: str | None, **service: Any) -> dict[str, Any]:
    chosen = {"loadbalancer_provider": provider} if provider else {}
    return {"service": {"loadbalancer_ip": VIP, **chosen, **service}}


def _service(cfg: dict[str, Any], name: str = "eg-shared") -> dict[str, Any]:
    value = at(find(cfg, "EnvoyProxy", name), K)
    assert value is not MISSING
    return dict(value)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_the_provider_assigns_the_vip(provider: str) -> None:
    assert PROVIDERS[provider](_service(_cfg(provider))) == [VIP]


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_only_what_the_provider_reads_is_rendered(provider: str) -> None:
    service = _service(_cfg(provider))
    rendered = {k for k in service.get("annotations", {}) if k in VIP_ANNOTATIONS["all"]}
    assert rendered == set(VIP_ANNOTATIONS[provider])
    assert ("loadBalancerIP" in service) is (provider == "cloud")


@pytest.mark.parametrize("provider", [*sorted(PROVIDERS), None])
def test_the_dedicated_class_never_asks_for_the_vip(provider: str | None) -> None:
    service = _service(_cfg(provider), "eg-dedicated")
    assert "loadBalancerIP" not in service
    assert not set(service.get("annotations", {})) & VIP_ANNOTATIONS["all"]


def test_metallb_never_sees_both_forms() -> None:
    """The failure the issue reports, stated against the model: no provider setting gives MetalLB both."""
    for provider in [*PROVIDERS, None]:
        metallb_assigns(_service(_cfg(provider)))  # raises Pending if both forms are rendered


def test_a_vip_without_a_provider_is_assigned_by_cilium_and_by_metallb() -> None:
    """The seed's own configuration (`loadbalancer_ip` alone): both providers it names as prerequisites assign
    the address to the same rendered Service, and MetalLB is never shown both forms."""
    service = _service({"service": {"loadbalancer_ip": VIP}})
    assert cilium_assigns(service) == [VIP]
    assert metallb_assigns(service) == [VIP]
    assert "loadBalancerIP" not in service  # deprecated upstream, and what MetalLB refuses beside its annotation


def test_vip_needs_a_merged_shared_class() -> None:
    found = problems({**_cfg("metallb"), "gatewayclass": {"shared": {"merge_gateways": False}}})
    assert any(p.startswith("config.service.loadbalancer_ip: ") and "merge_gateways" in p for p in found), found


@pytest.mark.parametrize("key", sorted(VIP_ANNOTATIONS["all"]))
def test_vip_annotations_only_through_loadbalancer_ip(key: str) -> None:
    """service.annotations land on every proxy Service of both classes: an address asked for there would be
    asked for by every one of them."""
    found = problems({"service": {"annotations": {key: VIP}}})
    assert any(p.startswith(f"config.service.annotations.{key}: ") and "loadbalancer_ip" in p for p in found), found


def test_no_vip_no_provider_needed() -> None:
    service = _service({})
    assert "loadBalancerIP" not in service
    assert not set(service.get("annotations", {})) & VIP_ANNOTATIONS["all"]
    load({"service": {"loadbalancer_provider": "metallb"}})  # a provider alone is harmless
