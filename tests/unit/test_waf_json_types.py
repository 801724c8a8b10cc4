"""The WAF parses every application/<name>+json body as JSON and, by default, lets those media types pass CRS
920420 as it lets application/json (waf/internal/settings: rules 200006 and 200007, DefaultContentTypes). The
Go table tests that prove it are run from here as well as by `make waf-test`, so that tools/mutate.py can
judge a change to settings.go: the envoy-waf binary a mutation's copy of the tree links was built before the
mutation, so only a test that compiles the mutated source sees it (mutations waf-json-suffix-parsed and
waf-json-suffix-default). The same rules on the real CRS: waf/internal/server TestJSONSuffixTypes.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import ROOT

# Needs Go (the toolchain the WAF is built with), as make unit-go's other tests need its binaries.
pytestmark = [pytest.mark.go_binary, pytest.mark.not_in_image]

TESTS = "TestJSONMediaTypes|TestDefaultContentTypes|TestGrammarMatchesTheSchema"


def test_the_settings_tables_pass() -> None:
    go = shutil.which("go")
    assert go, "go is not on PATH: the WAF's settings tests need it"
    done = subprocess.run(
        [go, "test", "-count=1", "-run", TESTS, "./internal/settings/"],
        cwd=ROOT / "waf",
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok" in done.stdout, done.stdout
