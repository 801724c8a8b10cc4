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
import json
import os
import re
import sys
import tarfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar

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
    """One task after helm: the rollout, then the previous controller's pods, then the lease, in one module run
    (lifecycle.controller_waits ahead of the lease lookups); each wait up to the config's wait.timeout, no `until`
    loop that starts a module per poll."""
    tasks = yaml.safe_load((ROOT / "roles/envoy_apply/tasks/controller.yml").read_text(encoding="utf-8"))
    names = [t["name"] for t in tasks]
    wait = tasks[names.index("Install or upgrade gateway-helm") + 2]
    assert wait["name"] == "Wait for the controller rollout and free a stopped controller's lease"
    decision = wait["polycrate_blocks.envoy.lease_decision"]
    assert decision["waits"] == "{{ __envoy_apply_found.controller_waits }}"
    assert decision["wait_timeout"] == "{{ envoy_config_plan.wait.timeout }}"
    assert "until" not in wait
    assert wait["when"] == "__envoy_apply_found.wait_controller"
    assert not any("kubernetes.core.k8s_info" in t or "polycrate_blocks.envoy.k8s_list" in t for t in tasks), (
        "no module run of its own per wait"
    )
    rollout, previous = lifecycle.controller_waits(plan(with_gateway()))
    assert (rollout["kind"], rollout["name"], rollout["namespace"]) == (
        "Deployment",
        controller.DEPLOYMENT,
        "envoy-gateway-system",
    )
    assert rollout["wait_ready"] is True, "kubernetes.core's Deployment readiness, not Available alone"
    assert "wait_condition" not in rollout
    assert [previous] == lifecycle.previous_controller_query(plan(with_gateway()))


def test_a_ready_wait_uses_the_kinds_readiness_even_for_metadata(monkeypatch: Any) -> None:
    """wait_ready: the lookup waits (kubernetes.core's waiter without a condition: its kind's readiness, what
    k8s_info's `wait` does), also for a metadata-only query (which otherwise lists without waiting); a timeout
    fails naming the object."""
    found: list[dict[str, Any]] = []

    class Svc:
        def find(self, kind: str, api_version: str, **kwargs: Any) -> dict[str, Any]:
            found.append({"kind": kind, **kwargs})
            if kwargs["wait_timeout"] == 0:
                raise k8s_list.CoreException("Failed to gather information about Deployment(s)")
            return {"api_found": True, "resources": [{"metadata": {"name": "envoy-gateway"}, "status": {}}]}

    query = lifecycle.controller_waits(plan(with_gateway()))[0]
    failed: list[str] = []

    class Module:
        check_mode = False
        params: ClassVar[dict[str, Any]] = {
            "queries": [query],
            "label_selectors": [],
            "metadata_only": False,
            "wait_timeout": 7,
            "wait_sleep": 1,
        }

        def fail_json(self, msg: str, **kwargs: Any) -> None:
            failed.append(msg)
            raise SystemExit(1)

        def exit_json(self, **kwargs: Any) -> None:
            raise SystemExit(0)

    monkeypatch.setattr(k8s_list, "AnsibleK8SModule", lambda **kwargs: Module())
    monkeypatch.setattr(k8s_list, "get_api_client", lambda module: SimpleNamespace(configuration=None))
    monkeypatch.setattr(k8s_list, "K8sService", lambda client, module: Svc())
    with pytest.raises(SystemExit):
        k8s_list.main()
    (call,) = found
    assert call["wait"] is True
    assert call["condition"] is None, "no condition: the waiter falls back to the kind's readiness"
    assert call["wait_timeout"] == 7
    Module.params = {**Module.params, "wait_timeout": 0}
    with pytest.raises(SystemExit):
        k8s_list.main()
    assert failed == [
        "Deployment envoy-gateway-system/envoy-gateway is not ready after 0 s (Failed to gather information about "
        "Deployment(s)): `status` shows its conditions"
    ]


def test_the_wait_ends_when_no_controller_pod_is_terminating(monkeypatch: Any) -> None:
    """wait_absent with terminating_only: the new replicas stay, so the wait is over when the old pod is gone,
    not when the query finds nothing."""
    (query,) = lifecycle.previous_controller_query(plan(with_gateway()))
    assert query["wait_absent"]
    assert query["terminating_only"]
    old = {"metadata": {"name": "envoy-gateway-old", "deletionTimestamp": "2026-12-03T08:23:29Z"}}
    new = {"metadata": {"name": "envoy-gateway-new"}}
    answers = [[old, new], [old, new], [new]]
    calls: list[int] = []

    def listed(svc: Any, query: Any, selectors: Any) -> dict[str, Any]:
        calls.append(1)
        return {"resources": answers[min(len(calls), len(answers)) - 1], "api_found": True}

    monkeypatch.setattr(k8s_list, "_metadata_list", listed)
    monkeypatch.setattr(k8s_list.time, "sleep", lambda s: None)
    assert k8s_list._until_absent(None, query, [], timeout=60, sleep=1)["resources"] == []
    assert len(calls) == 3
    calls.clear()
    answers[:] = [[old, new]]
    assert k8s_list._until_absent(None, query, [], timeout=0, sleep=1)["resources"] == [old], "timed out: what is left"


def _lease(holder: str | None, version: str = "4711") -> dict[str, Any]:
    return {
        "metadata": {"name": controller.LEADER_LEASE, "resourceVersion": version},
        "spec": {"holderIdentity": holder} if holder is not None else {},
    }


def _pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}}


