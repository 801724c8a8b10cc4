"""Contract: whatever the block accepts for the WAF, the WAF binary accepts (issue 29). Hypothesis draws WAF
sections from config.schema.json itself (every key that reaches the WAF's settings file, with each integer's
extremes drawn first), the block validates and renders them, and the real `envoy-waf --check` (which builds
the engine: the real CRS from ../shared/crs plus extra_directives, as startup does) judges the rendered
ConfigMap's waf.yaml. Accepted by the block => accepted by the binary.

Bounded: a fixed number of examples, derandomized (the same draws every run, so a failure reproduces), no
per-example deadline; and each integer at its schema bounds, named. Mutation check: tools/mutate.py
`hostile-waf-body-limit` (the schema's bound on waf.body.limit back to int32) turns
test_each_integer_at_its_schema_bound red.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

# Polycrate's image Python has no Hypothesis: `make unit-image` cannot import this module to read its
# not_in_image mark, so there it is skipped here. In .venv (requirements.txt) Hypothesis is always there.
pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from envoy_block import builder, config, waf_check
from envoy_block.components import waf as waf_component
from tests.conftest import ROOT
from tests.support.helpers import block

# Runs the real envoy-waf (make waf-build) on Hypothesis's draws: make unit-go, never make unit-image.
pytestmark = [pytest.mark.contract, pytest.mark.go_binary, pytest.mark.not_in_image]

WAF_BINARY = ROOT / "waf/bin/envoy-waf"
EXAMPLES = 20
# The keys of the waf section that reach the service's settings file (components/waf.settings).
SETTINGS_KEYS = (
    "mode",
    "paranoia_level",
    "anomaly_threshold",
    "allowed_methods",
    "validate_utf8",
    "exclude_rule_ids",
    "exclude_rule_tags",
    "extra_directives",
    "body",
    "response_inspection",
    "block_status",
    # workers, the hostile-body bounds and the allowed media types, passed under their own names when set: a key
    # added there is drawn here.
    *waf_component.OPTIONAL_SETTINGS,
)
# extra_directives is free text: the schema cannot draw it. Valid directives of each kind the block's
# structural check passes (what it refuses is tests/unit/test_hostile_input.py's).
DIRECTIVES = (
    "",
    'SecRule REQUEST_URI "@beginsWith /admin" "id:10001,phase:1,deny,status:403"',
    'SecRule ARGS:q "@rx ^[a-z]{1,64}$" "id:10002,phase:2,pass,nolog,chain"\n'
    '  SecRule REMOTE_ADDR "@ipMatch 10.0.0.0/8"',
    "SecRuleRemoveById 942100\nSecRuleRemoveByTag attack-sqli",
    'SecAction "id:10003,phase:1,pass,nolog,setvar:tx.custom=1"',
    "SecRuleUpdateTargetById 942100 !ARGS:password",
)
# Room for the largest bodies the schema allows (the proxies' memory rule is not what this test is about).
BASE = {
    "default_gateway": {"enabled": True, "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]},
    "data_plane": {"resources": {"requests": {"memory": "256Mi"}, "limits": {"memory": "64Gi"}}},
}


def _strategy(schema: dict[str, Any], node: dict[str, Any]) -> st.SearchStrategy[Any]:
    node = config._resolve(schema, node)
    if "enum" in node:
        return st.sampled_from(node["enum"])
    kind = node.get("type")
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low, high = node["minimum"], node["maximum"]
        extremes = sorted(n for n in {low, high, low + 1, high - 1, (low + high) // 2} if low <= n <= high)
        return st.one_of(st.sampled_from(extremes), st.integers(low, high))
    if kind == "string":
        pattern = node.get("pattern", ".*")
        return st.from_regex(re.compile(pattern), fullmatch=True).filter(lambda s: len(s) <= node["maxLength"])
    if kind == "array":
        items = _strategy(schema, node["items"])
        size = min(node.get("maxItems", 4), 4)
        return st.lists(items, min_size=node.get("minItems", 0), max_size=size, unique=bool(node.get("uniqueItems")))
    if kind == "object" and "properties" in node:
        return st.fixed_dictionaries({}, optional={k: _strategy(schema, v) for k, v in node["properties"].items()})
    raise AssertionError(f"no strategy for {node}")


def waf_sections() -> st.SearchStrategy[dict[str, Any]]:
    schema = config.load_schema()
    waf = schema["properties"]["waf"]["properties"]
    keys = {k: _strategy(schema, waf[k]) for k in SETTINGS_KEYS if k != "extra_directives"}
    keys["extra_directives"] = st.sampled_from(DIRECTIVES)
    return st.fixed_dictionaries({"enabled": st.just(True)}, optional=keys)


def rendered_settings(waf: dict[str, Any]) -> str | None:
    """The ConfigMap's waf.yaml the block renders for `waf`, or None when the block refuses the config."""
    try:
        plan = builder.plan_from_block(block({**BASE, "waf": waf}))
    except config.ConfigError:
        return None
    for step in plan.steps:
        if step.kind == "ConfigMap" and "waf.yaml" in (step.obj.get("data") or {}):
            return str(step.obj["data"]["waf.yaml"])
    raise AssertionError("an enabled WAF renders its settings ConfigMap")


