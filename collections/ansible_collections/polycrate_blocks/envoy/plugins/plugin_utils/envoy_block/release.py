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


# The Envoy each Envoy Gateway release deploys by default (the chart's envoyProxy image tag): what the
# proxy fleet should run once that release's controller has taken over.
ENVOY_OF_RELEASE = {
    "v1.8.3": "distroless-v1.38.3",
    "v1.9.0": "distroless-v1.39.0",
    "v1.9.1": "distroless-v1.39.1",
}
# Envoy Gateway's v1.9.0 release notes (release-notes/v1.9.0.yaml, "breaking changes") list what must be
# done before upgrading from v1.8; the ones that concern what the block renders or installs.
UPGRADE_NOTES = {
    (1, 9): "the Gateway API CRDs move to v1.6 with the controller (TCPRoute/UDPRoute are read as v1: install "
    "applies the CRDs first); an empty ClientTrafficPolicy clientIPDetection is rejected; Lua "
    "EnvoyExtensionPolicies are off unless extensionApis.enableLua; the safe-upgrades admission policy moved "
    "into gateway-helm's templates (the block renders neither it nor the crds subchart)",
}

# Upgrading away from one installed release, whatever the target (envoyproxy/gateway PR #9996, v1.9.1's
# release notes): v1.9.1 put back the SDS initial fetch timeout v1.9.0 had set to 0s, and a running Envoy given
# the changed source never receives the certificates again (envoyproxy/envoy#47309).
LEAVING_NOTES = {
    (1, 9, 0): "from v1.9.0, a proxy that keeps running across the controller change loses its TLS certificates "
    "15 s after the new controller's first push (envoyproxy/gateway#9918): the block replaces every proxy fleet "
    "at once (maxSurge 100%) and hands the controller's lease over as soon as the old controller stops, so "
    "leave room for a second fleet while it rolls and hold no proxy pod back; EnvoyTlsCertificateMissing names a "
    "proxy left behind (restart it)",
}


def semver(version: object) -> tuple[int, int, int] | None:
    """(major, minor, patch) of v1.9.0 / 1.9.0 / v1.9.0-rc.1; None for anything else."""
    core = _bare(version).split("-", 1)[0].split("+", 1)[0].split(".")
    if len(core) != 3 or not all(part.isdigit() for part in core):
        return None
    return int(core[0]), int(core[1]), int(core[2])


def installed_version(release: Mapping[str, Any] | None, deployment: Mapping[str, Any] | None) -> str | None:
    """The Envoy Gateway release the cluster runs: the controller Deployment's image tag (what actually
    runs, also after a failed helm upgrade), else the chart version of helm's newest record."""
    for container in ((((deployment or {}).get("spec") or {}).get("template") or {}).get("spec") or {}).get(
        "containers"
    ) or []:
        tag = str(container.get("image", "")).split("@", 1)[0].rpartition(":")[2]
        if semver(tag):
            return tag
    version = (release or {}).get("chart_version")
    return str(version) if semver(version) else None


def upgrade_step(installed: str | None, configured: str, allow_downgrade: bool) -> dict[str, Any]:
    """What moving from the `installed` Envoy Gateway release to the `configured` chart.version means:
    `kind` (fresh, same, patch, upgrade, skip, downgrade, unknown), `problems` (why install must stop: a
    downgrade unless allowed), `warnings` (skipped minor releases, what the release notes ask) and
    `summary` (one line for install's summary)."""
    step = _step(installed, configured, allow_downgrade)
    kind = step["kind"]
    line = {"fresh": f"install {configured}", "same": f"{configured} as installed"}.get(
        kind, f"{kind} {installed} -> {configured}"
    )
    return {**step, "summary": "; ".join([line, *step["warnings"]])}


def _step(installed: str | None, configured: str, allow_downgrade: bool) -> dict[str, Any]:
    step: dict[str, Any] = {"from": installed, "to": configured, "problems": [], "warnings": []}
    old, new = semver(installed), semver(configured)
    if installed is None:
        return {**step, "kind": "fresh"}
    if old is None or new is None:
        return {**step, "kind": "unknown"}
    if new == old:
        return {**step, "kind": "same"}
    if new[:2] == old[:2]:
        kind = "patch" if new > old else "downgrade"
    else:
        kind = "downgrade" if new < old else ("upgrade" if new[0] == old[0] and new[1] == old[1] + 1 else "skip")
    step["kind"] = kind
    if kind == "downgrade" and not allow_downgrade:
        step["problems"].append(
            f"chart.version {configured} is older than the Envoy Gateway {installed} the cluster runs: install "
            f"would put {configured}'s CRDs over the ones {installed} installed (a CRD that drops a version "
            "objects are stored in is refused by the API server; fields the older schema lacks are pruned from "
            f"every object on its next write) and hand the Gateways to a controller that does not know what "
            f"{installed} wrote. Set chart.version back to {installed} (or newer). To downgrade anyway, back up "
            "the gateway.networking.k8s.io and gateway.envoyproxy.io objects and set chart.allow_downgrade: true "
            "for one run. Nothing was changed."
        )
    elif kind == "downgrade":
        step["warnings"].append(f"downgrading Envoy Gateway {installed} -> {configured} (chart.allow_downgrade)")
    if kind in ("patch", "upgrade", "skip") and (note := LEAVING_NOTES.get(old)):
        step["warnings"].append(note)
    if kind in ("upgrade", "skip"):
        for minor in range(old[1] + 1, new[1] + 1) if new[0] == old[0] else ():
            note = UPGRADE_NOTES.get((new[0], minor))
            if note:
                step["warnings"].append(f"Envoy Gateway v{new[0]}.{minor} upgrade notes: {note}")
    if kind == "skip":
        step["warnings"].insert(
            0,
            f"chart.version {configured} skips minor releases between {installed} and {configured}: Envoy "
            "Gateway's release notes list, per minor release, what to do before upgrading from the previous "
            "one; read the breaking changes of every skipped release (release-notes/v<minor>.0.yaml), or "
            "upgrade one minor release at a time.",
        )
    return step


def image_problems(chart_version: str, controller_image: str) -> list[str]:
    """The controller image must be the chart's release: the chart's RBAC and config are that release's
    (v1.9.0's controller on v1.8.3's chart lacks the envoyproxies/status permission)."""
    tag = controller_image.split("@", 1)[0].rpartition(":")[2]
    if semver(tag) is None or semver(tag) == semver(chart_version):
        return []
    return [
        f"image.controller.tag {tag} is not chart.version {chart_version}: the chart's RBAC and settings belong "
        f"to its own controller release. Set image.controller.tag: {chart_version} (and image.proxy.tag to "
        f"that release's Envoy, {ENVOY_OF_RELEASE.get(chart_version, 'see its chart')})."
    ]