@pytest.mark.parametrize(
    ("leases", "pods", "freed"),
    [
        # The upgrade's case: the old leader's pod is gone, the new ones wait out its lease.
        (
            [_lease("envoy-gateway-7d9f-old_2b6c1e0a-9c1f-4f1e-8a34-0b1d2c3e4f50")],
            [_pod("envoy-gateway-5c4b-new1"), _pod("envoy-gateway-5c4b-new2")],
            {
                "holder": "envoy-gateway-7d9f-old_2b6c1e0a-9c1f-4f1e-8a34-0b1d2c3e4f50",
                "pod": "envoy-gateway-7d9f-old",
                "resource_version": "4711",
            },
        ),
        # A live replica leads (a second install, or a new pod took the lease already): left alone.
        ([_lease("envoy-gateway-5c4b-new1_0f0e")], [_pod("envoy-gateway-5c4b-new1")], {}),
        # No lease yet (the first install), or nobody holds it: nothing to free.
        ([], [_pod("envoy-gateway-5c4b-new1")], {}),
        ([_lease(None)], [], {}),
        ([_lease("")], [], {}),
    ],
    ids=["holder-gone", "holder-alive", "no-lease", "no-holder", "empty-holder"],
)
def test_install_frees_only_a_stopped_controllers_lease(
    leases: list[dict[str, Any]], pods: list[dict[str, Any]], freed: dict[str, Any]
) -> None:
    assert lifecycle.stale_lease(leases, pods) == freed


def test_install_frees_it_after_the_old_controller_stopped_on_its_version() -> None:
    """Right after the wait for the old pods: the decision read, then the Lease deleted on the resourceVersion
    read (a lease a new leader took meanwhile is not deleted), a conflict not a failure (the action does both)."""
    tasks = yaml.safe_load((ROOT / "roles/envoy_apply/tasks/controller.yml").read_text(encoding="utf-8"))
    (free,) = [t for t in tasks if "polycrate_blocks.envoy.lease_decision" in t]
    args = free["polycrate_blocks.envoy.lease_decision"]
    assert (args["plan"], args["free"]) == ("{{ envoy_config_plan }}", True)
    assert free["when"] == "__envoy_apply_found.wait_controller"
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


def _lease_action(
    monkeypatch: pytest.MonkeyPatch, holder: str, deleted: dict[str, Any]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The lease_decision action with `free`, as Ansible runs it: the read answered with a lease `holder` holds
    and one live controller pod; the deletion answered with `deleted`. Its result and the modules it ran."""
    monkeypatch.setattr(importlib.import_module("ansible.plugins.action").ActionBase, "run", lambda *a, **k: {})
    module = importlib.import_module("ansible_collections.polycrate_blocks.envoy.plugins.action.lease_decision")
    settings = plan(with_gateway())
    waits = lifecycle.controller_waits(settings)
    # The waits' own results come first in the read (a Deployment, no terminating pod), then the lease's.
    waited = [{"resources": [{"metadata": {"name": "envoy-gateway"}}]}, {"resources": []}]
    read = {"results": [*waited, {"resources": [_lease(holder)]}, {"resources": [_pod("envoy-gateway-5c4b-new1")]}]}
    asked: list[dict[str, Any]] = []

    def read_cluster(action: Any, module_args: dict[str, Any], task_vars: Any) -> dict[str, Any]:
        asked.append(module_args)
        return read

    monkeypatch.setattr(module, "read_cluster", read_cluster)
    action = module.ActionModule.__new__(module.ActionModule)
    fact = json.loads(json.dumps(settings.to_dict()))
    args = {"plan": fact, "free": True, "waits": waits, "wait_timeout": 33}
    action._task = SimpleNamespace(args=args, action="polycrate_blocks.envoy.lease_decision")
    ran: list[dict[str, Any]] = []

    def execute(module_name: str, module_args: dict[str, Any], task_vars: Any) -> dict[str, Any]:
        ran.append({"module": module_name, **module_args})
        return deleted

    action._execute_module = execute
    result = action.run(task_vars={})
    (one,) = asked
    assert one["queries"] == [*waits, *lifecycle.lease_lookups(settings)], "the waits, then the lease, in one run"
    assert one["wait_timeout"] == 33
    return result, ran


def test_install_deletes_a_stopped_controllers_lease_on_the_version_it_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation check (done once, restored): deleting without the resourceVersion precondition, or failing on a
    409 Conflict, turned this red."""
    result, ran = _lease_action(monkeypatch, "envoy-gateway-7d9f-old_2b6c", {"changed": True})
    assert result["freed"] is True
    assert result["changed"] is True
    (delete,) = ran
    assert (delete["module"], delete["kind"], delete["name"], delete["state"]) == (
        "kubernetes.core.k8s",
        "Lease",
        controller.LEADER_LEASE,
        "absent",
    )
    assert delete["delete_options"] == {"preconditions": {"resourceVersion": "4711"}}
    # A new leader took it between the read and the delete: not a fault, nothing deleted.
    taken, _ = _lease_action(monkeypatch, "envoy-gateway-7d9f-old_2b6c", {"failed": True, "msg": "Conflict (409)"})
    assert not taken.get("failed")
    assert taken["freed"] is False
    broken, _ = _lease_action(monkeypatch, "envoy-gateway-7d9f-old_2b6c", {"failed": True, "msg": "Forbidden"})
    assert broken["failed"] is True
    assert "Forbidden" in broken["msg"]
    # Its holder alive: left alone, no module run.
    alive, ran = _lease_action(monkeypatch, "envoy-gateway-5c4b-new1_0f0e", {"changed": True})
    assert ran == []
    assert alive["stale"] is False