def binary_says(settings_yaml: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    crs = waf_check.crs()
    assert crs is not None, "the CRS is missing: ../shared/crs/v4.28.0 (or set ENVOY_WAF_CRS)"
    file = tmp / "waf.yaml"
    file.write_text(yaml.safe_dump({**yaml.safe_load(settings_yaml), "crs_dir": str(crs)}), encoding="utf-8")
    return subprocess.run(
        [str(WAF_BINARY), "--check", "--config", str(file)], capture_output=True, text=True, check=False, timeout=120
    )


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
@given(waf=waf_sections())
def test_accepted_by_the_block_is_accepted_by_the_binary(waf: dict[str, Any], tmp_path: Path) -> None:
    if not WAF_BINARY.is_file():
        pytest.fail(f"{WAF_BINARY} is missing: run `make waf-build`")
    rendered = rendered_settings(waf)
    assume(rendered is not None)  # the examples counted are the ones the block accepts
    assert rendered is not None
    done = binary_says(rendered, tmp_path)
    assert done.returncode == 0, f"the block accepted waf: {waf!r} but envoy-waf refuses it: {done.stderr}"


def _integer_bounds() -> list[tuple[str, dict[str, Any]]]:
    """(id, waf section) for each integer among the WAF settings keys at its schema minimum and maximum (a list's
    items as a one-item list), read from the schema: a looser bound there is drawn here at once."""
    schema = config.load_schema()
    cases: list[tuple[str, dict[str, Any]]] = []

    def walk(node: dict[str, Any], parts: list[str]) -> None:
        node = config._resolve(schema, node)
        if node.get("type") == "array":
            node, listed = config._resolve(schema, node["items"]), True
        else:
            listed = False
        if node.get("type") == "integer":
            for bound in ("minimum", "maximum"):
                value: Any = [node[bound]] if listed else node[bound]
                for part in reversed(parts):
                    value = {part: value}
                cases.append((f"{'.'.join(parts)}-{bound}", value))
        for key, sub in node.get("properties", {}).items():
            walk(sub, [*parts, key])

    waf = schema["properties"]["waf"]["properties"]
    for key in SETTINGS_KEYS:
        walk(waf[key], [key])
    return cases


BOUNDS = _integer_bounds()


@pytest.mark.parametrize("waf", [c[1] for c in BOUNDS], ids=[c[0] for c in BOUNDS])
def test_each_integer_at_its_schema_bound(waf: dict[str, Any], tmp_path: Path) -> None:
    """Every WAF integer at its schema's minimum and maximum: where the block accepts it, the binary does."""
    if not WAF_BINARY.is_file():
        pytest.fail(f"{WAF_BINARY} is missing: run `make waf-build`")
    rendered = rendered_settings({"enabled": True, **waf})
    if rendered is None:
        return  # refused by one of the block's rules (e.g. max_size above limit): nothing reaches the binary
    done = binary_says(rendered, tmp_path)
    assert done.returncode == 0, f"the block accepted waf: {waf!r} but envoy-waf refuses it: {done.stderr}"


@pytest.mark.parametrize(
    "waf",
    [
        {"body": {"limit": 2**30 - 1}, "response_inspection": {"enabled": True, "body_limit": 2**30 - 1}},
        {"anomaly_threshold": 2**31 - 1, "exclude_rule_ids": [1, 2**31 - 1], "paranoia_level": 4},
        {"workers": 64, "block_status": 599, "mode": "detect", "body": {"limit": 1024, "limit_action": "partial"}},
    ],
    ids=["largest-bodies", "largest-ids", "edges"],
)
def test_the_extremes_the_block_accepts_start(waf: dict[str, Any], tmp_path: Path) -> None:
    """The schema's own extremes, each accepted by the block and by the binary (drawn above too, named here)."""
    if not WAF_BINARY.is_file():
        pytest.fail(f"{WAF_BINARY} is missing: run `make waf-build`")
    rendered = rendered_settings({"enabled": True, **waf})
    assert rendered is not None, f"the block refuses {waf}"
    done = binary_says(rendered, tmp_path)
    assert done.returncode == 0, done.stderr
