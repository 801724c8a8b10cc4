"""Config -> Plan. The only place that knows which components exist."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import crds, labels, limits
from .components import (
    controller,
    gateway,
    gatewayclasses,
    monitoring,
    namespace,
    network_policies,
    proxies,
    traffic_policies,
    waf,
)
from .config import Config, ConfigError, load
from .plan import Plan, Step, Waits

COMPONENTS = (namespace, network_policies, proxies, gatewayclasses, waf, gateway, traffic_policies, monitoring)
# The config section each component builds from, for a message when building fails unexpectedly.
SECTIONS = {
    "namespace": "namespace",
    "network_policies": "network_policy",
    "proxies": "data_plane",
    "gatewayclasses": "gatewayclass",
    "waf": "waf",
    "gateway": "default_gateway",
    "traffic_policies": "client_traffic",
    "monitoring": "metrics",
    "controller": "chart",
}


class BuildError(RuntimeError):
    """A component failed on a config validation accepted (a bug): carries the section it was building."""

    def __init__(self, section: str, error: BaseException) -> None:
        self.section = section
        super().__init__(f"{type(error).__name__}: {' '.join(str(error).split())[:200]}")


def _section(component: object) -> str:
    return SECTIONS.get(getattr(component, "__name__", "").rsplit(".", 1)[-1], "config")


def build_plan(config: Config) -> Plan:
    """The plan; raises ConfigError when an object it derives passes Kubernetes' or the filesystem's limits."""
    steps: list[Step] = []
    for component in COMPONENTS:
        try:
            steps.extend(component.build(config))
        except Exception as exc:  # a last resort: the user still learns which section it was
            raise BuildError(_section(component), exc) from exc
    try:
        plan = _plan(config, steps)
    except Exception as exc:
        raise BuildError(_section(controller), exc) from exc
    objects = [(plan.file_name(step), step.obj) for step in plan.ordered()]
    if problems := limits.plan_problems(objects, config.values, config.block_name):
        raise ConfigError(problems)
    return plan


def _plan(config: Config, steps: list[Step]) -> Plan:
    return Plan(
        steps=tuple(steps),
        helm=controller.release(config),
        crds=crds.settings(config),
        namespace=namespace.settings(config),
        controller=controller.settings(config),
        wait=Waits(enabled=bool(config.get("wait.enabled")), timeout=int(config.get("wait.timeout"))),
        ownership_labels=labels.ownership_selector(config),
        warnings=config.warnings,
    )


def plan_from_block(block: Mapping[str, Any]) -> Plan:
    """Validate Polycrate's `block` variable and build its plan (raises ConfigError on bad input)."""
    return build_plan(load(block))
