"""The types every layer shares: the validated Config, and the Problems a check finds in a config.

They live apart from config.py so that config.py can call each component's checks while the components
build from a Config (arrows only downward: config -> components -> model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# What a component's `check(values, raw)` returns: its problems (invalid: nothing is written or applied)
# and its warnings (valid, but probably not what the user meant). `values` has the schema's defaults
# applied; `raw` is what the user wrote, for rules about keys set to no effect.
Checked = tuple[list["Problem"], list[str]]


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the config: where (config path) and what to do about it."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class ConfigError(ValueError):
    """The config is invalid; carries every problem found, in a stable order."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(set(problems))
        self.summary = f"invalid envoy block config ({len(self.problems)} problem(s))"
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{self.summary}:\n{lines}")


@dataclass(frozen=True)
class Config:
    """The validated, effective config (schema defaults applied) plus block metadata."""

    values: dict[str, Any]
    block_name: str = "envoy"
    block_version: str = "0.0.0"
    warnings: tuple[str, ...] = field(default=())

    def get(self, dotted: str) -> Any:
        node: Any = self.values
        for part in dotted.split("."):
            node = node[part]
        return node
