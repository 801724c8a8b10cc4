"""polycrate_blocks.envoy.k8s_list's reading of helm's release record (the storage Secret helm writes).

Guards: the newest revision is the one compared with the plan (an older one would make install skip or
run helm on stale facts), and a record that cannot be read counts as none, so install hands the release
to helm instead of failing as if the API server were unreachable. The cluster tests read real helm's
records; this pins the format and the edge cases. Mutation checks (done once): taking the oldest revision
turned test_the_newest_revision_is_read red; dropping the except clause turned
test_an_unreadable_record_counts_as_none red.
"""

from __future__ import annotations

import base64
import gzip
import importlib
import json
import sys
from typing import Any

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "collections"))
k8s_list: Any = importlib.import_module("ansible_collections.polycrate_blocks.envoy.plugins.modules.k8s_list")


def _secret(revision: int, status: str, values: dict[str, Any], *, gzipped: bool = True) -> dict[str, Any]:
    """A Secret as helm's secrets driver stores a release: base64 of gzipped JSON, base64 again as Secret data."""
    release = {
        "name": "envoy-gateway",
        "namespace": "envoy-gateway-system",
        "version": revision,
        "info": {"status": status},
        "chart": {"metadata": {"name": "gateway-helm", "version": "v1.9.0", "appVersion": "v1.9.0"}},
        "config": values,
        "manifest": "---\n# rendered objects\n",
    }
    raw = json.dumps(release).encode()
    stored = base64.b64encode(gzip.compress(raw) if gzipped else raw)
    return {
        "metadata": {"name": f"sh.helm.release.v1.envoy-gateway.v{revision}", "labels": {"version": str(revision)}},
        "data": {"release": base64.b64encode(stored).decode()},
    }


def test_the_newest_revision_is_read() -> None:
    secrets = [
        _secret(2, "superseded", {"a": 1}),
        _secret(10, "deployed", {"a": 3}),
        _secret(9, "superseded", {"a": 2}, gzipped=False),
    ]
    got = k8s_list._release(secrets)
    assert got == {
        "name": "envoy-gateway",
        "namespace": "envoy-gateway-system",
        "revision": 10,
        "status": "deployed",
        "chart": "gateway-helm",
        "chart_version": "v1.9.0",
        "app_version": "v1.9.0",
        "values": {"a": 3},
    }
    assert "manifest" not in json.dumps(got), "nothing of the record but what install compares"
    assert k8s_list._release([_secret(1, "deployed", {}, gzipped=False)])["revision"] == 1


def test_an_unreadable_record_counts_as_none() -> None:
    assert k8s_list._release([]) is None
    broken = _secret(3, "deployed", {})
    broken["data"]["release"] = base64.b64encode(b"not base64 of gzip!").decode()
    assert k8s_list._release([broken]) is None
    unlabelled = _secret(4, "deployed", {})
    unlabelled["metadata"]["labels"]["version"] = "four"
    assert k8s_list._release([unlabelled]) is None
