"""One typed plan end to end (issue 41): the decisions read the Plan that Plan.from_dict rebuilds from the
`envoy_config_plan` fact, once, at the plugin boundary. The fact gives back the same plan for the default
config and every example; a fact with a missing, unknown or mistyped key, or a derived field (a digest, a file
name, the delete order) that the rest does not give, is refused with its path."""

from __future__ import annotations

import copy
import importlib
import json
import re
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from envoy_block import builder, inputs, polycrate
from envoy_block.plan import DIGEST_ANNOTATION, Plan
from tests.conftest import ROOT
from tests.support.helpers import plan, with_gateway

EXAMPLES = sorted((ROOT / "examples").glob("*/config.yml"))
# The action and filter plugins import the core by its collection path, as Ansible does.
sys.path.insert(0, str(ROOT / "collections"))


def _example_plan(path: Path) -> Plan:
    """As tools/sync_docs.py renders the examples: block.poly's defaults merged with the example, like Polycrate."""
    block_poly = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    entry = polycrate.fold_keys(inputs.load_polycrate(path.read_bytes(), str(path)))
    snap = polycrate.snapshot(block_poly, {"config": entry.get("config", {})}, "unused")
    return builder.plan_from_block(snap["block"])


def _fact(p: Plan, include_secrets: bool = False) -> dict[str, Any]:
    """The plan as the actions get it: to_dict, through Ansible's fact and JSON."""
    return dict(json.loads(json.dumps(p.to_dict(include_secrets))))


PLANS: dict[str, Callable[[], Plan]] = {
    "default": plan,
    "no-waits-waf": lambda: plan(
        with_gateway({"wait": {"enabled": False}, "waf": {"enabled": True, "default_policy": {"enabled": True}}})
    ),
    **{f"every-kind-{i}": partial(plan, cfg) for i, cfg in enumerate(builder.EVERY_KIND_CONFIGS)},
    **{f"example-{p.parent.name}": partial(_example_plan, p) for p in EXAMPLES},
}


@pytest.mark.parametrize("name", sorted(PLANS))
def test_the_fact_gives_back_the_same_plan(name: str) -> None:
    built = PLANS[name]()
    rebuilt = Plan.from_dict(_fact(built))
    assert rebuilt == built
    assert json.dumps(rebuilt.to_dict()) == json.dumps(built.to_dict())


def test_every_example_is_round_tripped() -> None:
    assert len(EXAMPLES) >= 8
    assert {f"example-{p.parent.name}" for p in EXAMPLES} <= set(PLANS)


def test_credentials_stay_out_of_the_fact_and_are_known_to_be_configured() -> None:
    """Install's helm login reads the credentials from the helm_release filter, never from the fact: a plan
    rebuilt from the fact knows they are configured (auth_configured), not what they are."""
    built = plan({"chart": {"auth": {"username": "u", "password": "p"}}})
    rebuilt = Plan.from_dict(_fact(built))
    assert rebuilt.helm.auth == {}
    assert rebuilt.to_dict() == built.to_dict()
    with_secrets = Plan.from_dict(_fact(built, include_secrets=True))
    assert with_secrets == built
    assert with_secrets.to_dict(include_secrets=True) == built.to_dict(include_secrets=True)


def _refusal(fact: dict[str, Any]) -> str:
    with pytest.raises(ValueError, match=r".") as raised:
        Plan.from_dict(fact)
    return str(raised.value)


def test_a_missing_key_is_refused_with_its_path() -> None:
    fact = _fact(plan())
    del fact["controller"]["lease"]
    assert _refusal(fact).startswith("plan.controller: missing key(s) lease")
    fact = _fact(plan())
    del fact["objects"][0]["definition"]
    assert _refusal(fact).startswith("plan.objects[0]: missing key(s) definition")


def test_an_unknown_key_is_refused_with_its_path() -> None:
    fact = _fact(plan())
    fact["crds"]["gateway_api"]["owner"] = "someone"
    assert _refusal(fact).startswith("plan.crds.gateway_api: unknown key(s) owner")
    fact = _fact(plan())
    fact["extra"] = 1
    assert _refusal(fact).startswith("plan: unknown key(s) extra")


def test_a_wrong_type_is_refused_with_its_path() -> None:
    fact = _fact(plan())
    fact["wait"]["timeout"] = "300"
    assert _refusal(fact).startswith("plan.wait.timeout: expected an integer, got str")
    fact = _fact(plan())
    fact["wait"]["timeout"] = True  # a bool is no integer to the plan
    assert _refusal(fact).startswith("plan.wait.timeout: expected an integer, got bool")
    fact = _fact(plan())
    fact["namespace"]["create"] = "yes"
    assert _refusal(fact).startswith("plan.namespace.create: expected a boolean, got str")
    fact = _fact(plan())
    fact["objects"][1]["phase"] = "somewhere"
    assert _refusal(fact).startswith("plan.objects[1].phase: unknown phase 'somewhere'")


