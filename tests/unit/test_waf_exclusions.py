"""The curated exclusions (issue 39): rendered into the settings file the WAF runs from paranoia level 2 on,
never at level 1 (its verdicts stay the CRS's), each narrow (rules for named targets), before the user's
extra_directives, and switched off whole by waf.curated_exclusions: false."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from envoy_block import seclang, waf_exclusions
from tests.support.helpers import find, with_gateway

ALL = (*waf_exclusions.EXCLUSIONS, *waf_exclusions.PL3_EXCLUSIONS)


def settings(waf: dict[str, Any]) -> dict[str, Any]:
    cfg = with_gateway({"waf": {"enabled": True, **waf}})
    return dict(yaml.safe_load(find(cfg, "ConfigMap")["data"]["waf.yaml"]))


def test_level_one_renders_the_crs_as_released() -> None:
    out = settings({})
    assert out["paranoia_level"] == 1
    assert out["extra_directives"] == ""
    assert "setup_directives" not in out


@pytest.mark.parametrize("level", [2, 3, 4])
def test_levels_two_and_up_carry_them(level: int) -> None:
    out = settings({"paranoia_level": level})
    before, after = waf_exclusions.directives(level)
    assert out["setup_directives"] == before
    assert out["extra_directives"] == after
    assert after.count("SecRuleUpdateTargetById") == sum(
        len(e.rules) for e in ALL if e.when is None and e.level <= level
    )


def test_level_three_rules_are_excluded_from_level_three_on() -> None:
    """The level 3 exclusions are rendered from level 3: level 2's settings are those it was measured on."""
    assert all(e.level == 3 for e in waf_exclusions.PL3_EXCLUSIONS)
    two = "".join(waf_exclusions.directives(2))
    three = "".join(waf_exclusions.directives(3))
    assert "SecRuleUpdateTargetById 920272 " not in two
    assert 'SecRuleUpdateTargetById 920272 "!ARGS|!REQUEST_BODY|!REQUEST_URI_RAW"' in three


def test_switched_off_renders_none() -> None:
    out = settings({"paranoia_level": 2, "curated_exclusions": False})
    assert out["extra_directives"] == ""
    assert "setup_directives" not in out


def test_users_directives_come_last() -> None:
    mine = 'SecRule ARGS:x "@streq y" "id:10001,phase:2,deny,status:403"\n'
    out = settings({"paranoia_level": 2, "extra_directives": mine})
    assert out["extra_directives"].endswith(mine)
    assert out["extra_directives"].startswith("# ")


# Rules that read the request's form rather than look for an attack (REQUEST-920, protocol enforcement): the
# only ones an exclusion may take off a whole collection.
PROTOCOL_RULES = range(920000, 921000)


def test_every_exclusion_is_narrow_and_explained() -> None:
    for item in ALL:
        assert item.rules
        assert item.targets
        assert len(item.reason) > 20
        for target in item.targets:  # a named argument, cookie or the path; a whole collection: protocol only
            if re.fullmatch(r"ARGS|REQUEST_BODY|REQUEST_URI_RAW", target):
                assert all(rule in PROTOCOL_RULES for rule in item.rules), (item.rules, target)
            else:
                assert re.fullmatch(r"(ARGS|ARGS_NAMES|REQUEST_COOKIES):\S+|REQUEST_FILENAME", target), target
        assert item.when is not None or "REQUEST_FILENAME" not in item.targets


def test_no_attack_rule_is_off_a_whole_collection_at_any_level() -> None:
    """What is rendered, at every level: a negated target of a whole collection only for protocol rules."""
    for level in (2, 3, 4):
        _, after = waf_exclusions.directives(level)
        for rule, targets in re.findall(r'^SecRuleUpdateTargetById (\d+) "([^"]+)"$', after, re.M):
            if any(t in ("!ARGS", "!REQUEST_BODY", "!REQUEST_URI_RAW") for t in targets.split("|")):
                assert int(rule) in PROTOCOL_RULES, (level, rule, targets)


def test_runtime_ids_are_the_blocks_own() -> None:
    before, _ = waf_exclusions.directives(2)
    ids = [int(i) for i in re.findall(r"id:(\d+)", before)]
    assert ids
    assert len(set(ids)) == len(ids)
    assert all(i in seclang.BLOCK_IDS for i in ids)


def test_an_argument_condition_holds_for_every_value() -> None:
    """A client can send an argument twice (q=plain&q=payload): an exclusion conditioned on an argument's value
    applies only when every value matches. Rendered as a guard that flags any value not matching, then the
    ctl rule only without the flag, both in the phase the argument is read in, the guard first."""
    before, _ = waf_exclusions.directives(2)
    lines = before.splitlines()
    guarded = [e for e in ALL if e.when is not None and e.when[0].startswith("ARGS")]
    assert guarded  # the search exclusion
    for item in guarded:
        assert item.when is not None
        assert item.every, item.reason
        variable, operator = item.when
        (at,) = [i for i, line in enumerate(lines) if line.startswith(f'SecRule {variable} "!{operator}" ')]
        flag = re.search(r",setvar:tx\.(\w+)=1\"$", lines[at])
        assert flag, lines[at]
        assert "ctl:" not in lines[at]
        assert lines[at + 1].startswith(f'SecRule &TX:{flag.group(1)} "@eq 0" '), lines[at + 1]
        assert lines[at + 1].count("ctl:ruleRemoveTargetById=") == len(item.rules) * len(item.targets)
        assert all(f",phase:{item.phase}," in line for line in lines[at : at + 2])


def test_search_exclusion_reads_the_body() -> None:
    """GraphQL's q is a JSON body argument: its guard must run in phase 2, when the body has been parsed."""
    (search,) = [e for e in waf_exclusions.EXCLUSIONS if e.targets == waf_exclusions.SEARCH_QUERIES]
    assert search.phase == 2
