"""Install right after uninstall: the namespace uninstall deleted may still be terminating.

Until the API server has removed a namespace being deleted, nothing can be created in it: helm's release
Secret is refused with `unable to create new content in namespace ... because it is being terminated`, after
install has already written the CRDs and the cluster-wide objects. So install decides, from the namespace
as its one read found it, before it writes anything:

- absent or active -> go on;
- being deleted, waits on (wait.enabled) and not waited yet -> wait up to wait.timeout for it to be gone, then
  read the cluster again and decide again;
- still being deleted after that wait -> stop, nothing changed, naming what holds it (its conditions);
- being deleted and waits off -> stop at once (the run was asked not to wait);
- being deleted and create_namespace false -> stop at once: once gone it could not be created again.

Pure: the typed plan and plain data in (the namespace as read, whether install already waited), plain data out. The
role carries the decision out (roles/envoy_apply/tasks/read.yml).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..plan import Plan

# What a condition's text from the cluster may add to the message (the namespace controller's messages list
# the remaining kinds and finalizers; a cluster with many could make them long).
CONDITION_CHARS = 300


@dataclass(frozen=True)
class NamespaceGate:
    """`wait`: the queries to wait on until they find nothing (the namespace, by name), empty when install
    need not wait; `problem`: why install must stop before any change ("" when it may go on)."""

    wait: tuple[dict[str, Any], ...]
    problem: str


def terminating(namespace: Mapping[str, Any] | None) -> bool:
    """Whether the namespace is being deleted (it carries a deletionTimestamp)."""
    return bool(namespace is not None and (namespace.get("metadata") or {}).get("deletionTimestamp"))


def gone_query(name: str) -> dict[str, Any]:
    """The k8s_list query install waits on: the namespace by name, until it finds nothing."""
    return {"api_version": "v1", "kind": "Namespace", "name": name, "wait_absent": True}


def holding(namespace: Mapping[str, Any]) -> str:
    """What keeps the namespace, as its status says (the namespace controller's conditions that hold), and its
    own finalizers; "" when it says nothing."""
    found = [
        f"{c.get('type')}: {str(c.get('message') or '')[:CONDITION_CHARS]}"
        for c in (namespace.get("status") or {}).get("conditions") or []
        if c.get("status") == "True"
    ]
    finalizers = (namespace.get("metadata") or {}).get("finalizers") or []
    if finalizers:
        found.append(f"its finalizers {', '.join(str(f)[:CONDITION_CHARS] for f in finalizers)}")
    return "; ".join(found)


def decide(plan: Plan, namespace: Mapping[str, Any] | None, waited: bool) -> NamespaceGate:
    """What install does about the block's namespace as read (see the module's docstring)."""
    if namespace is None or not terminating(namespace):
        return NamespaceGate((), "")
    name = plan.namespace.name
    timeout = plan.wait.timeout
    held = holding(namespace)
    why = f" (held by {held})" if held else ""
    again = f"Run install again once `kubectl get namespace {name}` finds none. Nothing was changed."
    if not plan.namespace.create:
        return NamespaceGate(
            (),
            f"Namespace {name} is being deleted{why} and create_namespace is false: install could not create it "
            f"again. Create it once it is gone, then run install. Nothing was changed.",
        )
    if not plan.wait.enabled:
        return NamespaceGate(
            (),
            f"Namespace {name} is still being deleted{why} (a recent uninstall?) and wait.enabled is false, so "
            f"install does not wait for it; nothing can be created in it until it is gone. Set wait.enabled: true "
            f"to let install wait up to wait.timeout, or: {again}",
        )
    if waited:
        return NamespaceGate(
            (),
            f"Namespace {name} was still being deleted after wait.timeout ({timeout} s){why}; nothing can be "
            f"created in it until it is gone. Raise wait.timeout, or: {again}",
        )
    return NamespaceGate((gone_query(name),), "")
