"""Tests that run inside the real node's namespace (`python -m tests.harness --dir D --images -- pytest
tests/node`, which `make node-test` does): they reach the API server through KUBECONFIG."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.harness.api import Api


@pytest.fixture(scope="session")
def api() -> Api:
    if os.environ.get("HARNESS_NODE") != "real" or not os.environ.get("KUBECONFIG"):
        pytest.fail("run these under the real node: python -m tests.harness --dir D --images -- pytest tests/node")
    config = yaml.safe_load(Path(os.environ["KUBECONFIG"]).read_text(encoding="utf-8"))
    cluster = config["clusters"][0]["cluster"]
    user = config["users"][0]["user"]
    return Api(
        cluster["server"],
        Path(cluster["certificate-authority"]),
        Path(user["client-certificate"]),
        Path(user["client-key"]),
    )
