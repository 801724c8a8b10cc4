"""k8s_apply's wait for a condition (the CRDs' Established before the controller starts): fail-closed when the
deadline passes without it, and no sleep for an object that already has it. It waits once every object is
applied, so a first install's 21 CRDs cost one read each instead of a second each (a first install of the
default config on the real node: the CRD task 24 s before, 7 s after)."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "collections"))

ESTABLISHED = {"type": "Established", "status": "True"}


@pytest.fixture(scope="module")
def k8s_apply() -> Any:
    return importlib.import_module("ansible_collections.polycrate_blocks.envoy.plugins.modules.k8s_apply")


def crd(*conditions: tuple[str, str]) -> dict[str, Any]:
    return {
        "kind": "CustomResourceDefinition",
        "status": {"conditions": [{"type": t, "status": s} for t, s in conditions]},
    }


class Clock:
    """A clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def reads(*objects: dict[str, Any]) -> Any:
    """A read that returns `objects` in turn, then the last one again; `.count` says how often it was called."""

    def read() -> dict[str, Any]:
        read.count += 1  # type: ignore[attr-defined]
        return objects[min(read.count, len(objects)) - 1]  # type: ignore[attr-defined]

    read.count = 0  # type: ignore[attr-defined]
    return read


def test_an_object_that_has_the_condition_costs_one_read_and_no_sleep(k8s_apply: Any) -> None:
    clock, read = Clock(), reads(crd(("NamesAccepted", "True"), ("Established", "True")))
    assert k8s_apply.await_condition(read, ESTABLISHED, 10, 1, clock=clock, sleep=clock.sleep) is not None
    assert (read.count, clock.sleeps) == (1, [])


def test_it_reads_again_after_each_pause_until_the_condition_holds(k8s_apply: Any) -> None:
    clock = Clock()
    read = reads(crd(), crd(("Established", "False")), crd(("Established", "True")))
    found = k8s_apply.await_condition(read, ESTABLISHED, 10, 1, clock=clock, sleep=clock.sleep)
    assert found == crd(("Established", "True"))
    assert (read.count, clock.sleeps) == (3, [1, 1])


@pytest.mark.parametrize("status", ["False", "Unknown"])
def test_it_gives_up_at_the_deadline_without_the_condition(k8s_apply: Any, status: str) -> None:
    """Fail-closed: None (the module then fails naming the object), never the last object read."""
    clock, read = Clock(), reads(crd(("Established", status)))
    assert k8s_apply.await_condition(read, ESTABLISHED, 3, 1, clock=clock, sleep=clock.sleep) is None
    assert clock.now > 3
    assert read.count == len(clock.sleeps) + 1  # a last read after the last pause
