"""Bad input on a real API server: each is one clear error before anything is changed.

Guards: an unreachable API server stops install at its first read of the cluster, and a kubeconfig that does
not exist before that, each with a message naming the kubeconfig; a chart version that does not exist stops
install before the release (and before any object) is touched; a kind not served and a namespace the block
may not create stop it with both problems, each once. The API server's audit log proves that nothing was written.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cluster.common import block_writes
from tests.cluster.conftest import Kube

pytestmark = pytest.mark.playbook


def test_unreachable_api_server(kube: Kube, tmp_path: Path) -> None:
    cfg = yaml.safe_load(kube.cluster.kubeconfig.read_text(encoding="utf-8"))
    cfg["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    bad = tmp_path / "unreachable.yml"
    bad.write_text(yaml.safe_dump(cfg), encoding="utf-8")
    run = kube.playbook("install", kube.config(), kubeconfig=bad)
    assert run.returncode != 0
    assert "Cannot talk to the Kubernetes API server at https://127.0.0.1:1: connection refused" in run.output
    assert str(bad) in run.output


def test_wrong_kubeconfig(kube: Kube, tmp_path: Path) -> None:
    mark = len(kube.cluster.audit())
    run = kube.playbook("install", kube.config(), kubeconfig=tmp_path / "missing.yml")
    assert run.returncode != 0
    assert f"block.kubeconfig.path is {tmp_path / 'missing.yml'}, which does not exist" in run.output
    assert block_writes(kube, mark) == []


def test_a_chart_version_that_does_not_exist(kube: Kube) -> None:
    mark = len(kube.cluster.audit())
    run = kube.playbook("install", kube.config(chart={"version": "v9.9.9"}))
    assert run.returncode != 0
    assert "chart.version v9.9.9" in run.output
    assert "Nothing was changed" in run.output
    assert block_writes(kube, mark) == [], "nothing may be written before the chart is known to exist"


def test_install_stops_once_naming_every_problem(kube: Kube) -> None:
    """A kind the config uses that the cluster does not serve (no VictoriaMetrics operator here) and a missing
    namespace the block may not create: one failure, each problem once, nothing written."""
    mark = len(kube.cluster.audit())
    run = kube.playbook("install", kube.config(create_namespace=False, metrics={"vmpodscrape": {"enabled": True}}))
    assert run.returncode != 0
    assert "install cannot start: 2 problem(s)" in run.output, run.output[-3000:]
    assert run.output.count("does not serve VMPodScrape") == 1, run.output[-3000:]
    assert run.output.count("create_namespace is false") == 1, run.output[-3000:]
    assert block_writes(kube, mark) == []
