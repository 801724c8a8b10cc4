"""When install may leave the gateway-helm release alone, decided from helm's own release record.

Guards: helm is skipped only when kubernetes.core.helm itself would change nothing (same chart name and
version, the same user-supplied values) and the release is `deployed`; every other case (no record, failed
or pending, another chart, another version, any value changed, however deep) runs helm, and says why.
Mutation checks (done once): comparing only the top-level keys of the values turned
test_any_difference_runs_helm red; dropping the status rule turned it red as well.
"""

from __future__ import annotations

import copy
from typing import Any

from envoy_block import release
from tests.support.helpers import plan


def _record(helm: dict[str, Any], **over: Any) -> dict[str, Any]:
    """What polycrate_blocks.envoy.k8s_list decodes from helm's storage Secret for the plan's release."""
    return {
        "name": helm["name"],
        "namespace": helm["namespace"],
        "revision": 1,
        "status": "deployed",
        "chart": "gateway-helm",
        "chart_version": helm["chart_version"],
        "app_version": helm["chart_version"],
        "values": copy.deepcopy(helm["values"]),
        **over,
    }


def test_the_release_helm_would_not_change_is_left_alone() -> None:
    helm = plan().to_dict()["helm"]
    assert release.differences(_record(helm), helm) == []
    assert release.differences(_record(helm, chart_version="1.9.0"), {**helm, "chart_version": "v1.9.0"}) == [], (
        "chart.version with or without the v, as helm resolves it"
    )


def test_any_difference_runs_helm() -> None:
    helm = plan().to_dict()["helm"]
    deep = copy.deepcopy(helm["values"])
    deep["config"]["envoyGateway"]["provider"]["kubernetes"]["deploy"]["type"] = "GatewayNamespace"
    cases = {
        "no release": (None, "no release envoy-gateway"),
        "failed": (_record(helm, status="failed"), "status is failed"),
        "pending": (_record(helm, status="pending-upgrade"), "status is pending-upgrade"),
        "other chart": (_record(helm, chart="other"), "chart other"),
        "older version": (_record(helm, chart_version="v1.8.0"), "version v1.8.0"),
        "a deep value": (_record(helm, values=deep), "values differ"),
        "a value more": (_record(helm, values={**helm["values"], "extra": 1}), "values differ"),
        "no values": (_record(helm, values={}), "values differ"),
    }
    for case, (record, why) in cases.items():
        found = release.differences(record, helm)
        assert found, case
        assert why in " ".join(found), (case, found)
