"""The unpublished default waf.image cannot slip through to the cluster: an enabled WAF on it renders (with a
warning naming config.waf.image), but install and plan stop at config validation, before anything is read
from or applied to a cluster, with one message that says how to build, push and name the image.

Mutation check (done once): dropping the `apply` branch in the validate action turned
test_install_and_plan_refuse_the_unpublished_default red (install went on to the cluster).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import polycrate
from envoy_block.components import waf
from tests.support.helpers import load
from tests.test_render_playbook import BLOCK_POLY, playbook

pytestmark = pytest.mark.playbook
WAF_ON: dict[str, Any] = {"waf": {"enabled": True}}
OWN_IMAGE = {"registry": "registry.example.com", "repository": "platform/envoy-waf", "tag": "0.4.0"}


def run(tmp_path: Path, name: str, cfg: dict[str, Any]) -> str:
    snap = polycrate.snapshot(BLOCK_POLY, {"config": cfg}, str(tmp_path / "artifacts"), str(tmp_path / "none.yml"))
    snap_file = tmp_path / "snapshot.yml"
    snap_file.write_text(yaml.safe_dump(snap), encoding="utf-8")
    result = playbook(snap_file, name)
    return f"rc={result.returncode}\n{result.stdout}{result.stderr}"


def test_only_the_default_repository_is_refused() -> None:
    """Any tag of docker.io/polycrate/envoy-waf; an image of your own, or the WAF off, is fine."""
    assert waf.unpublished_image(load(WAF_ON).values) is not None
    assert waf.unpublished_image(load({"waf": {**WAF_ON["waf"], "image": {"tag": "9.9.9"}}}).values)
    assert waf.unpublished_image(load({"waf": {**WAF_ON["waf"], "image": OWN_IMAGE}}).values) is None
    assert waf.unpublished_image(load({}).values) is None


def test_render_warns(tmp_path: Path) -> None:
    output = run(tmp_path, "render", WAF_ON)
    assert output.startswith("rc=0"), output
    assert "config.waf.image: docker.io/polycrate/envoy-waf is a placeholder" in output
    assert "install and plan refuse it" in output


@pytest.mark.parametrize("action", ["install", "plan"])
def test_install_and_plan_refuse_the_unpublished_default(tmp_path: Path, action: str) -> None:
    output = run(tmp_path, action, WAF_ON)
    assert not output.startswith("rc=0"), output
    failed = output.split("fatal:")[0].rsplit("TASK [", 1)[1]
    assert failed.startswith("envoy_config : Validate the block config"), output
    assert "config.waf.image: docker.io/polycrate/envoy-waf is a placeholder" in output
    assert "waf/BUILD.md" in output
    assert "nothing was applied" in output


def test_an_image_of_your_own_passes_validation(tmp_path: Path) -> None:
    """Past validation install needs a cluster (none here): it fails later, never on the image."""
    output = run(tmp_path, "install", {"waf": {**WAF_ON["waf"], "image": OWN_IMAGE}})
    assert "TASK [envoy_config : Validate the block config]" in output
    # The refusal of the unpublished image is gone (a warning about what images built from waf/ carry stays:
    # tests/unit/test_advisories.py).
    assert "placeholder that was never published" not in output, output
