"""Which make target runs a test is a mark on the test itself (pyproject.toml's markers, docs/testing.md#test-tiers):
the rules in the Makefile and mk/*.mk collect whole folders and files and select with -m only, so a test renamed
or moved keeps its tier (a list of names elsewhere let it fall silently into another target).

Guards: no pytest command of a make rule names a test or leaves one out by name (`::`, --deselect, -k, --ignore);
every name in their -m expressions is a registered marker with its meaning (--strict-markers refuses an unknown
mark on a test, not an unknown name in -m: `-m go_binery` would select nothing and `-m "not go_binery"`
everything); no conftest or support module adds marks to the collected tests (the old GO_BACKED hook did, by
name).

Mutation checks (done once): the rules as they were (IMAGE_TESTS' --ignore list and -k, ON_THREE_NODES' node
ids, unit-go's and image-test's --ignore) turned test_no_make_rule_picks_tests_by_name red for five commands;
`-m go_binery` in unit-go turned the marker check red; a hook adding go_binary in tests/conftest.py turned
test_no_hook_gives_tests_a_mark red."""

from __future__ import annotations

import re
import shlex
import tomllib

import pytest

from tests.conftest import ROOT

MAKEFILES = [ROOT / "Makefile", *sorted((ROOT / "mk").glob("*.mk"))]
OPERATORS = {"and", "or", "not"}


def markers() -> dict[str, str]:
    """pyproject.toml's registered markers: name -> meaning."""
    entries = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    found = {}
    for entry in entries["markers"]:
        name, _, meaning = entry.partition(":")
        found[name.split("(")[0].strip()] = meaning.strip()
    return found


def pytest_commands() -> dict[str, list[str]]:
    """Each make recipe line that runs pytest, the make variables it names expanded: the words after pytest, by
    its target (`unit-go`, and `unit-go 2` for the target's second pytest line)."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in MAKEFILES).replace("\\\n", " ")
    variables = dict(re.findall(r"^([A-Z_]+) *[:?]?= *(.*)$", text, re.M))
    commands: dict[str, list[str]] = {}
    target = ""
    for line in text.splitlines():
        if found := re.match(r"([a-z][a-z-]*):", line):
            target = found[1]
        if not line.startswith("\t") or not re.search(r"/pytest\b", line):
            continue
        expanded = line
        for _ in range(5):  # variables in variables
            expanded = re.sub(r"\$\(([A-Z_]+)\)", lambda m: variables.get(m[1], f"${{{m[1]}}}"), expanded)
        words = shlex.split(expanded)
        start = next(i for i, word in enumerate(words) if word.endswith("/pytest"))
        name, n = target, 2
        while name in commands:
            name, n = f"{target} {n}", n + 1
        commands[name] = words[start + 1 :]
    return commands


COMMANDS = pytest_commands()


def test_the_make_rules_run_pytest() -> None:
    """The reading below sees the rules (one that found none would pass every check)."""
    expressions = {words[i + 1] for words in COMMANDS.values() for i, word in enumerate(words[:-1]) if word == "-m"}
    assert {"not go_binary", "go_binary", "not not_in_image", "not three_nodes", "three_nodes"} <= expressions


@pytest.mark.parametrize("target", COMMANDS)
def test_no_make_rule_picks_tests_by_name(target: str) -> None:
    words = COMMANDS[target]
    named = [word for word in words if "::" in word or re.match(r"(-k|--keyword|--deselect|--ignore)", word)]
    assert named == [], f"select with a mark on the tests (-m) instead of {named}"


@pytest.mark.parametrize("target", COMMANDS)
def test_every_name_in_a_rules_marker_expression_is_registered(target: str) -> None:
    words = COMMANDS[target]
    registered = markers()
    expressions = [words[i + 1] for i, word in enumerate(words[:-1]) if word == "-m"]
    names = {name for expression in expressions for name in re.findall(r"\w+", expression)} - OPERATORS
    assert names <= registered.keys(), f"not in pyproject.toml's markers: {names - registered.keys()}"
    assert all(registered[name] for name in names), "each marker says in one line what it means"


def test_no_hook_gives_tests_a_mark() -> None:
    hooks = [*ROOT.glob("tests/**/conftest.py"), *ROOT.glob("tests/support/*.py")]
    assert len(hooks) >= 3
    adding = [str(p.relative_to(ROOT)) for p in hooks if re.search(r"\.(add_marker|applymarker)\(", p.read_text())]
    assert adding == [], "mark the tests in their own files (pytestmark, a decorator, pytest.param(marks=...))"
