"""`make bench-render` installs chart files whose version is the one install will ask for (issue 41: the bench
named v1.9.0's files while the default chart.version had moved to v1.9.1, and install refused with "the chart
there is version v1.9.0"). The bench itself needs the cluster harness; what it would install is checked here
without one: its override, loaded as the block loads a config, against the versions inside the chart files.

Mutation check (done once): naming v1.9.0's files again in tools/bench_render.install_override (`chart_files("v1.9.0")`)
turned test_the_bench_installs_the_configured_chart_version red ("gateway-helm-v1.9.0.tgz is not v1.9.1").
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import yaml

from tests.support.helpers import load
from tools import bench_render


def chart_version(package: Path) -> str:
    """The version in a packaged chart's Chart.yaml (what `helm show chart` reports, what install compares)."""
    with tarfile.open(package) as archive:
        member = next(m for m in archive.getmembers() if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml"))
        handle = archive.extractfile(member)
        assert handle is not None, member.name
        return str(yaml.safe_load(handle)["version"])


def test_the_bench_installs_the_configured_chart_version() -> None:
    override = yaml.safe_load(bench_render.install_override(bench_render.default_chart_version()))["config"]
    configured = load(override)
    wanted = configured.get("chart.version")
    for key in ("chart.repo.url", "crds.chart_url"):
        package = Path(configured.get(key))
        assert package.is_file(), f"{key}: {package} is not among ../shared/charts"
        assert chart_version(package).lstrip("v") == str(wanted).lstrip("v"), f"{key}: {package} is not {wanted}"
