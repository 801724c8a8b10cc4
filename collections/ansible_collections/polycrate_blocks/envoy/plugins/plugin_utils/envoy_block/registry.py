"""The one list of the block's components: which exist, in what order they build, the config section each
builds from, and where each one's `check` runs among all the checks. builder.py (the build order, the section a
failed build names) and config.py (`CHECKS`, the order the checks run in) read it; neither lists a component.

Two orders, on purpose. `COMPONENTS` is the build order: steps of one phase are applied in the order they
were built (the plan sorts by phase, stably), which the golden renders pin. The checks run in another order,
the one warnings have always been reported in (problems are sorted by path in the end, warnings are not), and
two checks among them are no component's: `crds` (the CRD keys) and `attachments` (the rules between the
default Gateway and what attaches to it). So each component carries its `check_rank`, its place among the
checks, and `RULES` the ranks of those two; `CHECKS` is every check sorted by rank. Ranks are 0..n-1, each
once, and a component has a rank exactly when its module has a `check`: anything else fails the import.

Why a module of its own and not components/__init__.py: it names crds and attachments, which sit beside the
components, not in them, and a package __init__ importing every component would load them all whenever one is
imported (plan.py names components.controller for the type checker). Its layer: above the components, crds
and attachments, which it imports; below config.py and builder.py, which import it; it imports neither of
them (tests/unit/test_layers.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from . import attachments, crds
from .components import (
    controller,
    gateway,
    gatewayclasses,
    monitoring,
    namespace,
    network_policies,
    proxies,
    tenant_guards,
    traffic_policies,
    waf,
)
from .model import Checked, Config
from .plan import Step

Check = Callable[[Mapping[str, Any], Mapping[str, Any]], Checked]


@dataclass(frozen=True)
class Component:
    """A module of components/: `build(config) -> [Step]` (unless the builder fills its part of the plan
    itself: the controller's helm release), `check(values, raw)` when its section has rules beyond the
    schema's. The functions are looked up on the module at each call, never copied."""

    module: ModuleType
    section: str  # the config section it builds from, named when its build fails (builder.BuildError)
    check_rank: int | None = None  # its check's place in CHECKS; None: its module has no check

    @property
    def name(self) -> str:
        return self.module.__name__.rsplit(".", 1)[-1]

    @property
    def builds(self) -> bool:
        return hasattr(self.module, "build")

    def build(self, config: Config) -> list[Step]:
        steps: list[Step] = self.module.build(config)
        return steps


@dataclass(frozen=True)
class Rule:
    """A check that is no component's own (crds: the CRD keys; attachments: rules across two sections)."""

    module: ModuleType
    check_rank: int


# In build order. The controller builds nothing here: builder._plan fills the plan's helm release and
# controller settings from it, after every component has built (a failure there names chart).
COMPONENTS: tuple[Component, ...] = (
    Component(namespace, "namespace"),
    Component(network_policies, "network_policy", check_rank=9),
    Component(tenant_guards, "tenant_guards", check_rank=6),
    Component(proxies, "data_plane", check_rank=5),
    Component(gatewayclasses, "gatewayclass", check_rank=2),
    Component(waf, "waf", check_rank=7),
    Component(gateway, "default_gateway", check_rank=10),
    Component(traffic_policies, "client_traffic", check_rank=3),
    Component(monitoring, "metrics", check_rank=8),
    Component(controller, "chart", check_rank=0),
)
RULES: tuple[Rule, ...] = (Rule(crds, check_rank=1), Rule(attachments, check_rank=4))

SECTIONS: dict[str, str] = {component.name: component.section for component in COMPONENTS}


def _checks() -> tuple[Check, ...]:
    """Every check, by rank; refuses a component whose rank and `check` disagree, and ranks not 0..n-1."""
    ranked: list[tuple[int, Check]] = []
    for component in COMPONENTS:
        check = getattr(component.module, "check", None)
        if (check is None) != (component.check_rank is None):
            raise RuntimeError(f"registry: {component.name} needs a check_rank exactly when it has a check")
        if check is not None and component.check_rank is not None:
            ranked.append((component.check_rank, check))
    ranked += [(rule.check_rank, rule.module.check) for rule in RULES]
    ranks = sorted(rank for rank, _ in ranked)
    if ranks != list(range(len(ranked))):
        raise RuntimeError(f"registry: the check ranks must be 0..{len(ranked) - 1}, each once, not {ranks}")
    return tuple(check for _, check in sorted(ranked, key=lambda pair: pair[0]))


# Each component checks its own section; attachments relates the default Gateway to what attaches to it.
CHECKS: tuple[Check, ...] = _checks()
