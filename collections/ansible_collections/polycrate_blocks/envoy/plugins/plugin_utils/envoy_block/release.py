"""Whether the gateway-helm release in the cluster is the one the plan asks for, read from helm's own record.

kubernetes.core.helm leaves a release alone when its chart name-version, appVersion and user-supplied values
equal the requested ones (its `default_check`); to find that out it starts helm three times and pulls the
chart. The appVersion is known only from the pulled chart and changes for a given chart version only when
that version is re-pushed, so install compares the rest and leaves re-pushes to the operator. The
release record (helm's storage Secret, decoded by polycrate_blocks.envoy.k8s_list) holds the same facts,
so install reads it with everything else and runs the helm task only when the answer is "differs". Any doubt
(no record or one that cannot be read, another status, another chart, storage other than Secrets) means
"run helm". The one stricter rule: a release that is not `deployed` (failed, pending) is handed to helm
again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CHART_NAME = "gateway-helm"


def _bare(version: object) -> str:
    return str(version or "").removeprefix("v")


def differences(release: Mapping[str, Any] | None, helm: Mapping[str, Any]) -> list[str]:
    """What keeps `release` (k8s_list's decoded record, or None) from being the plan's `helm` release;
    empty when helm would change nothing."""
    if release is None:
        return [f"no release {helm['name']} in namespace {helm['namespace']}"]
    out = []
    if release.get("status") != "deployed":
        out.append(f"its status is {release.get('status')}")
    if release.get("chart") != CHART_NAME:
        out.append(f"it runs chart {release.get('chart')}, not {CHART_NAME}")
    if _bare(release.get("chart_version")) != _bare(helm["chart_version"]):
        out.append(f"it runs chart version {release.get('chart_version')}, not {helm['chart_version']}")
    # Plain equality, as kubernetes.core.helm compares `helm get values` with release_values (1 == 1.0).
    if (release.get("values") or {}) != helm["values"]:
        out.append("its values differ from the plan's (artifacts/helm/values.yaml)")
    return out
