"""The real charts of ../shared/charts rendered by the real helm (`make tools` builds it into .tools/bin): what
a test marked go_binary (its own mark: `make unit-go` runs it) compares the block's values or CRDs with."""

from __future__ import annotations

import subprocess

from tests.support.shared import ROOT, shared_dir

HELM = ROOT / ".tools/bin/helm"


def helm_template(chart: str, *args: str, release: str = "crds") -> str:
    """`helm template RELEASE ../shared/charts/CHART ARGS...`: the rendered documents as text."""
    return subprocess.run(
        [str(HELM), "template", release, str(shared_dir() / "charts" / chart), *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
