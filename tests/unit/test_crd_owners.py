"""The Gateway API CRDs' owners and what install may do with them (lifecycle.crd_owners.decide), one case per
outcome, with CRDs as the platforms install them: RKE2 (Helm release rke2-gateway-api-crd in kube-system,
bundle v1.6.1), k3s (the traefik-crd chart, older bundles), a managed cluster's server-side apply, the
block's own. Mutation: crd-owners-older-refused (tools/mutate.py)."""

from __future__ import annotations

from typing import Any

import pytest

from envoy_block.crds import SOURCE_ANNOTATION
from envoy_block.lifecycle import crd_owners

BLOCK = ("polycrate-envoy",)
REQUIRED = "v1.6.1"


def crd(name: str = "gateways", bundle: str | None = "v1.6.1", **meta: Any) -> dict[str, Any]:
    annotations = {**({crd_owners.BUNDLE_VERSION: bundle} if bundle else {}), **meta.pop("annotations", {})}
    return {
        "metadata": {"name": f"{name}.gateway.networking.k8s.io", "annotations": annotations, **meta},
        "spec": {"group": "gateway.networking.k8s.io"},
    }


def rke2(bundle: str = "v1.6.1", name: str = "gateways") -> dict[str, Any]:
    return crd(
        name,
        bundle,
        annotations={crd_owners.HELM_RELEASE: "rke2-gateway-api-crd", crd_owners.HELM_NAMESPACE: "kube-system"},
        labels={crd_owners.MANAGED_BY: "Helm"},
    )


def k3s(bundle: str = "v1.2.1") -> dict[str, Any]:
    return crd(
        bundle=bundle,
        annotations={crd_owners.HELM_RELEASE: "traefik-crd", crd_owners.HELM_NAMESPACE: "kube-system"},
        labels={crd_owners.MANAGED_BY: "Helm"},
    )


def applied_by(manager: str, bundle: str = "v1.6.1") -> dict[str, Any]:
    return crd(bundle=bundle, managedFields=[{"manager": manager, "operation": "Apply"}])


OURS = crd(
    annotations={SOURCE_ANNOTATION: "abc/12"},
    labels={crd_owners.MANAGED_BY: "polycrate"},
    managedFields=[
        {"manager": "polycrate-envoy", "operation": "Apply"},
        {"manager": "kube-apiserver", "operation": "Update"},
    ],
)
ENVOY_GATEWAY_CRD = {
    "metadata": {"name": "envoyproxies.gateway.envoyproxy.io", "annotations": {crd_owners.HELM_RELEASE: "eg"}},
    "spec": {"group": "gateway.envoyproxy.io"},
}

CASES = [
    ("none-yet", [], False, "apply", ()),
    ("ours", [OURS], False, "apply", ()),
    ("unmarked", [crd()], False, "apply", ()),
    ("other-group-only", [ENVOY_GATEWAY_CRD], False, "apply", ()),
    (
        "rke2-same",
        [rke2(), rke2(name="httproutes")],
        False,
        "leave",
        ("Helm release kube-system/rke2-gateway-api-crd",),
    ),
    ("rke2-newer", [rke2("v1.7.0")], False, "leave", ("Helm release kube-system/rke2-gateway-api-crd",)),
    ("rke2-older", [rke2("v1.5.1")], False, "refuse", ("Helm release kube-system/rke2-gateway-api-crd",)),
    (
        "rke2-one-older",
        [rke2(), rke2("v1.5.1", "httproutes")],
        False,
        "refuse",
        ("Helm release kube-system/rke2-gateway-api-crd",),
    ),
    ("k3s-older", [k3s()], False, "refuse", ("Helm release kube-system/traefik-crd",)),
    ("no-version", [rke2("")], False, "refuse", ("Helm release kube-system/rke2-gateway-api-crd",)),
    ("ssa-manager", [applied_by("doks-addons")], False, "leave", ("server-side apply manager doks-addons",)),
    ("ssa-older", [applied_by("doks-addons", "v1.4.0")], False, "refuse", ("server-side apply manager doks-addons",)),
    (
        "managed-by-tool",
        [crd(labels={crd_owners.MANAGED_BY: "argocd"}, bundle="v1.0.0")],
        False,
        "refuse",
        ("argocd (app.kubernetes.io/managed-by)",),
    ),
    ("take-over-older", [k3s()], True, "take_over", ("Helm release kube-system/traefik-crd",)),
    ("take-over-same", [rke2()], True, "take_over", ("Helm release kube-system/rke2-gateway-api-crd",)),
    ("take-ours", [OURS], True, "apply", ()),
]


@pytest.mark.parametrize(("live", "take", "outcome", "owners"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_outcome(live: list[dict[str, Any]], take: bool, outcome: str, owners: tuple[str, ...]) -> None:
    decided = crd_owners.decide(live, REQUIRED, take, BLOCK)
    assert (decided.outcome, decided.owners) == (outcome, owners)


def test_the_refusal_names_the_owner_the_version_found_and_required_and_the_way_out() -> None:
    message = crd_owners.decide([k3s()], REQUIRED, False, BLOCK).message
    assert "Helm release kube-system/traefik-crd" in message
    assert "found v1.2.1" in message
    assert "v1.6.1" in message
    assert "gateway_api_crds.take_ownership: true" in message
    assert message.endswith("Nothing was changed.")


def test_left_alone_is_reported_with_its_owner() -> None:
    message = crd_owners.decide([rke2()], REQUIRED, False, BLOCK).message
    assert message == (
        "the Gateway API CRDs belong to Helm release kube-system/rke2-gateway-api-crd (bundle v1.6.1, at least "
        "v1.6.1): left alone"
    )


def test_metadata_only_reads_are_judged_by_name() -> None:
    """install reads the CRDs metadata-only (no spec): the group comes from the name."""
    only_meta = {"metadata": rke2("v1.5.1")["metadata"]}
    assert crd_owners.decide([only_meta], REQUIRED, False, BLOCK).outcome == "refuse"
