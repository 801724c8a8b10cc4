"""The curated exclusions (issue 39): rendered into the settings file the WAF runs from paranoia level 2 on,
never at level 1 (its verdicts stay the CRS's), each narrow (rules for named targets), before the user's
extra_directives, and switched off whole by waf.curated_exclusions: false."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from envoy_block import seclang, waf_check, waf_exclusions
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
    # Configure-time: the exclusions without a condition, for their targets that are not JSON paths.
    assert after.count("SecRuleUpdateTargetById") == sum(
        len(e.rules)
        for e in ALL
        if e.when is None and e.level <= level and not all(waf_exclusions.JSON_TARGET.match(t) for t in e.targets)
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


def _crs_argument_rules() -> dict[int, set[int]]:
    """The rules of the CRS files REQUEST-932, 933, 941 and 942 that read ARGS, by paranoia level (the first
    line of each SecRule: its variables, and its actions with id and paranoia-level tag)."""
    crs = waf_check.crs()
    assert crs is not None, "the CRS is missing: ../shared/crs/v4.28.0 (or set ENVOY_WAF_CRS)"
    out: dict[int, set[int]] = {}
    for prefix in ("932", "933", "941", "942"):
        (path,) = (crs / "rules").glob(f"REQUEST-{prefix}-*.conf")
        text = path.read_text(encoding="utf-8").replace("\\\n", " ")
        for variables, actions in re.findall(
            r'^\s*SecRule\s+(\S+)\s+"(?:[^"\\]|\\.)*"\s+"((?:[^"\\]|\\.)*)"', text, re.M
        ):
            rule = re.search(r"\bid:(\d+)", actions)
            level = re.search(r"paranoia-level/(\d)", actions)
            if rule and level and "ARGS" in re.split(r"[|:]", variables.lstrip("!&")):
                out.setdefault(int(level.group(1)), set()).add(int(rule.group(1)))
    return out


def test_injection_rules_are_the_crs_families() -> None:
    """The injection families the prose, password, Kubernetes and search classes take off are exactly the
    CRS's: every REQUEST-932/933/941/942 rule that reads arguments, levels 1-2 and level 3 apart."""
    crs = _crs_argument_rules()
    assert set(waf_exclusions.INJECTION_RULES) == crs[1] | crs[2]
    assert set(waf_exclusions.INJECTION_RULES_PL3) == crs[3]
    assert len(waf_exclusions.INJECTION_RULES) == len(set(waf_exclusions.INJECTION_RULES))


def _names(target: str) -> re.Pattern[str]:
    """A /regex/ target's regex, as Coraza reads it (Go's syntax: (?i) as Python has it); a name, exactly."""
    match = re.fullmatch(r"ARGS(?:_NAMES)?:/(.*)/", target)
    if match is None:
        return re.compile("^" + re.escape(target.split(":", 1)[1]) + "$", re.I)
    return re.compile(match.group(1))


def _excluded(targets: tuple[str, ...], name: str) -> bool:
    """Whether any of a class's targets takes an argument of this name (Coraza lowers names for a regex)."""
    return any(_names(t).search(name.lower()) for t in targets)


@pytest.mark.parametrize(
    ("name", "excluded"),
    [
        ("json.body", True),
        ("json.fields.description.content.0.content.1.text", True),  # Jira's ADF
        ("json.data.attributes.body.value", True),  # Drupal
        ("json.posts.0.html", True),  # Ghost
        ("json.variables.input.description", True),  # Linear
        ("json.ticket.comment.body", True),  # Zendesk
        ("content", True),  # a CMS form's field, as the tuning corpus had it
        ("body", False),  # a form or query string's argument: where a reflected attack is sent
        ("message", False),
        ("title", False),
        ("comment", False),
        ("query", False),
        ("json.text", False),
        ("json.comment", False),
        ("json.bodyguard", False),
    ],
)
def test_prose_is_json_body_fields(name: str, excluded: bool) -> None:
    """The prose class takes the injection families off JSON body fields only (and a form's `content`): never
    off an argument a query string can carry under a prose name, where reflected XSS and SQLi are sent."""
    assert _excluded(waf_exclusions.PROSE, name) == excluded, name


