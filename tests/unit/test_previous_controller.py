"""Install waits, after helm changed the release, until no pod of the previous controller is left terminating
(roles/envoy_apply/tasks/controller.yml). The Deployment counts its rollout done while the old pod still shuts
down, and that pod keeps the leader lease until it exits: on the real node, the plan applied in that window
was reconciled by the old controller under its old settings (a deploy_type switch left a proxy Deployment in
the controller's namespace that the new, GatewayNamespace controller never looked at again; status then
reported it rolling). Guards: the query selects exactly the chart's controller pods, the lookup keeps only
pods being deleted, and the role waits on it right after the rollout.

Mutation: install-previous-controller (k8s_list keeps every pod) turns the lookup test red.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import lifecycle
from envoy_block.components import controller
from tests.conftest import ROOT
from tests.support.helpers import plan, with_gateway

sys.path.insert(0, str(ROOT / "collections"))
k8s_list: Any = importlib.import_module("ansible_collections.polycrate_blocks.envoy.plugins.modules.k8s_list")

# The packaged charts beside the repo (as tests/support/shared.shared_dir finds them, without the gate's imports:
# this module also runs in Polycrate's image Python).
SHARED = Path(os.environ.get("ENVOY_SHARED_DIR", ROOT.parent / "shared"))
CHARTS = sorted((SHARED / "charts").glob("gateway-helm-v*.tgz"))


def _chart_file(path: Any, name: str) -> str:
    with tarfile.open(path) as tar:
        member = tar.extractfile(f"gateway-helm/{name}")
        assert member is not None, name
        return member.read().decode()


def test_the_charts_are_there() -> None:
    assert len(CHARTS) >= 3, CHARTS


@pytest.mark.parametrize("chart", CHARTS, ids=[c.name for c in CHARTS])
def test_the_query_selects_the_charts_controller_pods(chart: Any) -> None:
    """The pod template's labels as gateway-helm writes them (control-plane, then eg.selectorLabels: the
    chart's name and the release name) for every chart version the block installs or upgrades from."""
    deployment = _chart_file(chart, "templates/envoy-gateway-deployment.yaml")
    helpers = _chart_file(chart, "templates/_helpers.tpl")
    template = deployment.split("template:", 1)[1]
    assert "control-plane: envoy-gateway" in template
    assert 'include "eg.selectorLabels"' in template
    selector_def = helpers.split('define "eg.selectorLabels"', 1)[1].split("end", 1)[0]
    assert re.findall(r"(app\.kubernetes\.io/\w+): ", selector_def) == [
        "app.kubernetes.io/name",
        "app.kubernetes.io/instance",
    ]
    name = yaml.safe_load(_chart_file(chart, "Chart.yaml"))["name"]
    (query,) = lifecycle.previous_controller_query(plan(with_gateway()))
    assert query["label_selectors"] == [
        "control-plane=envoy-gateway",
        f"app.kubernetes.io/name={name}",
        f"app.kubernetes.io/instance={controller.RELEASE_NAME}",
    ]
    assert (query["kind"], query["namespace"], query["terminating_only"]) == ("Pod", "envoy-gateway-system", True)


def test_the_lookup_keeps_only_pods_being_deleted() -> None:
    old = {"metadata": {"name": "envoy-gateway-old", "deletionTimestamp": "2026-12-03T08:23:29Z"}}
    new = {"metadata": {"name": "envoy-gateway-new"}}
    assert k8s_list._kept({"terminating_only": True}, [old, new]) == [old]
    assert k8s_list._kept({"terminating_only": True}, [new]) == []
    assert k8s_list._kept({}, [old, new]) == [old, new]


def test_install_waits_for_it_right_after_the_rollout() -> None:
    tasks = yaml.safe_load((ROOT / "roles/envoy_apply/tasks/controller.yml").read_text(encoding="utf-8"))
    names = [t["name"] for t in tasks]
    stopped = names.index("Wait until the previous controller has stopped")
    free = tasks[stopped + 1]
    assert free["polycrate_blocks.envoy.lease_decision"] == {"plan": "{{ envoy_config_plan }}", "free": True}
    assert free["when"] == "__envoy_apply_found.wait_controller"
    action = (
        ROOT / "collections/ansible_collections/polycrate_blocks/envoy/plugins/action/lease_decision.py"
    ).read_text(encoding="utf-8")
    assert '"preconditions": {"resourceVersion": decided["resource_version"]}' in action
    assert '"Conflict" not in' in action
    settings = plan(with_gateway())
    lease, pods = lifecycle.lease_lookups(settings)
    assert (lease["kind"], lease["name"], lease["namespace"]) == (
        "Lease",
        "5b9825d2.gateway.envoyproxy.io",
        "envoy-gateway-system",
    )
    assert (pods["kind"], pods["label_selectors"]) == ("Pod", list(controller.POD_SELECTOR))


def test_the_controller_rolls_every_replica_before_it_stops_one() -> None:
    """deployment.envoyGateway.strategy: all new replicas Ready before any old one stops, so the proxies move
    to the new controllers in one step; gateway-helm v1.9 renders it."""
    values = plan(with_gateway({"controller": {"replicas": 2}})).helm.values
    assert values["deployment"]["envoyGateway"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0},
    }
    for chart in CHARTS:
        if "v1.9." in chart.name:
            assert ".Values.deployment.envoyGateway.strategy" in _chart_file(
                chart, "templates/envoy-gateway-deployment.yaml"
            )
