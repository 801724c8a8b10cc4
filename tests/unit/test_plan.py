"""Invariants of the plan: dependency order for apply, Gateways-first order for delete, ownership
labels on every object and pod template, deterministic output.

Mutation check (done once): swapping the apply ranks of PROXY_CONFIG and GATEWAYCLASS in plan.Phase
turned test_apply_order_follows_references red; giving GATEWAY a delete rank after POLICY turned
test_delete_order_starts_with_gateways red.
"""

from __future__ import annotations

import os
import subprocess
import sys

from envoy_block import labels, render
from tests.conftest import PKG, ROOT
from tests.support.helpers import plan

EVERYTHING = {
    "default_gateway": {"enabled": True},
    "client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True}},
    "backend_traffic": {"enabled": True},
    "metrics": {"vmpodscrape": {"enabled": True}},
}
KIND_ORDER = ["Namespace", "EnvoyProxy", "GatewayClass", "Gateway", "ClientTrafficPolicy", "VMPodScrape"]


def test_apply_order_follows_references() -> None:
    """EnvoyProxy before GatewayClass (parametersRef) before Gateway before policies (targetRefs)."""
    order = [s.kind for s in plan(EVERYTHING).ordered()]
    positions = [max(i for i, k in enumerate(order) if k == kind) for kind in KIND_ORDER]
    assert positions == sorted(positions), order
    assert order.index("BackendTrafficPolicy") > order.index("Gateway")


def test_delete_order_starts_with_gateways() -> None:
    """Gateways go first, while the controller still runs to remove their proxies; the namespace last."""
    order = [s.kind for s in plan(EVERYTHING).delete_ordered()]
    assert order[0] == "Gateway"
    assert order.index("ClientTrafficPolicy") < order.index("EnvoyProxy") < order.index("GatewayClass")
    assert order[-1] == "Namespace"


def test_every_object_carries_the_standard_and_ownership_labels() -> None:
    p = plan(EVERYTHING)
    for step in p.steps:
        obj_labels = step.obj["metadata"]["labels"]
        for key in ("name", "instance", "component", "part-of", "managed-by", "version"):
            assert f"app.kubernetes.io/{key}" in obj_labels, (step.kind, key)
        assert p.ownership_labels.items() <= obj_labels.items(), step.kind


def test_instance_label_follows_block_name() -> None:
    """Two instances of the block must never prune each other's objects."""
    from envoy_block import builder

    other = builder.plan_from_block({"name": "envoy-internal", "config": {}})
    assert other.ownership_labels["app.kubernetes.io/instance"] == "envoy-internal"
    assert all(s.obj["metadata"]["labels"]["app.kubernetes.io/instance"] == "envoy-internal" for s in other.steps)


def test_proxy_pod_templates_carry_block_labels() -> None:
    for step in plan(EVERYTHING).steps:
        if step.kind == "EnvoyProxy":
            pod = step.obj["spec"]["provider"]["kubernetes"]["envoyDeployment"]["pod"]["labels"]
            assert pod[labels.PROXY_ROLE_LABEL] == labels.PROXY_ROLE
            assert pod["app.kubernetes.io/part-of"] == labels.PART_OF


def test_file_names_are_unique_and_ordered() -> None:
    names = [entry["file"] for entry in plan(EVERYTHING).to_dict()["objects"]]
    assert len(set(names)) == len(names)
    assert names == sorted(names)


def test_render_is_deterministic_across_processes() -> None:
    """Same config, byte-identical files, even with a different hash seed in another interpreter."""
    code = (
        "from tests.support.helpers import plan; from envoy_block import render; import json, sys;"
        f"sys.stdout.write(json.dumps(render.files(plan({EVERYTHING!r}))))"
    )
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join(map(str, (PKG, ROOT)))}
        run = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, cwd=ROOT)
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1]
    import json

    assert json.loads(outputs[0]) == render.files(plan(EVERYTHING))
