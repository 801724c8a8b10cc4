"""Invariant: every provider's proxy policy selects exactly the block-owned label that the EnvoyProxy
pod spec stamps on the proxies (both classes, Deployment and DaemonSet) - never Envoy Gateway's own
owning-gateway labels, which upstream may change (the Calico operator's lesson).

Mutation check (tools/mutate.py `proxy-selection-label`): removing PROXY_ROLE_LABEL from labels.proxy_pod
turns every case red.
"""

from __future__ import annotations

import pytest

from tests.support.helpers import find
from tests.support.netpol import DEPLOY_TYPES, PROVIDERS, config_for, read

MATRIX = [(p, d, k) for p in PROVIDERS for d in DEPLOY_TYPES for k in ("Deployment", "DaemonSet")]


@pytest.mark.parametrize(("provider", "deploy_type", "kind"), MATRIX)
def test_policy_selects_what_envoyproxy_stamps(provider: str, deploy_type: str, kind: str) -> None:
    cfg = {**config_for(provider, deploy_type), "data_plane": {"kind": kind}}
    selector = read(cfg)["proxies"].selector
    assert selector, "an empty selector would select every pod"
    assert not any(key.startswith("gateway.envoyproxy.io/") for key in selector)
    workload = "envoyDeployment" if kind == "Deployment" else "envoyDaemonSet"
    for name in ("eg-shared", "eg-dedicated"):
        stamped = find(cfg, "EnvoyProxy", name)["spec"]["provider"]["kubernetes"][workload]["pod"]["labels"]
        assert selector.items() <= stamped.items(), (name, selector, stamped)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_certgen_selected_by_the_label_the_chart_really_sets(provider: str) -> None:
    """gateway-helm v1.9.0 labels certgen Job pods only `app: certgen`; anything else selects nothing."""
    assert read(config_for(provider, "ControllerNamespace"))["certgen"].selector == {"app": "certgen"}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_controller_selected_by_chart_labels(provider: str) -> None:
    selector = read(config_for(provider, "ControllerNamespace"))["controller"].selector
    assert selector == {"control-plane": "envoy-gateway", "app.kubernetes.io/instance": "envoy-gateway"}
