"""Labels and names, in one place: every object the block renders is found again by these."""

from __future__ import annotations

from . import ENVOY_GATEWAY_VERSION
from .model import Config

PART_OF = "envoy-gateway"
MANAGED_BY = "polycrate"
# Block-owned label stamped on proxy pods through the EnvoyProxy pod spec. Network policies and
# scrapes select on it, never on Envoy Gateway's own owning-gateway labels, which upstream may change.
PROXY_ROLE_LABEL = "envoy.polycrate.io/role"
PROXY_ROLE = "proxy"
# Log shippers pick up pods carrying this label (the platform's convention).
LOG_SOURCE_LABEL = "polycrate_log_source"
LOG_SOURCE = "app"


def standard(config: Config, component: str) -> dict[str, str]:
    """The app.kubernetes.io/* set every rendered object carries; the version is the Envoy Gateway release the
    config installs (chart.version)."""
    return {
        "app.kubernetes.io/name": PART_OF,
        "app.kubernetes.io/instance": config.block_name,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/managed-by": MANAGED_BY,
        "app.kubernetes.io/version": str(config.get("chart.version")),
    }


def pod_template(config: Config, component: str) -> dict[str, str]:
    """The set on a pod template the block renders (the WAF's): the version there is the release the block is
    built for, not chart.version, because a changed template label rolls every pod: following chart.version
    rolled the WAF at each controller upgrade, and the v1.8.3 -> v1.9.1 upgrade's WAF then did not finish its
    rollout within wait.timeout on the real node (2026-12-06). The WAF does not change with the controller."""
    return {**standard(config, component), "app.kubernetes.io/version": ENVOY_GATEWAY_VERSION}


def ownership_selector(config: Config) -> dict[str, str]:
    """What prune and uninstall select on: objects of this block instance, and only those."""
    return {
        "app.kubernetes.io/part-of": PART_OF,
        "app.kubernetes.io/managed-by": MANAGED_BY,
        "app.kubernetes.io/instance": config.block_name,
    }


def proxy_pod(config: Config, gatewayclass: str) -> dict[str, str]:
    """Labels added to proxy pods. Envoy Gateway owns name/component/managed-by on them (its Deployment
    selector uses them), so only labels it does not set are added here.

    Every label here also lands in the proxy Service's selector: Envoy Gateway v1.9.0 copies the
    EnvoyProxy pod labels into its shared labels map in place (getPodLabels) before it renders the
    Service. So nothing here may change between releases (no app.kubernetes.io/version): a changed
    value points the Service at the new pods only, before they are ready. Adding a label is such a
    change too; removing one only widens the selector.
    """
    return {
        "app.kubernetes.io/instance": config.block_name,
        "app.kubernetes.io/part-of": PART_OF,
        "envoy.polycrate.io/gatewayclass": gatewayclass,
        PROXY_ROLE_LABEL: PROXY_ROLE,
        LOG_SOURCE_LABEL: LOG_SOURCE,
    }


def metadata(
    config: Config, name: str, component: str, namespace: str | None = None, annotations: dict[str, str] | None = None
) -> dict[str, object]:
    meta: dict[str, object] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = standard(config, component)
    if annotations:
        meta["annotations"] = dict(sorted(annotations.items()))
    return meta
