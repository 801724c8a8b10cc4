"""Config -> Plan: each component of registry.COMPONENTS builds its steps, in that order; the plan's typed parts
are filled here from their owners (the controller's release and settings, the namespace's, the CRDs')."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from . import crds, labels, limits, registry
from .components import controller, namespace
from .config import Config, ConfigError, load
from .plan import Phase, Plan, Step, Waits


class BuildError(RuntimeError):
    """A component failed on a config validation accepted (a bug): carries the section it was building."""

    def __init__(self, section: str, error: BaseException) -> None:
        self.section = section
        super().__init__(f"{type(error).__name__}: {' '.join(str(error).split())[:200]}")


def build_plan(config: Config) -> Plan:
    """The plan; raises ConfigError when an object it derives passes Kubernetes' or the filesystem's limits."""
    steps: list[Step] = []
    for component in registry.COMPONENTS:  # in build order
        if not component.builds:
            continue
        try:
            steps.extend(component.build(config))
        except Exception as exc:  # a last resort: the user still learns which section it was
            raise BuildError(component.section, exc) from exc
    try:
        plan = _plan(config, steps)
    except Exception as exc:
        raise BuildError(registry.SECTIONS["controller"], exc) from exc
    objects = [(plan.file_name(step), step.obj) for step in plan.ordered()]
    if problems := limits.plan_problems(objects, config.values, config.block_name):
        raise ConfigError(problems)
    return plan


def _plan(config: Config, steps: list[Step]) -> Plan:
    wait = Waits(enabled=bool(config.get("wait.enabled")), timeout=int(config.get("wait.timeout")))
    # The plan holds what its fact says (Plan.from_dict gives back the same plan): the steps in apply order (a
    # stable sort by phase, so neither order changes) and a rollout only where waits are on (without waits
    # install lets nothing roll out; to_dict never said otherwise).
    ordered = sorted(steps, key=lambda s: s.phase.apply_rank)
    return Plan(
        steps=tuple(s if wait.enabled or not s.rollout else replace(s, rollout=False) for s in ordered),
        helm=controller.release(config),
        crds=crds.settings(config),
        namespace=namespace.settings(config),
        controller=controller.settings(config),
        wait=wait,
        ownership_labels=labels.ownership_selector(config),
        warnings=config.warnings,
    )


# Configs that switch on every kind the components can render, for each network-policy provider and both
# places the proxies run (their namespace decides namespaced or cluster-wide policy kinds). What the block can
# own is read from the steps these build (renderable_kinds), so no list repeats the components' kinds and
# phases; tests/unit/test_lifecycle.py checks that each example's and test config's kinds are among them.
EVERY_KIND_CONFIGS = tuple(
    {
        "default_gateway": {"enabled": True},
        "client_traffic": {"enabled": True},
        "backend_traffic": {"enabled": True},
        "metrics": {"vmpodscrape": {"enabled": True}, "rules": {"enabled": True}},
        "waf": {"enabled": True, "default_policy": {"enabled": True}, "enforce": True},
        "network_policy": {"provider": provider, "api_server_cidrs": ["10.96.0.1/32"]},
        **deploy,
    }
    for provider in ("kubernetes", "cilium", "calico")
    for deploy in (
        {},
        {"deploy_type": "GatewayNamespace", "gatewayclass": {"shared": {"merge_gateways": False}}},
    )
)


def renderable_kinds() -> dict[tuple[str, str], Phase]:
    """(apiVersion, kind) -> phase of every object the components can render, from the steps they build for
    EVERY_KIND_CONFIGS. A kind built in more than one phase (ConfigMaps: the WAF's, the dashboards) takes the
    one deleted first, so uninstall removes it no later than any of its objects."""
    kinds: dict[tuple[str, str], Phase] = {}
    for cfg in EVERY_KIND_CONFIGS:
        for step in plan_from_block({"name": "envoy", "version": "0.0.0", "config": cfg}).steps:
            key = (str(step.obj["apiVersion"]), step.kind)
            if key not in kinds or step.phase.delete_rank < kinds[key].delete_rank:
                kinds[key] = step.phase
    return kinds


def plan_from_block(block: Mapping[str, Any]) -> Plan:
    """Validate Polycrate's `block` variable and build its plan (raises ConfigError on bad input)."""
    return build_plan(load(block))
