"""The Gateway API CRDs' owners and what install may do with them (lifecycle.crd_owners.decide), one case per
outcome, with CRDs as the platforms install them: RKE2 (Helm release rke2-gateway-api-crd in kube-system,
bundle v1.6.1), k3s (the traefik-crd chart, older bundles), a managed cluster's server-side apply, the
block's own; and how install carries the outcome: a refusal is one of its problems (nothing changed), a
left-alone owner's CRDs are neither read, stamped nor applied (the CRD settings and source digest without
them). tests/cluster/test_crd_owners.py runs the same on the real API server. Mutations:
crd-owners-older-refused, crd-owners-refusal-stops-install, crd-owners-left-alone-not-applied,
crd-owners-ssa-manager (tools/mutate.py)."""

from __future__ import annotations

from typing import Any

import pytest

from envoy_block import crds, lifecycle
from envoy_block.crds import SOURCE_ANNOTATION
from envoy_block.lifecycle import crd_owners
from tests.support.helpers import load, plan, problems

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


def experimental(name: str, bundle: str = "v1.6.1", channel: str = "experimental") -> dict[str, Any]:
    """A CRD of RKE2's release, in a channel."""
    out = rke2(bundle, name)
    out["metadata"]["annotations"][crds.CHANNEL_ANNOTATION] = channel
    return out


STANDARD_NEEDED = list(crds.GATEWAY_API_STANDARD)
EXPERIMENTAL_NEEDED = list(crds.GATEWAY_API_EXPERIMENTAL)
RKE2_STANDARD = [experimental(n.partition(".")[0], channel="standard") for n in STANDARD_NEEDED]


def test_a_complete_bundle_of_the_channel_is_left_alone() -> None:
    assert (
        crd_owners.decide(RKE2_STANDARD, REQUIRED, False, BLOCK, channel="standard", needed=STANDARD_NEEDED).outcome
        == "leave"
    )


def test_experimental_crds_serve_a_standard_config() -> None:
    owned = [experimental(n.partition(".")[0]) for n in STANDARD_NEEDED]
    assert (
        crd_owners.decide(owned, REQUIRED, False, BLOCK, channel="standard", needed=STANDARD_NEEDED).outcome == "leave"
    )


def test_standard_crds_are_refused_for_an_experimental_config() -> None:
    decided = crd_owners.decide(
        RKE2_STANDARD, REQUIRED, False, BLOCK, channel="experimental", needed=EXPERIMENTAL_NEEDED
    )
    assert decided.outcome == "refuse"
    assert "of the standard channel, not the experimental one configured" in decided.message
    assert "lack xbackends.gateway.networking.x-k8s.io" in decided.message


def test_a_bundle_lacking_a_needed_crd_is_refused() -> None:
    """Applying only the missing one would put a CRD of the block's beside the owner's: its next upgrade
    fails on an object it does not own."""
    decided = crd_owners.decide(RKE2_STANDARD[1:], REQUIRED, False, BLOCK, channel="standard", needed=STANDARD_NEEDED)
    assert decided.outcome == "refuse"
    assert f"lack {STANDARD_NEEDED[0]}" in decided.message


def test_the_experimental_group_counts_too() -> None:
    """A Helm release owning only the x-k8s.io CRDs is another owner as well."""
    owned = crd("xbackends", annotations={crd_owners.HELM_RELEASE: "platform-gwapi"})
    owned["metadata"]["name"] = "xbackends.gateway.networking.x-k8s.io"
    owned["spec"]["group"] = "gateway.networking.x-k8s.io"
    assert crd_owners.decide([owned], REQUIRED, False, BLOCK).owners == ("Helm release platform-gwapi",)


@pytest.mark.parametrize(
    ("entry", "owner"),
    [
        ({"manager": "doks-addons", "operation": "Apply"}, ("server-side apply manager doks-addons",)),
        ({"manager": "polycrate-envoy", "operation": "Apply"}, ()),
        ({"manager": "kube-apiserver", "operation": "Apply"}, ()),
        ({"manager": "helm", "operation": "Update"}, ()),
    ],
    ids=["another-manager", "the-blocks", "the-api-server", "an-update"],
)
def test_server_side_apply_managers(entry: dict[str, str], owner: tuple[str, ...]) -> None:
    assert tuple(crd_owners.owners_of(crd(managedFields=[entry]), BLOCK)) == owner


def _crd_list(*found: dict[str, Any]) -> list[dict[str, Any]]:
    """install_lookups' results with only the CRDs read."""
    return [{"item": {"purpose": "crds"}, "resources": list(found), "api_found": True}]


def test_a_refusal_stops_install_with_nothing_changed() -> None:
    p = plan()
    state = lifecycle.install_state(_crd_list(k3s()), p, crds_current=False)
    assert state["crd_owners"]["outcome"] == "refuse"
    assert state["problems"][0].startswith("the Gateway API CRDs belong to Helm release kube-system/traefik-crd")


