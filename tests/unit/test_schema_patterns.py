"""The schema's `pattern`s mean what JSON Schema says (ECMA-262: `$` is the end of the value) when the block
checks them in Python, whose `re` lets `$` match before a final newline too. Before, "attack-sqli\\n" passed
rule_tag's ^...$ (and the WAF then refused its settings file) and "v1.9.1\\n" passed image_tag; Polycrate's
gojsonschema and the WAF's Go regexps, like ECMA, refuse both.

Mutation check (done once): config._Validator without its `pattern` validator (jsonschema's own) turned
test_a_trailing_newline_is_refused red for every case.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from envoy_block import config
from tests.support.helpers import load, problems


@pytest.mark.parametrize(
    ("cfg", "path"),
    [
        ({"waf": {"exclude_rule_tags": ["attack-sqli\n"]}}, "config.waf.exclude_rule_tags[0]"),
        ({"image": {"controller": {"tag": "v1.9.1\n"}}}, "config.image.controller.tag"),
        ({"chart": {"version": "v1.9.1\n"}}, "config.chart.version"),
        ({"waf": {"allowed_methods": ["GET\n"]}}, "config.waf.allowed_methods[0]"),
    ],
)
def test_a_trailing_newline_is_refused(cfg: dict[str, Any], path: str) -> None:
    assert any(found.startswith(f"{path}:") for found in problems(cfg)), problems(cfg)


def test_the_values_without_it_pass() -> None:
    load({"waf": {"exclude_rule_tags": ["attack-sqli"], "allowed_methods": ["GET"]}, "chart": {"version": "v1.9.1"}})


@pytest.mark.parametrize(
    ("pattern", "python"),
    [
        ("^a$", r"^a\Z"),
        ("^$|^a$", r"^\Z|^a\Z"),
        ("^[a$]+$", r"^[a$]+\Z"),  # in a class `$` is a character
        (r"^a\$$", r"^a\$\Z"),  # escaped, a character
        (r"^[\]$]$", r"^[\]$]\Z"),  # an escaped ] does not end the class
    ],
)
def test_only_anchors_are_translated(pattern: str, python: str) -> None:
    assert config.python_pattern(pattern) == python
    re.compile(python)
