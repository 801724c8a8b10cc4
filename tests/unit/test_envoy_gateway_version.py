"""The Envoy Gateway release the block is built for is written once in Python, `envoy_block.ENVOY_GATEWAY_VERSION`,
and the Python that needs it reads it from there. The files that cannot import it (the schema's two defaults,
block.poly, tools/build-go.sh) are read here and must name the same release, so a bump that misses one fails
(issue 41: the version sat in six places, and tools/bench_render.py was left on v1.9.0 unseen).

The objects' `app.kubernetes.io/version` is the release the config installs (chart.version), so an install of
chart v1.8.3 is no longer labelled v1.9.1; only the WAF's pod template keeps the constant (labels.pod_template):
a template label that follows chart.version rolled the WAF's pods at every controller upgrade.

Mutation check (done once): chart.version's schema default set to v1.9.0 turned
test_every_file_names_the_same_release red.
"""

from __future__ import annotations

import json
import re

import yaml

from envoy_block import ENVOY_GATEWAY_VERSION, release
from tests.conftest import ROOT
from tests.support.helpers import plan, with_gateway


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


# An image of the operator's own: the unpublished default is refused at install, not at build.
WAF_ON = {"enabled": True, "image": {"registry": "registry.example.com", "repository": "platform/envoy-waf"}}


def test_objects_are_labelled_with_the_release_the_config_installs() -> None:
    """Mutation check (done once, restored): stamping ENVOY_GATEWAY_VERSION in labels.standard again turned this
    red."""
    built = plan(with_gateway({"chart": {"version": "v1.8.3"}, "waf": WAF_ON}))
    versions = {s.kind: s.obj["metadata"]["labels"]["app.kubernetes.io/version"] for s in built.steps}
    assert set(versions.values()) == {"v1.8.3"}, versions
    (waf,) = [s.obj for s in built.steps if s.kind == "Deployment"]
    assert waf["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/version"] == ENVOY_GATEWAY_VERSION, (
        "the WAF's pods must not roll when only the controller's release changes"
    )
    default = plan(with_gateway({"waf": WAF_ON}))
    (same,) = [s.obj for s in default.steps if s.kind == "Deployment"]
    assert same["spec"]["template"] == waf["spec"]["template"]