def test_left_alone_the_gateway_api_crds_are_neither_read_nor_applied() -> None:
    p = plan()
    state = lifecycle.install_state(_crd_list(*RKE2_STANDARD), p, crds_current=False)
    assert state["problems"] == []
    assert state["crd_owners"]["outcome"] == "leave"
    settings = state["crd_settings"]
    assert settings["gateway_api"]["install"] is False
    assert settings["chart_values"]["crds"]["gatewayAPI"]["enabled"] is False
    assert settings["chart_values"]["crds"]["envoyGateway"]["enabled"] is True
    assert crds.required(settings["gateway_api"]["install"], "standard") == crds.ENVOY_GATEWAY
    # Another source than the plan's: what the block stamps on Envoy Gateway's CRDs says so.
    assert crds.source_digest(settings) != crds.source_digest(p.to_dict()["crds"])


def test_applied_and_taken_over_the_plans_settings_hold() -> None:
    p = plan({"gateway_api_crds": {"take_ownership": True}})
    for found in ([], [k3s()]):
        state = lifecycle.install_state(_crd_list(*found), p, crds_current=False)
        assert state["problems"] == []
        assert state["crd_settings"] == p.to_dict()["crds"]
    assert lifecycle.install_state(_crd_list(k3s()), p, False)["crd_owners"]["outcome"] == "take_over"


def test_not_installed_the_block_touches_none() -> None:
    p = plan({"gateway_api_crds": {"install": False}})
    state = lifecycle.install_state(_crd_list(k3s()), p, crds_current=False)
    assert (state["problems"], state["crd_owners"]["outcome"]) == ([], "not_managed")
    assert state["crd_settings"]["gateway_api"]["install"] is False


def test_the_field_manager_is_the_blocks_instance() -> None:
    """Another block instance's manager is another owner; this instance's is not."""
    p = plan()
    assert lifecycle.block_field_manager(p) == "polycrate-envoy"
    other = crd(managedFields=[{"manager": "polycrate-envoy-2", "operation": "Apply"}])
    observed = lifecycle.InstallObserved.from_results(_crd_list(other))
    assert crd_owners.ownership(p, observed.crds, "polycrate-envoy").owners == (
        "server-side apply manager polycrate-envoy-2",
    )
    assert crd_owners.ownership(p, observed.crds, "polycrate-envoy-2").outcome == "apply"


def test_the_required_release_follows_chart_version() -> None:
    assert plan().to_dict()["crds"]["gateway_api"]["version"] == "v1.6.1"
    v183 = {"chart": {"version": "v1.8.3"}, "image": {"controller": {"tag": "v1.8.3"}}}
    assert plan(v183).to_dict()["crds"]["gateway_api"]["version"] == "v1.5.1"


def test_take_ownership_needs_install() -> None:
    cfg = {"gateway_api_crds": {"install": False, "take_ownership": True}}
    assert [p for p in problems(cfg) if "take_ownership" in p] == [
        "config.gateway_api_crds.take_ownership: applies the block's Gateway API CRDs over another owner's, but "
        "gateway_api_crds.install is false (the block applies none); set install: true to take them over, or "
        "remove take_ownership"
    ]
    assert load({"gateway_api_crds": {"take_ownership": True}}).get("gateway_api_crds.take_ownership") is True


def _uninstall(cfg: dict[str, Any], *found: dict[str, Any]) -> dict[str, Any]:
    p = plan(cfg)
    queries = lifecycle.uninstall_lookups(p)
    assert [q["purpose"] for q in queries].count("crds") == int(bool(p.to_dict()["crds"]["remove_on_uninstall"]))
    observed = lifecycle.UninstallObserved.from_results(_crd_list(*found))
    return lifecycle.decide_uninstall(p, observed).to_dict()


REMOVE = {"uninstall": {"remove_crds": True}}


@pytest.mark.parametrize("take", [False, True], ids=["left-alone", "taken-over"])
def test_remove_crds_keeps_another_owners_gateway_api_crds(take: bool) -> None:
    """Deleting the Gateway API CRDs deletes every route in the cluster and breaks their owner's install:
    uninstall.remove_crds removes the block's own only, also after take_ownership (the owner's marks stay)."""
    decided = _uninstall({**REMOVE, "gateway_api_crds": {"take_ownership": take}}, *RKE2_STANDARD)
    assert decided["remove_crds"] is True
    assert decided["crd_settings"]["gateway_api"]["install"] is False
    assert decided["crds_kept"] == (
        "the Gateway API CRDs belong to Helm release kube-system/rke2-gateway-api-crd: kept "
        "(uninstall.remove_crds removes the block's own CRDs only)"
    )


def test_remove_crds_removes_the_blocks_own() -> None:
    p = plan(REMOVE)
    for found in ([], [OURS]):
        decided = _uninstall(REMOVE, *found)
        assert (decided["crd_settings"], decided["crds_kept"]) == (p.to_dict()["crds"], "")
    assert _uninstall({}, *RKE2_STANDARD)["remove_crds"] is False