@pytest.mark.parametrize(
    ("target", "name", "excluded"),
    [
        (waf_exclusions.PASSWORDS, "user[password_confirmation]", True),
        (waf_exclusions.PASSWORDS, "json.credentials.newPassword", True),
        (waf_exclusions.PASSWORDS, "password2", True),
        (waf_exclusions.PASSWORDS, "q", False),
        (waf_exclusions.PASSWORDS, "user[email]", False),
        (waf_exclusions.NAMES, "user[first_name]", True),
        (waf_exclusions.NAMES, "json.name.givenName", True),
        (waf_exclusions.NAMES, "json.address.city", True),
        (waf_exclusions.NAMES, "json.username", False),
        (waf_exclusions.URLS, "json.avatarUrl", True),
        (waf_exclusions.URLS, "url", False),
        # Third round: nested password names, address lines, name objects, code fields.
        (waf_exclusions.PASSWORDS, "registration_form[plainPassword][first]", True),
        (waf_exclusions.PASSWORDS, "registration_form[email]", False),
        (waf_exclusions.NAMES, "json.address.line1", True),
        (waf_exclusions.NAMES, "json.variables.address.streetAddress1", True),
        (waf_exclusions.NAMES, "street[0]", True),
        (waf_exclusions.NAMES, "json.name.formatted", True),
        (waf_exclusions.NAMES, "json.pipeline", False),
        (waf_exclusions.NAMES, "json.deadline1", False),
        (waf_exclusions.CODE, "json.pipeline.steps.0.command.1", True),
        (waf_exclusions.CODE, "json.alerts.0.annotations.expr", True),
        (waf_exclusions.CODE, "json.components.schemas.Id.pattern", True),
        (waf_exclusions.CODE, "command", False),  # a form's or query string's: where reflected attacks go
        (waf_exclusions.CODE, "script", False),
        (waf_exclusions.CODE, "json.description_pattern_note", False),
        (waf_exclusions.PROSE, "json.formatted_body", True),
        (waf_exclusions.PROSE, "formatted_body", False),
    ],
)
def test_name_classes(target: tuple[str, ...], name: str, excluded: bool) -> None:
    assert _excluded(target, name) == excluded, (target, name)


@pytest.mark.parametrize(
    ("value", "passes"),
    [
        ("${var.env}-logs", True),
        ("arn:aws:s3:::${aws_s3_bucket.logs.bucket}/*", True),
        ("${aws_instance.web[0].private_ip}", True),
        ("price $5 < 10 and a <= b", True),
        ("plain text (with parentheses) {and braces}", True),
        ("${HOME}", False),  # no dot: a shell expands it
        ("$(id)", False),
        ("${var.env} $(id)", False),
        ("$ {IFS}", False),  # 933135 allows the space
        ("$\\{HOME}", False),  # cmdLine deletes the backslash
        ("$,(id)", False),  # cmdLine turns the comma into a space, then drops it before '('
        ("< (cat /etc/passwd)", False),
        ("<(cat /etc/passwd)", False),
        ("/bin/ca[t] /etc/passwd", False),
        ("${jndi:ldap://x.example/a}", False),
        ("${self.module.os.system('id')}", False),
    ],
)
def test_terraform_guard_passes_dotted_references_only(value: str, passes: bool) -> None:
    """The Terraform exclusion takes 932130 and 933135 off JSON values only when every value passes this guard
    (a rule flags any that does not): a `${...}` must be a dotted reference, and nothing 932130 looks for,
    before or after its cmdLine transformation, may be left. RE2 and Python read this regex alike."""
    assert bool(re.fullmatch(waf_exclusions.TERRAFORM_VALUE, value)) == passes, value
    (item,) = [e for e in waf_exclusions.EXCLUSIONS if e.when and waf_exclusions.TERRAFORM_VALUE in e.when[1]]
    assert item.every
    assert set(item.rules) == {932130, 933135}
    assert item.targets == waf_exclusions.JSON_VALUES


