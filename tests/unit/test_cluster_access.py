"""Which kubeconfig the block uses, what it says when the API server does not answer, and what the block's
stdout callback leaves out at -v (Polycrate's default --loglevel 1).

Guards: Polycrate v0.23.3 exports KUBECONFIG="" when it found no kubeconfig, which must end in one error naming
every place the block looked, never in the kubernetes client's "Invalid kube-config file"; each way an API
server fails keeps its cause (refused / timed out / TLS / unauthorized) in the one message; the plan is never
printed whole below -vvv, a failure's msg always is. Mutation checks (done once): matching a bare "401" before
the connection errors turned test_each_cause_is_named red (refused port 34013 read as "unauthorized"); an empty
KEEP set in the callback turned test_a_failure_message_is_kept_whole red; treating an empty KUBECONFIG as set
turned test_empty_kubeconfig_falls_back_to_home and test_empty_kubeconfig_names_every_place_looked red.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest

from envoy_block.cluster_access import Kubeconfig, NoKubeconfig, find_kubeconfig, unreachable_message
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "collections"))
abridged: Any = importlib.import_module("ansible_collections.polycrate_blocks.envoy.plugins.callback.abridged")

HOME = "/home/u/.kube/config"
BLOCK = {"name": "envoy", "artifacts": {"path": "/ws/artifacts/blocks/envoy"}}


def _find(block: dict[str, Any], env: dict[str, str], files: set[str]) -> Kubeconfig:
    return find_kubeconfig(block, env, files.__contains__, HOME)


def test_polycrates_kubeconfig_wins() -> None:
    block = {**BLOCK, "kubeconfig": {"path": "/ws/artifacts/blocks/envoy/kubeconfig.yml"}}
    found = _find(block, {"KUBECONFIG": "/other"}, {"/ws/artifacts/blocks/envoy/kubeconfig.yml", "/other", HOME})
    assert found.path == "/ws/artifacts/blocks/envoy/kubeconfig.yml"


def test_a_missing_polycrate_kubeconfig_is_named() -> None:
    block = {**BLOCK, "kubeconfig": {"path": "/ws/gone.yml"}}
    with pytest.raises(NoKubeconfig, match=r"block.kubeconfig.path is /ws/gone.yml, which does not exist"):
        _find(block, {}, {HOME})


def test_kubeconfig_env_is_read_by_the_client_when_it_lists_several() -> None:
    assert _find(BLOCK, {"KUBECONFIG": "/a"}, {"/a"}).path == "/a"
    # A list is for the client (and helm) to merge: the modules get no kubeconfig argument.
    assert _find(BLOCK, {"KUBECONFIG": "/a:/b"}, {"/b"}).path == ""
    with pytest.raises(NoKubeconfig, match=r"KUBECONFIG is /a:/b, and no file it names exists"):
        _find(BLOCK, {"KUBECONFIG": "/a:/b"}, set())


def test_empty_kubeconfig_falls_back_to_home() -> None:
    assert _find(BLOCK, {"KUBECONFIG": ""}, {HOME}) == Kubeconfig(HOME, HOME)


def test_in_cluster_needs_no_file() -> None:
    assert _find(BLOCK, {"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, set()).path == ""


def test_empty_kubeconfig_names_every_place_looked() -> None:
    with pytest.raises(NoKubeconfig) as err:
        _find(BLOCK, {"KUBECONFIG": ""}, set())
    text = str(err.value)
    assert text.startswith("No kubeconfig found: block.kubeconfig.path (empty")
    assert "KUBECONFIG (empty)" in text
    assert f"{HOME} (missing)" in text
    assert "/ws/artifacts/blocks/envoy/kubeconfig.yml" in text
    with pytest.raises(NoKubeconfig, match=r"KUBECONFIG \(not set\)"):
        _find(BLOCK, {}, set())


@pytest.mark.parametrize(
    ("error", "cause"),
    [
        (
            "MaxRetryError: HTTPSConnectionPool(host='127.0.0.1', port=34013): Max retries exceeded with url: /api "
            "(Caused by NewConnectionError('<urllib3.connection.HTTPSConnection>: Failed to establish a new "
            "connection: [Errno 111] Connection refused'))",
            "connection refused",
        ),
        (
            "MaxRetryError: HTTPSConnectionPool(host='10.9.9.9', port=6443): Max retries exceeded (Caused by "
            "ConnectTimeoutError(<urllib3.connection.HTTPSConnection>, 'Connection to 10.9.9.9 timed out. "
            "(connect timeout=None)'))",
            "timed out",
        ),
        (
            "MaxRetryError: HTTPSConnectionPool(host='127.0.0.1', port=40113): Max retries exceeded (Caused by "
            "SSLError(SSLCertVerificationError(1, '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: "
            "self-signed certificate in certificate chain (_ssl.c:1006)')))",
            "TLS handshake failed",
        ),
        ("ApiException: (401)\nReason: Unauthorized\nHTTP response headers: ...", "unauthorized"),
        ("ApiException: (403)\nReason: Forbidden", "forbidden"),
        (
            "MaxRetryError: HTTPSConnectionPool(host='api.nowhere.invalid', port=6443): (Caused by "
            "NameResolutionError(\"Failed to resolve 'api.nowhere.invalid' ([Errno -2] Name or service not known)\"))",
            "does not resolve",
        ),
        ("CoreException: Could not create API client: Invalid kube-config file. No configuration found.", "kubeconfig"),
    ],
)
def test_each_cause_is_named(error: str, cause: str) -> None:
    text = unreachable_message(error, "https://127.0.0.1:34013", "KUBECONFIG /k")
    first, second = text.split("\n")
    assert first.startswith("Cannot talk to the Kubernetes API server at https://127.0.0.1:34013: "), text
    assert cause in first, text
    assert "kubeconfig: KUBECONFIG /k." in second, text
    assert len(text) < 600


def test_the_plan_is_shown_as_its_size() -> None:
    plan = {"objects": [{"definition": {"spec": "x" * 100}} for _ in range(200)]}
    shown = abridged.abridge({"changed": False, "ansible_facts": {"__envoy_apply_plan": plan}}, 2000)
    assert shown["ansible_facts"].endswith("KB, shown with -vvv)")
    assert shown["changed"] is False
    small = {"changed": True, "result": {"kind": "Gateway"}}
    assert abridged.abridge(small, 2000) == small


def test_a_failure_message_is_kept_whole() -> None:
    result = {"failed": True, "msg": "m" * 5000, "problems": "p\n" * 3000, "results": ["r" * 5000]}
    shown = abridged.abridge(result, 2000)
    assert shown["msg"] == result["msg"]
    assert shown["problems"] == result["problems"]
    assert shown["results"] != result["results"]
