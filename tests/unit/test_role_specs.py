"""Invariant: each role's meta/argument_specs.yml lists every variable the role reads that is not its own
internal (`__` prefix) or Ansible's, so `ansible-doc -t role` and argument validation tell a caller all of it.

Mutation check (done once, restored): dropping envoy_remove_poll_delay from envoy_remove's spec turned this red.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ROLES = sorted(p.name for p in (ROOT / "roles").iterdir() if (p / "tasks").is_dir())
# The role inputs: Polycrate's block and the block's own variables (envoy_<role>_..., and the facts the config
# role sets for the roles after it).
INPUT = re.compile(r"\b(block|envoy_[a-z_]+)\b(?!\s*\|\s*polycrate)")
JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)


def _read(role: str) -> set[str]:
    """The inputs named inside Jinja (templates, and conditions, which are Jinja without braces)."""
    names: set[str] = set()
    for path in sorted((ROOT / "roles" / role).glob("*/*.yml")):
        if path.parent.name == "meta":
            continue
        text = path.read_text(encoding="utf-8")
        expressions = JINJA.findall(text)
        for key in ("when", "until", "failed_when", "changed_when"):
            expressions += re.findall(rf"^\s*-?\s*{key}:\s*>?-?\s*(.+?)(?=^\s*[a-z_]+:|\Z)", text, re.M | re.S)
        for expression in expressions:
            names |= {n for n in INPUT.findall(expression) if not n.startswith("envoy_block")}
    return names


@pytest.mark.parametrize("role", ROLES)
def test_every_variable_a_role_reads_is_in_its_spec(role: str) -> None:
    spec = yaml.safe_load((ROOT / "roles" / role / "meta/argument_specs.yml").read_text(encoding="utf-8"))
    options = set(spec["argument_specs"]["main"].get("options") or {})
    read = _read(role)
    assert read, f"{role}: found no input at all: the pattern is stale"
    assert read <= options, f"{role} reads {sorted(read - options)} without listing them in meta/argument_specs.yml"


@pytest.mark.parametrize("role", ROLES)
def test_every_internal_variable_a_role_reads_is_set_in_it(role: str) -> None:
    """A role's own `__envoy_*` variables come from its `register:`, `set_fact` or `vars:`; one read but never
    set is a rename left half done (it fails only on the cluster, at that task). Mutation check (done once):
    the uninstall role's CRD step still reading the old __envoy_remove_plan turned this red."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "roles" / role / "tasks").glob("*.yml")))
    read = set(re.findall(r"\b(__envoy_[a-z_]+)", text))
    set_here = set(re.findall(r"^\s*(?:register:\s*|-?\s*)(__envoy_[a-z_]+)\b", text, re.M))
    assert read <= set_here, f"{role} reads {sorted(read - set_here)} that it never sets"
