"""The Envoy Gateway release the block is built for is written once in Python, `envoy_block.ENVOY_GATEWAY_VERSION`,
and the Python that needs it reads it from there. The files that cannot import it (the schema's two defaults,
block.poly, tools/build-go.sh) are read here and must name the same release, so a bump that misses one fails
(issue 41: the version sat in six places, and tools/bench_render.py was left on v1.9.0 unseen).

The objects' `app.kubernetes.io/version` is not that constant but the release the config installs
(chart.version): an install of v1.8.3 was labelled v1.9.1.

Mutation check (done once): labels.standard stamping ENVOY_GATEWAY_VERSION again turned
test_labels_follow_the_configured_chart_version red; chart.version's schema default set to v1.9.0 turned
test_every_file_names_the_same_release red.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from envoy_block import ENVOY_GATEWAY_VERSION, labels, release
from tests.conftest import ROOT
from tests.support.helpers import objects, walk

# A label value as the API server accepts it (apimachinery's IsValidLabelValue).
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _written_elsewhere() -> dict[str, str]:
    """Where else the release is written, by the file's own syntax."""
    schema = json.loads((ROOT / "config.schema.json").read_text(encoding="utf-8"))["properties"]
    controller_image = schema["image"]["properties"]["controller"]["default"]
    poly_text = (ROOT / "block.poly").read_text(encoding="utf-8")
    build_go = (ROOT / "tools/build-go.sh").read_text(encoding="utf-8")
    # The build of the default controller and egctl, not the upgrade sources' (envoy-gateway-v1.9.0 ...).
    controller_build = re.search(r"^build envoy-gateway envoy-gateway .*envoyGatewayVersion=([^\s\"]+)", build_go, re.M)
    headline = re.search(r"Envoy Gateway (v[^\s]+)", poly_text.splitlines()[0])
    return {
        "config.schema.json chart.version default": schema["chart"]["properties"]["version"]["default"],
        "config.schema.json image.controller.tag default": controller_image["tag"],
        "block.poly config.chart.version": yaml.safe_load(poly_text)["config"]["chart"]["version"],
        "block.poly's first line": headline.group(1) if headline else "",
        "tools/build-go.sh envoy-gateway": controller_build.group(1) if controller_build else "",
    }


def test_every_file_names_the_same_release() -> None:
    written = _written_elsewhere()
    assert written == dict.fromkeys(written, ENVOY_GATEWAY_VERSION)
    # release.py's tables are per release (each one the block knows); the default must be among them.
    assert ENVOY_GATEWAY_VERSION in release.ENVOY_OF_RELEASE


def _version_labels(cfg: dict[str, Any]) -> set[str]:
    """Every app.kubernetes.io/version value on the rendered objects and their pod templates."""
    found = set()
    for obj in objects(cfg):
        for node in walk(obj):
            stamped = node.get("labels")
            if isinstance(stamped, dict) and "app.kubernetes.io/version" in stamped:
                found.add(stamped["app.kubernetes.io/version"])
    return found


@pytest.mark.parametrize("version", [ENVOY_GATEWAY_VERSION, "v1.8.3"])
def test_labels_follow_the_configured_chart_version(version: str) -> None:
    cfg = {"chart": {"version": version}, "image": {"controller": {"tag": version}}, "waf": {"enabled": True}}
    assert _version_labels(cfg) == {version}


@pytest.mark.parametrize(
    ("chart_version", "label"),
    [
        ("v1.9.1", "v1.9.1"),
        ("1.9.1-rc.1", "1.9.1-rc.1"),
        ("v1.9.1+build.5", "v1.9.1_build.5"),  # `+` is not allowed in a label value; Helm writes `_`
        ("v1.9.1-" + "a" * 55 + ".b", "v1.9.1-" + "a" * 55),  # cut to 63, and not ending in `.`
    ],
)
def test_the_version_label_is_a_valid_label_value(chart_version: str, label: str) -> None:
    value = labels.version(chart_version)
    assert value == label
    assert len(value) <= 63
    assert LABEL_VALUE.match(value), value
