"""`make unit` runs on Python alone because the tests that run a Go-built binary are marked go_binary in one
place (tests/conftest.py GO_BACKED). A renamed or moved test there would silently fall back into `make unit`
and fail on a fresh clone: every entry must name a file and function that exist."""

from __future__ import annotations

import re

import pytest

from tests.conftest import GO_BACKED, ROOT


@pytest.mark.parametrize("entry", GO_BACKED)
def test_each_go_backed_entry_names_a_test(entry: str) -> None:
    path, _, function = entry.partition("::")
    source = (ROOT / path).read_text(encoding="utf-8")
    assert not function or re.search(rf"^def {re.escape(function)}\(", source, re.M), f"{entry}: no such test"
