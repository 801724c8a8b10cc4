"""Gateway API CRDs that belong to someone else, on the REAL kube-apiserver, through the REAL install playbook
(lifecycle.crd_owners wired into install_state): with the CRDs pre-installed the way platforms install them,

- RKE2: a Helm release `rke2-gateway-api-crd` in kube-system (meta.helm.sh/release-* annotations,
  app.kubernetes.io/managed-by: Helm, written by helm's field manager),
- k3s: its `traefik-crd` chart, the same way,
- a managed cluster: a plain server-side apply by a manager of its own (`platform-addons`),

install leaves them alone when they are the release's Gateway API v1.6.1 (not one of them written: same
generation, annotations and labels, no stamp of the block's, no field of its manager; Envoy Gateway's CRDs
applied beside them; a second run changes nothing; uninstall with remove_crds removes only Envoy
Gateway's), refuses before any change when they are older (the real v1.5.1 bundle of gateway-crds-helm
v1.8.3: the message names the owner and v1.6.1, and neither a CRD nor the namespace was written), and with
gateway_api_crds.take_ownership applies v1.6.1 over them.

Each owner runs the steps where its outcome can differ (STEPS; each playbook run costs 20 to 60 s on a busy
machine): RKE2 all of them; a managed cluster's manager is found another way (its server-side apply fields,
not Helm's annotations), so it runs every step that reads the owner (left alone, uninstall, refused); k3s is
found exactly as RKE2 is, so only the refusal shows that its release is named.

Needs only the API server (the `cluster` fixture, no controller: controller.install false, waits off, the
CRDs from ../shared/crds as crds.directory). The block goes into a namespace of its own; each scenario starts
by deleting the Gateway API CRDs the cluster holds and leaves none behind (the next install applies them).
Unit cases of the same decision: tests/unit/test_crd_owners.py.
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import crds
from envoy_block.lifecycle import crd_owners
from tests.cluster.conftest import Kube
from tests.harness.api import Api
from tests.harness.cluster import Cluster
from tests.support import apiserver
from tests.support.apiserver import CRDS, request
from tests.support.shared import shared_dir

NAMESPACE = "crd-owners-block"
REQUIRED = "v1.6.1"
OLDER_CHART = "gateway-crds-helm-v1.8.3.tgz"  # its standard Gateway API bundle is v1.5.1
OLDER = "v1.5.1"
PLATFORM_MANAGER = "platform-addons"
CONFIG: dict[str, Any] = {
    "namespace": NAMESPACE,
    "controller": {"install": False},
    "wait": {"enabled": False},
    "crds": {"directory": str(shared_dir() / "crds")},
}


def current_crds() -> list[dict[str, Any]]:
    """The standard channel of Gateway API v1.6.1, as ../shared/crds holds it."""
    docs = yaml.safe_load_all((shared_dir() / "crds" / "gateway-api" / "standard-install.yaml").read_text("utf-8"))
    return [d for d in docs if d and d.get("kind") == "CustomResourceDefinition"]


def older_crds() -> list[dict[str, Any]]:
    """The standard channel of Gateway API v1.5.1: gateway-crds-helm v1.8.3's template without its condition."""
    with tarfile.open(shared_dir() / "charts" / OLDER_CHART) as chart:
        member = chart.extractfile("gateway-crds-helm/templates/standard-gatewayapi-crds.yaml")
        assert member is not None
        text = member.read().decode()
    body = "\n".join(line for line in text.splitlines() if not line.startswith("{{"))
    found = [d for d in yaml.safe_load_all(body) if d and d.get("kind") == "CustomResourceDefinition"]
    assert {d["metadata"]["annotations"][crd_owners.BUNDLE_VERSION] for d in found} == {OLDER}
    return found


def helm_release(release: str) -> Callable[[Api, dict[str, Any]], None]:
    """Install a CRD as Helm does for a release (RKE2's helm-controller, k3s's): created by helm's field
    manager with the release's annotations and managed-by label."""

    def install(api: Api, crd: dict[str, Any]) -> None:
        meta = crd["metadata"]
        meta["annotations"] = {
            **meta.get("annotations", {}),
            crd_owners.HELM_RELEASE: release,
            crd_owners.HELM_NAMESPACE: "kube-system",
        }
        meta["labels"] = {**meta.get("labels", {}), crd_owners.MANAGED_BY: "Helm"}
        code, body = request(api, "POST", CRDS, crd, fieldManager="helm")
        assert code == 201, (meta["name"], code, body.get("message"))

    return install


