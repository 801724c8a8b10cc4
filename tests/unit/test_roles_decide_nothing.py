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