def test_a_tampered_digest_is_refused_with_its_path() -> None:
    """The definition changed by hand, its digest left: the digest no longer is the manifest's."""
    fact = _fact(plan())
    fact["objects"][0]["definition"]["metadata"]["labels"]["extra"] = "x"
    message = _refusal(fact)
    assert message.startswith(
        f"plan.objects[0].definition.metadata.annotations.{DIGEST_ANNOTATION}: not what the plan derives"
    ), message
    assert "stale or altered" in message


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda f: f["objects"][0].update(file="99-namespace-x.yaml"), "plan.objects[0].file"),
        (lambda f: f["objects"][0].update(apply_rank=5), "plan.objects[0].apply_rank"),
        (lambda f: f["objects"][0].update(name="other"), "plan.objects[0].name"),
        (lambda f: f["delete_order"].reverse(), "plan.delete_order[0]"),
        (lambda f: f["ownership_selector"].append("a=b"), "plan.ownership_selector"),
        (lambda f: f["helm"].update(registry_host="example.org"), "plan.helm.registry_host"),
        (lambda f: f["crds"]["chart_values"]["crds"].update(envoyGateway={"enabled": False}), "plan.crds.chart_values"),
        (lambda f: f["crds"]["gateway_api"].update(version="v0.1.0"), "plan.crds.gateway_api.version"),
    ],
)
def test_a_tampered_derived_field_is_refused_with_its_path(change: Any, path: str) -> None:
    fact = _fact(plan())
    change(fact)
    message = _refusal(fact)
    assert message.startswith(f"{path}"), message
    assert "not what the plan derives" in message


def test_credentials_with_auth_configured_false_are_refused() -> None:
    fact = _fact(plan({"chart": {"auth": {"username": "u", "password": "p"}}}), include_secrets=True)
    fact["helm"]["auth_configured"] = False
    assert _refusal(fact).startswith("plan.helm.auth_configured: not what the plan derives")


def test_a_rollout_without_waits_is_refused() -> None:
    """Without waits install lets nothing roll out: a fact that says otherwise was not written by this plan."""
    fact = _fact(PLANS["no-waits-waf"]())
    index = next(i for i, o in enumerate(fact["objects"]) if o["kind"] == "Deployment")
    fact["objects"][index]["rollout"] = True
    assert _refusal(fact).startswith(f"plan.objects[{index}].rollout: not what the plan derives")


def test_from_dict_does_not_share_the_facts_data() -> None:
    fact = _fact(plan())
    kept = copy.deepcopy(fact)
    rebuilt = Plan.from_dict(fact)
    rebuilt.helm.values["crds"]["enabled"] = True
    rebuilt.steps[0].obj["metadata"]["name"] = "changed"
    assert fact == kept


def _status_action(monkeypatch: pytest.MonkeyPatch, fact: dict[str, Any]) -> tuple[dict[str, Any], list[Plan]]:
    """The status_report action as Ansible runs it, up to act(): what act() was given, and the result."""
    action_base = importlib.import_module("ansible.plugins.action").ActionBase
    module = importlib.import_module("ansible_collections.polycrate_blocks.envoy.plugins.action.status_report")
    # ActionBase.run checks the task against Ansible's machinery, which is not here; it returns {} there.
    monkeypatch.setattr(action_base, "run", lambda self, tmp=None, task_vars=None: {})
    action = module.ActionModule.__new__(module.ActionModule)
    action._task = SimpleNamespace(args={"plan": fact}, action="polycrate_blocks.envoy.status_report")
    acted: list[Plan] = []

    def act(typed: Plan) -> dict[str, Any]:
        acted.append(typed)
        return {"changed": False}

    monkeypatch.setattr(action, "act", act)
    return action.run(task_vars={}), acted


def test_the_plan_actions_decide_on_the_typed_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    built = plan(with_gateway())
    result, acted = _status_action(monkeypatch, _fact(built))
    assert not result.get("failed"), result
    # The action's Plan is the collection path's class (the core imported as Ansible imports it): compared by
    # what it writes.
    (typed,) = acted
    assert type(typed).__name__ == "Plan"
    assert json.dumps(typed.to_dict()) == json.dumps(built.to_dict())


def test_the_plan_actions_refuse_an_altered_fact_before_reading_the_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    fact = _fact(plan())
    fact["wait"]["timeout"] = "300"
    result, acted = _status_action(monkeypatch, fact)
    assert result["failed"] is True
    assert "plan.wait.timeout: expected an integer, got str" in result["msg"]
    assert "Nothing was changed" in result["msg"]
    assert acted == []


# The plan crosses from plain data in one place: Plan.from_dict. A decision that subscripts the plan again
# (`plan["..."]`) reads an unchecked dict.
SUBSCRIPT = re.compile(r"""\bplan\[["']""")
SCANNED = ("collections", "tools")


def _subscripts(text: str) -> list[int]:
    return [text.count("\n", 0, m.start()) + 1 for m in SUBSCRIPT.finditer(text)]


def test_the_scan_finds_a_subscript() -> None:
    assert _subscripts('x = 1\nif plan["wait"]["enabled"]:\n') == [2]
    assert _subscripts("name = plan['namespace']") == [1]
    assert _subscripts("plan.wait.enabled; myplan.get('x')") == []


def test_no_decision_subscripts_the_plan() -> None:
    found = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            lines = _subscripts(path.read_text(encoding="utf-8"))
            found += [f"{path.relative_to(ROOT)}:{line}" for line in lines]
    assert not found, "plan subscripted outside Plan.from_dict (read the typed Plan's attributes): " + ", ".join(found)