def server_side_apply(api: Api, crd: dict[str, Any]) -> None:
    """Install a CRD as a managed cluster's add-on manager does: a plain server-side apply of its own."""
    api._call(
        "PATCH",
        f"{CRDS}/{crd['metadata']['name']}",
        params={"fieldManager": PLATFORM_MANAGER, "force": "true"},
        data=yaml.safe_dump(crd),
        headers={"Content-Type": "application/apply-patch+yaml"},
    )


OWNERS: dict[str, tuple[Callable[[Api, dict[str, Any]], None], str]] = {
    "rke2": (helm_release("rke2-gateway-api-crd"), "Helm release kube-system/rke2-gateway-api-crd"),
    "k3s": (helm_release("traefik-crd"), "Helm release kube-system/traefik-crd"),
    "managed": (server_side_apply, f"server-side apply manager {PLATFORM_MANAGER}"),
}
# current: v1.6.1 left alone; rerun: a second install changes nothing; uninstall: remove_crds keeps the owner's;
# older: v1.5.1 refused; take: take_ownership applies v1.6.1 over them.
STEPS: dict[str, frozenset[str]] = {
    "rke2": frozenset({"current", "rerun", "uninstall", "older", "take"}),
    "managed": frozenset({"current", "uninstall", "older"}),
    "k3s": frozenset({"older"}),
}


def gateway_api_crds(api: Api) -> dict[str, dict[str, Any]]:
    groups = crds.GATEWAY_API_GROUPS
    return {c["metadata"]["name"]: c for c in api.items(CRDS) if c["spec"]["group"] in groups}


def remove_gateway_api_crds(api: Api) -> None:
    names = list(gateway_api_crds(api))
    for name in names:
        apiserver.delete(api, f"{CRDS}/{name}")
    apiserver.wait(lambda: not gateway_api_crds(api), "the Gateway API CRDs gone", 120)


def written(api: Api) -> dict[str, tuple[Any, ...]]:
    """What a writer of the Gateway API CRDs changes: each one's generation (its spec), annotations and labels
    (the API server's own status writes move the resourceVersion, not these)."""
    return {
        name: (c["metadata"]["generation"], c["metadata"].get("annotations"), c["metadata"].get("labels"))
        for name, c in gateway_api_crds(api).items()
    }