# Names a query string or a form can send: a JSON body's names (json.a.b) and others. Every name a JSON path
# target takes starts with json., and no other target takes one that does.
JSON_NAMES = (
    "json.body",
    "JSON.Body",
    "json.content",
    "json.steps.0.command",
    "json.user.password",
    "json.name",
    "json.address.city",
    "json.avatarUrl",
    "json.variables.id",
    "json.variables.q",
    "json.id",
    "json.data.x",
)
OTHER_NAMES = ("body", "content", "password", "user[password]", "user[first_name]", "name", "q", "redirect_uri")


def test_json_path_targets_are_told_apart() -> None:
    """JSON_TARGET tells the targets that name a JSON body's fields from the others: a JSON path target takes
    no name without the json. prefix, and no other target takes a json.* name (a mixed regex, as prose, names
    and passwords had, would leave its JSON half ungated)."""
    json_paths = [t for e in ALL for t in e.targets if waf_exclusions.JSON_TARGET.match(t)]
    others = [t for e in ALL for t in e.targets if not waf_exclusions.JSON_TARGET.match(t)]
    assert len(json_paths) >= 10
    for target in json_paths:
        assert not [n for n in OTHER_NAMES if _names(target).search(n.lower())], target
    for target in others:
        if target.startswith(("ARGS:", "ARGS_NAMES:")):
            assert not [n for n in JSON_NAMES if _names(target).search(n.lower())], target
    # Each class that named both keeps both: a form's content, user[first_name], user[password].
    for names, form, body in (
        (waf_exclusions.PROSE, "content", "json.content"),
        (waf_exclusions.NAMES, "user[first_name]", "json.user.first_name"),
        (waf_exclusions.PASSWORDS, "user[password]", "json.user.password"),
    ):
        assert _excluded(names, form), names
        assert _excluded(names, body), names


@pytest.mark.parametrize("level", [2, 3])
def test_json_path_exclusions_hold_for_json_bodies_only(level: int) -> None:
    """A query string or a form can send an argument named json.body (GET /?json.body=<script>): every JSON
    path target is taken off at runtime only, in phase 2, by a rule that reads the flag the first rules set:
    0 on every request, 1 when Coraza parsed the body as JSON, 0 again when a query string argument's name
    starts with json. (in any case), and never configure-time."""
    before, after = waf_exclusions.directives(level)
    lines = before.splitlines()
    flag = f"TX:{waf_exclusions.JSON_FLAG}"
    rules = [line for line in lines if not line.startswith("#")]
    assert rules[0] == f'SecAction "id:{waf_exclusions.FIRST_ID},phase:2,pass,nolog,t:none,setvar:tx.block_json_body=0"'
    assert rules[1].startswith('SecRule REQBODY_PROCESSOR "@streq JSON" ')
    assert rules[1].endswith(',phase:2,pass,nolog,t:none,setvar:tx.block_json_body=1"')
    assert rules[2].startswith('SecRule ARGS_GET_NAMES "@rx (?i)^json\\." ')
    assert rules[2].endswith(',phase:2,pass,nolog,t:none,setvar:tx.block_json_body=0"')
    guard = re.compile(r"(?i)^json\.")
    assert all(guard.search(n) for n in JSON_NAMES)
    assert not any(guard.search(n) for n in OTHER_NAMES)
    for target in {t for e in ALL for t in e.targets if waf_exclusions.JSON_TARGET.match(t)}:
        assert f"!{target}" not in after, target
    # Each rule taking a JSON path off is gated on the flag: itself, or a guard of its group.
    gated = 0
    for at, line in enumerate(rules):
        ctls = re.findall(r"ctl:ruleRemoveTargetById=\d+;([^,\"]+)", line)
        if not any(waf_exclusions.JSON_TARGET.match(t) for t in ctls):
            continue
        assert all(waf_exclusions.JSON_TARGET.match(t) for t in ctls), line
        assert ",phase:2," in line, line
        if line.startswith(f'SecRule {flag} "@eq 1" '):
            gated += 1
            continue
        exclusion = re.match(r'SecRule &TX:(block_exclusion_\d+) "@eq 0" ', line)
        assert exclusion, line
        group = [r for r in rules[:at] if f"setvar:tx.{exclusion.group(1)}=1" in r]
        assert any(r.startswith(f'SecRule {flag} "!@eq 1" ') for r in group), (line, group)
        gated += 1
    assert gated >= 8
