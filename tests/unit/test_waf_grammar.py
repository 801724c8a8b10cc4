"""The WAF service checks some values of its settings file again (waf/internal/settings/settings.go: methodRe,
mediaRe, tagRe); they must be config.schema.json's grammars, or the service refuses a file the block rendered
(a crash-looping WAF) or takes one the block never would. Issue 41: rule_tag had drifted, the schema banning
control characters and Go only newlines.

Two checks, so neither side can move alone: the Go patterns are the schema's $defs patterns character for
character, and testdata/grammar.json's table (which settings_test.go TestGrammarMatchesTheSchema runs through
the service's Check) gets the same verdicts from the block's schema validation here.

Mutation check (done once): settings.go's tagRe back to `^[^"\\\\\\n]+$` turned
test_go_checks_the_schemas_grammars red here and TestGrammarMatchesTheSchema red in Go.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from envoy_block import config
from tests.conftest import ROOT

SETTINGS_GO = ROOT / "waf/internal/settings/settings.go"
TABLE = ROOT / "waf/internal/settings/testdata/grammar.json"
# settings.go's variable for each $defs grammar it checks again.
GO_PATTERNS = {"http_method": "methodRe", "media_type": "mediaRe", "rule_tag": "tagRe"}


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((ROOT / "config.schema.json").read_text(encoding="utf-8"))
    return schema


def _table() -> list[tuple[str, str, bool]]:
    values = json.loads(TABLE.read_text(encoding="utf-8"))["values"]
    return [
        (key, value, accept)
        for key, verdicts in values.items()
        for accept, listed in ((True, verdicts["accept"]), (False, verdicts["refuse"]))
        for value in listed
    ]


@pytest.mark.parametrize(("name", "variable"), GO_PATTERNS.items())
def test_go_checks_the_schemas_grammars(name: str, variable: str) -> None:
    found = re.search(rf"\b{variable}\s*=\s*regexp\.MustCompile\(`([^`]*)`\)", SETTINGS_GO.read_text(encoding="utf-8"))
    assert found, f"settings.go has no {variable}"
    assert found.group(1) == _schema()["$defs"][name]["pattern"]


def test_the_table_covers_every_grammar() -> None:
    """Each grammar Go checks again has values in the table, under the waf key whose items it checks."""
    waf = _schema()["properties"]["waf"]["properties"]
    keyed = {key: waf[key]["items"]["$ref"].rsplit("/", 1)[1] for key in {key for key, _, _ in _table()}}
    assert sorted(keyed.values()) == sorted(GO_PATTERNS)


@pytest.mark.parametrize(("key", "value", "accept"), _table())
def test_the_schema_gives_the_tables_verdict(key: str, value: str, accept: bool) -> None:
    found = config.shape_problems({"waf": {key: [value]}}, config.load_schema())
    assert (not found) == accept, [str(problem) for problem in found]
