"""Evaluate a rendered ValidatingAdmissionPolicy the way the API server does, without one: matchConditions,
then the variables in order, then every validation; a validation that is false (or fails to evaluate,
with failurePolicy Fail) denies with its message. Uses the Rust CEL engine the CRD gate uses.

The real API server runs the same policies in tests/cluster/test_waf_enforce.py; this is the fast,
table-driven twin for the unit tests. CEL is imported where it is used: Polycrate's image Python (`make
unit-image`) has no CEL engine, yet imports the tests that use this module to read their not_in_image mark.
"""

from __future__ import annotations

from typing import Any


def _context(obj: dict[str, Any], old: dict[str, Any] | None, variables: dict[str, Any]) -> Any:
    import cel

    ctx = cel.Context()
    ctx.add_variable("request", {"operation": "CREATE" if old is None else "UPDATE"})
    ctx.add_variable("object", obj)
    ctx.add_variable("oldObject", old)
    ctx.add_variable("variables", variables)
    return ctx


def denials(policy: dict[str, Any], obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[str]:
    """The messages the policy denies `obj` with (empty: admitted); `old` given = an UPDATE from it."""
    import cel

    spec = policy["spec"]
    assert spec.get("failurePolicy") == "Fail", "an unevaluable rule must deny, not admit"
    for condition in spec.get("matchConditions", []):
        if not cel.compile(condition["expression"]).execute(_context(obj, old, {})):
            return []
    variables: dict[str, Any] = {}
    for variable in spec.get("variables", []):
        variables[variable["name"]] = cel.compile(variable["expression"]).execute(_context(obj, old, variables))
    out = []
    for validation in spec["validations"]:
        try:
            ok = cel.compile(validation["expression"]).execute(_context(obj, old, variables))
        except Exception as exc:  # noqa: BLE001 - failurePolicy Fail: an evaluation error denies
            out.append(f"evaluation error: {exc}")
            continue
        assert isinstance(ok, bool), (validation["expression"], ok)
        if not ok:
            out.append(str(validation["message"]))
    return out


def judged(policy: dict[str, Any], obj: dict[str, Any], expected: str | None) -> list[str]:
    """Assert a table case: admitted when `expected` is None, else denied once with `expected` in the message.
    Returns the denials."""
    found = denials(policy, obj)
    if expected is None:
        assert found == []
    else:
        assert len(found) == 1, found
        assert expected in found[0]
    return found
