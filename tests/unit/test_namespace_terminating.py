"""Install right after uninstall (issue 40): the namespace uninstall deleted may still be terminating, and
nothing can be created in it (helm's release Secret: `forbidden: unable to create new content in namespace
... because it is being terminated`, after the CRDs were written). Install decides from its one read, before
any write (lifecycle.terminating): absent or active, go on; being deleted, wait up to wait.timeout for it
to be gone, then read and decide again; still there after that wait, with waits off, or with
create_namespace false, stop with a message that names the namespace, what holds it and what to do.

Mutation: install-namespace-terminating (a namespace being deleted taken for a live one) turns these red.
"""

from __future__ import annotations

import copy
import importlib
import sys
from typing import Any

from envoy_block import lifecycle
from envoy_block.lifecycle import terminating
from envoy_block.plan import Plan
from tests.conftest import ROOT
from tests.support.helpers import plan

sys.path.insert(0, str(ROOT / "collections"))
k8s_list: Any = importlib.import_module("ansible_collections.polycrate_blocks.envoy.plugins.modules.k8s_list")

NS = "envoy-gateway-system"
ACTIVE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}, "status": {"phase": "Active"}}
DELETING: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {"name": NS, "deletionTimestamp": "2026-12-05T03:00:00Z", "finalizers": ["example.com/hold"]},
    "spec": {"finalizers": ["kubernetes"]},
    "status": {
        "phase": "Terminating",
        "conditions": [
            {"type": "NamespaceContentRemaining", "status": "True", "message": "Some resources are remaining: pods."},
            {"type": "NamespaceDeletionDiscoveryFailure", "status": "False", "message": "All resources discovered"},
        ],
    },
}


def state(p: Plan, namespace: dict[str, Any] | None, waited: bool = False) -> dict[str, Any]:
    """install_state from a read where the namespace is `namespace` and nothing else exists."""
    results = [
        {"item": q, "api_found": True, "resources": [namespace] if namespace and q["purpose"] == "namespace" else []}
        for q in lifecycle.install_lookups(p)
    ]
    return lifecycle.install_state(results, p, crds_current=False, waited=waited)


def test_a_live_or_missing_namespace_needs_no_wait() -> None:
    p = plan()
    for namespace in (None, ACTIVE):
        found = state(p, namespace)
        assert (found["namespace_wait"], found["problems"]) == ([], []), namespace


def test_a_namespace_being_deleted_is_waited_for_by_name() -> None:
    p = plan()
    found = state(p, copy.deepcopy(DELETING))
    assert found["problems"] == []
    assert found["namespace_wait"] == [{"api_version": "v1", "kind": "Namespace", "name": NS, "wait_absent": True}]


def test_still_being_deleted_after_the_wait_stops_install_naming_what_holds_it() -> None:
    p = plan({"wait": {"timeout": 42}})
    found = state(p, copy.deepcopy(DELETING), waited=True)
    assert found["namespace_wait"] == []
    (problem,) = found["problems"]
    assert f"Namespace {NS} was still being deleted after wait.timeout (42 s)" in problem
    assert "NamespaceContentRemaining: Some resources are remaining: pods." in problem
    assert "its finalizers example.com/hold" in problem
    assert "NamespaceDeletionDiscoveryFailure" not in problem, "only the conditions that hold"
    assert "Raise wait.timeout" in problem
    assert problem.endswith("Nothing was changed.")


def test_waits_off_or_a_namespace_the_block_may_not_create_stop_at_once() -> None:
    off = state(plan({"wait": {"enabled": False}}), copy.deepcopy(DELETING))
    assert off["namespace_wait"] == []
    assert len(off["problems"]) == 1
    assert "wait.enabled is false" in off["problems"][0]
    assert "Set wait.enabled: true" in off["problems"][0]
    foreign = state(plan({"create_namespace": False}), copy.deepcopy(DELETING))
    assert foreign["namespace_wait"] == []
    assert len(foreign["problems"]) == 1, foreign["problems"]
    assert "create_namespace is false: install could not create it again" in foreign["problems"][0]


def test_the_read_returns_the_namespace_whole_and_long_cluster_text_is_cut() -> None:
    """The namespace's status (its conditions) is what names the holder: the query reads it whole."""
    (query,) = [q for q in lifecycle.install_lookups(plan()) if q["purpose"] == "namespace"]
    assert query["metadata_only"] is False
    long = copy.deepcopy(DELETING)
    long["status"]["conditions"][0]["message"] = "x" * 5000
    held = terminating.holding(long)
    assert len(held) < 2 * terminating.CONDITION_CHARS, len(held)


def test_the_wait_lists_until_the_namespace_is_gone_and_never_fails_for_what_is_left(monkeypatch: Any) -> None:
    """k8s_list's wait_absent: looks again until nothing is found, or returns what is left at the timeout."""
    answers = [[DELETING], [DELETING], []]
    calls: list[int] = []

    def listed(svc: Any, query: Any, selectors: Any) -> dict[str, Any]:
        calls.append(1)
        return {"resources": answers[min(len(calls), len(answers)) - 1], "api_found": True}

    monkeypatch.setattr(k8s_list, "_metadata_list", listed)
    monkeypatch.setattr(k8s_list.time, "sleep", lambda s: None)
    assert k8s_list._until_absent(None, {}, [], timeout=60, sleep=1)["resources"] == []
    assert len(calls) == 3
    calls.clear()
    answers[:] = [[DELETING]]
    assert k8s_list._until_absent(None, {}, [], timeout=0, sleep=1)["resources"] == [DELETING], "timed out"