def preinstall(api: Api, owner: str, definitions: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    """The platform's CRDs, Established; what they hold (written)."""
    remove_gateway_api_crds(api)
    install, _ = OWNERS[owner]
    for crd in definitions:
        install(api, crd)
    for crd in definitions:
        apiserver.ensure_crd(api, crd)
    return written(api)


def untouched(api: Api, before: dict[str, tuple[Any, ...]]) -> None:
    """Not one of the platform's CRDs was written by the block: the same spec generation, annotations and
    labels, no stamp of the block's, no field of its manager."""
    assert written(api) == before
    for name, found in gateway_api_crds(api).items():
        assert crds.SOURCE_ANNOTATION not in (found["metadata"].get("annotations") or {}), name
        managers = {m.get("manager") for m in found["metadata"].get("managedFields") or []}
        assert "polycrate-envoy" not in managers, (name, managers)


def summary_line(output: str, prefix: str) -> str:
    """The install summary's item that starts with `prefix`, its folded lines joined (the callback prints the
    summary as YAML, which wraps a long item over several lines)."""
    items = re.split(r"\n\s*- ", output)
    found = [" ".join(item.split()) for item in items if prefix in item]
    assert found, output[-3000:]
    return found[-1]


def flat(output: str) -> str:
    """The output with every run of whitespace as one space: the callback folds a long message over lines."""
    return " ".join(output.split())


def check_crd_owners(kube: Kube, owner: str) -> list[str]:
    """The three outcomes for one way of owning the CRDs, against any API server the Kube's admin client and
    kubeconfig reach; leaves no Gateway API CRD and no block behind. Returns what each step proved."""
    api, named, steps = kube.api, OWNERS[owner][1], STEPS[owner]
    seen: list[str] = []
    try:
        if "current" in steps:
            # 1. The platform's v1.6.1: left alone, Envoy Gateway's CRDs applied, a second run changes nothing.
            before = preinstall(api, owner, current_crds())
            run = kube.playbook("install", CONFIG).ok()
            untouched(api, before)
            line = summary_line(run.output, "Gateway API CRDs: ")
            assert f"belong to {named} (bundle {REQUIRED}, at least {REQUIRED}): left alone" in line, line
            held = {c["metadata"]["name"]: c for c in api.items(CRDS)}
            for name in crds.ENVOY_GATEWAY:
                assert crds.SOURCE_ANNOTATION in held[name]["metadata"]["annotations"], name
            seen.append(f"{owner} {REQUIRED}: left alone, Envoy Gateway's CRDs applied beside them")
        if "rerun" in steps:
            again = kube.playbook("install", CONFIG).ok()
            assert again.recap["changed"] == 0, again.output[-3000:]
            untouched(api, before)
            seen.append(f"{owner} {REQUIRED}: re-run changed=0")
        if "uninstall" in steps:
            # uninstall.remove_crds removes the block's own CRDs only: the platform's stay as they were.
            removed = kube.playbook("uninstall", {**CONFIG, "uninstall": {"remove_crds": True}}).ok()
            assert f"the Gateway API CRDs belong to {named}: kept" in flat(removed.output), removed.output[-3000:]
            untouched(api, before)
            left = {c["metadata"]["name"] for c in api.items(CRDS)}
            assert not left & set(crds.ENVOY_GATEWAY), "the block's own CRDs are removed"
            assert request(api, "GET", f"/api/v1/namespaces/{NAMESPACE}")[0] == 404
            seen.append(f"{owner} {REQUIRED}: uninstall with remove_crds kept them, removed Envoy Gateway's")

        # 2. The platform's older bundle: refused before any change.
        before = preinstall(api, owner, older_crds())
        refused = kube.playbook("install", CONFIG)
        assert refused.returncode != 0, refused.output[-3000:]
        said = flat(refused.output)
        assert f"the Gateway API CRDs belong to {named} and are older than the {REQUIRED}" in said, said[-3000:]
        assert f"found {OLDER}" in said
        assert "gateway_api_crds.take_ownership: true" in said
        untouched(api, before)
        assert request(api, "GET", f"/api/v1/namespaces/{NAMESPACE}")[0] == 404, "the namespace was created"
        seen.append(f"{owner} {OLDER}: refused, nothing written")
        if "take" not in steps:
            return seen

        # 3. Taken over on request: the block's v1.6.1 over the owner's, with the block's stamp and manager.
        taken = kube.playbook("install", {**CONFIG, "gateway_api_crds": {"take_ownership": True}}).ok()
        line = summary_line(taken.output, "Gateway API CRDs: ")
        assert f"gateway_api_crds.take_ownership: applying the Gateway API CRDs {REQUIRED} over {named}" in line
        now = gateway_api_crds(api)
        assert set(now) == {c["metadata"]["name"] for c in current_crds()}
        for name, found in now.items():
            annotations = found["metadata"]["annotations"]
            assert annotations[crd_owners.BUNDLE_VERSION] == REQUIRED, name
            assert crds.SOURCE_ANNOTATION in annotations, name
            managers = {m.get("manager") for m in found["metadata"].get("managedFields") or []}
            assert "polycrate-envoy" in managers, (name, managers)
        seen.append(f"{owner} {OLDER} with take_ownership: v1.6.1 applied over it")
    finally:
        if request(api, "GET", f"/api/v1/namespaces/{NAMESPACE}")[0] == 200:
            kube.playbook("uninstall", CONFIG).ok()
        remove_gateway_api_crds(api)
    return seen


@pytest.mark.parametrize("owner", sorted(OWNERS))
def test_crds_of_another_owner(cluster: Cluster, tmp_path: Path, owner: str) -> None:
    print("\n".join(check_crd_owners(Kube(cluster, None, tmp_path), owner)))
