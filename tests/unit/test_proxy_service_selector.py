"""Invariant: the proxy Service's selector does not change between releases, so an upgrade never
leaves the LoadBalancer without endpoints.

Envoy Gateway v1.9.0 builds the proxy Service's labels and selector from the same labels map that
`getPodLabels` (internal/infrastructure/kubernetes/proxy/resource_provider.go ~687-691) has already
extended in place with the EnvoyProxy's `pod.labels`; the Deployment (or DaemonSet) is rendered before
the Service on the same renderer (internal/infrastructure/kubernetes/infra.go ~96-104). So every label
the block stamps on the proxy pods becomes part of the Service selector (resource_provider.go ~226,
257). A label whose value follows the release (app.kubernetes.io/version) would switch the selector to
the new pods before any of them is ready: a LoadBalancer outage on every upgrade.

`eg_service_selector` mirrors that upstream behaviour from the rendered EnvoyProxy, so the test states
what the cluster will do, not what the block intends.

Mutation check (done once): putting `app.kubernetes.io/version` back into labels.proxy_pod turned
test_selector_is_stable_across_a_release and test_no_pod_label_follows_the_release red for every case.
"""

from __future__ import annotations

from typing import Any

import pytest

from envoy_block import builder, labels

# Envoy Gateway's own proxy labels (internal/infrastructure/kubernetes/proxy/resource.go EnvoyAppLabel).
EG_APP_LABELS = {
    "app.kubernetes.io/name": "envoy",
    "app.kubernetes.io/component": "proxy",
    "app.kubernetes.io/managed-by": "envoy-gateway",
}
# Owner labels of a merged class (gatewayapi/helpers.go GatewayClassOwnerLabel) and of one Gateway.
OWNERS = {
    "eg-shared": {"gateway.envoyproxy.io/owning-gatewayclass": "eg-shared"},
    "eg-dedicated": {
        "gateway.envoyproxy.io/owning-gateway-name": "tenant-gw",
        "gateway.envoyproxy.io/owning-gateway-namespace": "tenant",
    },
}
CASES = [(name, kind) for name in OWNERS for kind in ("Deployment", "DaemonSet")]


def _envoy_proxy(cfg: dict[str, Any], name: str, block_version: str) -> dict[str, Any]:
    plan = builder.plan_from_block({"name": "envoy", "version": block_version, "config": cfg})
    return next(s.obj for s in plan.steps if s.kind == "EnvoyProxy" and s.name == name)


def eg_service_selector(envoy_proxy: dict[str, Any], owners: dict[str, str]) -> dict[str, str]:
    """The selector Envoy Gateway v1.9.0 writes on the proxy Service for this EnvoyProxy: its app labels,
    the owner labels, and (leaked through getPodLabels) every pod label of the EnvoyProxy."""
    kube = envoy_proxy["spec"]["provider"]["kubernetes"]
    workload = kube.get("envoyDeployment") or kube["envoyDaemonSet"]
    return {**EG_APP_LABELS, **owners, **workload["pod"]["labels"]}


def _release(version: str, block_version: str, kind: str) -> dict[str, Any]:
    """A config as a release of the block would render it: chart, images and the data plane kind."""
    return {
        "chart": {"version": version},
        "image": {"controller": {"tag": version}, "proxy": {"tag": f"distroless-{version}"}},
        "data_plane": {"kind": kind},
    }


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_selector_is_stable_across_a_release(name: str, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    before = eg_service_selector(_envoy_proxy(_release("v1.9.0", "0.6.0", kind), name, "0.6.0"), OWNERS[name])
    # The next release: another Envoy Gateway version everywhere the block writes one.
    monkeypatch.setattr(labels, "ENVOY_GATEWAY_VERSION", "v1.10.0")
    after = eg_service_selector(_envoy_proxy(_release("v1.10.0", "0.7.0", kind), name, "0.7.0"), OWNERS[name])
    assert after == before


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_no_pod_label_follows_the_release(name: str, kind: str) -> None:
    """Stated directly too: no pod label value is a version the block or Envoy Gateway carries."""
    proxy = _envoy_proxy(_release("v1.9.0", "0.6.0", kind), name, "0.6.0")
    kube = proxy["spec"]["provider"]["kubernetes"]
    pod_labels = (kube.get("envoyDeployment") or kube["envoyDaemonSet"])["pod"]["labels"]
    assert "app.kubernetes.io/version" not in pod_labels
    assert not {"v1.9.0", "0.6.0", "distroless-v1.9.0"} & set(pod_labels.values()), pod_labels


@pytest.mark.parametrize(("name", "kind"), CASES)
def test_block_owned_role_label_stays(name: str, kind: str) -> None:
    """What the network policies and the VMPodScrape select on is still stamped on the proxies."""
    proxy = _envoy_proxy(_release("v1.9.0", "0.6.0", kind), name, "0.6.0")
    selector = eg_service_selector(proxy, OWNERS[name])
    assert selector[labels.PROXY_ROLE_LABEL] == labels.PROXY_ROLE
    assert selector["app.kubernetes.io/instance"] == "envoy"
