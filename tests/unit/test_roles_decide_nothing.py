"""Invariant: the roles only sequence what the Python decisions return; no condition or fact in Jinja reads the
cluster's objects to decide something (install: lifecycle.install_state; uninstall: lifecycle.decide_uninstall;
status: lifecycle.status). A `when:`, `until:`, `failed_when:`, `changed_when:` or `set_fact` that looks into
objects as read (their `resources`, `status`, `metadata`, labels, replica counts) is a decision written twice,
once untested.

Mutation check (done once, restored): putting back the uninstall role's namespace test
(`ownership_labels.items() | list is subset(...metadata.labels...)`) turned this red.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
TASK_FILES = sorted((ROOT / "roles").glob("*/tasks/*.yml"))
CONDITIONS = ("when", "until", "failed_when", "changed_when")
# What reading an object as the cluster returned it looks like in Jinja.
CLUSTER_READ = re.compile(
    r"\bresources\b|readyReplicas|replicas\b|\.status\b|\bstatus\.|metadata|\blabels\b|is subset|is superset"
    r"|\.items\(\)|selectattr\(\s*'kind'"
)


def _tasks(tasks: list[dict[str, Any]] | None) -> Iterator[dict[str, Any]]:
    for task in tasks or []:
        yield task
        for key in ("block", "rescue", "always"):
            yield from _tasks(task.get(key))


def _expressions(task: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for key in CONDITIONS:
        value = task.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                yield key, item
    for key in ("ansible.builtin.set_fact", "set_fact"):
        for name, value in (task.get(key) or {}).items():
            yield f"set_fact {name}", str(value)
    # A set_fact's or condition's helper variables count as part of it.
    if any(key in task for key in (*CONDITIONS, "ansible.builtin.set_fact", "set_fact")):
        for name, value in (task.get("vars") or {}).items():
            yield f"vars {name}", str(value)


@pytest.mark.parametrize("path", TASK_FILES, ids=[str(p.relative_to(ROOT)) for p in TASK_FILES])
def test_no_condition_or_fact_decides_from_cluster_objects(path: Path) -> None:
    found = [
        f"{task.get('name')}: {where}: {' '.join(text.split())}"
        for task in _tasks(yaml.safe_load(path.read_text(encoding="utf-8")))
        for where, text in _expressions(task)
        if CLUSTER_READ.search(text)
    ]
    assert found == [], "decide in Python (lifecycle) and read the decision's fields instead:\n" + "\n".join(found)


def test_the_check_sees_the_old_jinja_decisions() -> None:
    """The pattern catches what the roles used to decide in Jinja (so the test above can fail)."""
    old = [
        "(__c.resources | first | default({})).status.readyReplicas | default(0) > 0",
        "(plan.ownership_labels.items() | list) is subset((ns.resources[0].metadata.labels).items() | list)",
        "objects | selectattr('kind', 'equalto', 'Gateway') | list | length > 0",
    ]
    assert all(CLUSTER_READ.search(text) for text in old)


@pytest.mark.parametrize("path", TASK_FILES, ids=[str(p.relative_to(ROOT)) for p in TASK_FILES])
def test_no_task_polls_in_a_loop(path: Path) -> None:
    """One way to wait: inside the module run (k8s_list's wait_absent and wait_condition, k8s_apply's waits and
    rollouts, kubernetes.core's wait). An `until` loop starts a module, a Python importing the Kubernetes client,
    for every poll: about a second of CPU each, the largest share of the CPU a make test spends."""
    polling = [
        str(task.get("name"))
        for task in _tasks(yaml.safe_load(path.read_text(encoding="utf-8")))
        if "until" in task or "retries" in task
    ]
    assert polling == [], f"wait inside the module run instead of an until loop: {polling}"


# A fact as the roles read it: a variable and the fields read from it (`__envoy_apply_found.helm_needed`).
FACT = re.compile(r"\b((?:__envoy|envoy|ansible)_\w+(?:\.\w+)*)")
# The filters the roles may use: they hand credentials to no_log tasks and decide nothing.
DATA_FILTERS = {"helm_release", "waf_image_auth"}


def _facts(task: dict[str, Any]) -> set[str]:
    return {match for _, text in _expressions(task) for match in FACT.findall(text)}


@pytest.mark.parametrize("path", TASK_FILES, ids=[str(p.relative_to(ROOT)) for p in TASK_FILES])
def test_no_condition_combines_two_facts(path: Path) -> None:
    """Which task runs depends on one field of a decision (or on the run's check mode alone): a condition
    that combines two facts is a decision taken in Jinja, untested (issue 41: wait.yml derived "changed" from
    five facts; the registry login was decided twice, differently). Decide in Python and return the field."""
    combined = [
        f"{task.get('name')}: {sorted(facts)}"
        for task in _tasks(yaml.safe_load(path.read_text(encoding="utf-8")))
        if len(facts := _facts(task)) > 1
    ]
    assert combined == [], "return one field from the decision instead:\n" + "\n".join(combined)


def test_no_role_uses_a_deciding_filter() -> None:
    """The block's filters only hand credentials on (DATA_FILTERS); everything else is an action's decision."""
    used = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in TASK_FILES
        for name in re.findall(r"polycrate_blocks\.envoy\.(\w+)\b(?!:)", path.read_text(encoding="utf-8"))
        if name not in DATA_FILTERS
    }
    assert used == set(), f"decide in an action (lifecycle) instead: {sorted(used)}"


def test_the_fact_checks_see_what_the_roles_used_to_do() -> None:
    """The checks above catch the old wait.yml condition and the old CRD filters (so they can fail)."""
    old_wait = {
        "when": "(__envoy_apply_changed and not envoy_apply_check_mode | bool) "
        "or (__envoy_apply_wait and not __envoy_apply_found.settled)"
    }
    assert len(_facts(old_wait)) == 4
    assert len(_facts({"when": ["envoy_config_plan.wait.enabled", "not envoy_apply_check_mode | bool"]})) == 2
    assert len(_facts({"when": "not envoy_apply_check_mode | bool"})) == 1
    old_filter = "{{ settings | polycrate_blocks.envoy.crd_manifests(text) | polycrate_blocks.envoy.stale_crds(x) }}"
    assert re.findall(r"polycrate_blocks\.envoy\.(\w+)\b(?!:)", old_filter) == ["crd_manifests", "stale_crds"]
