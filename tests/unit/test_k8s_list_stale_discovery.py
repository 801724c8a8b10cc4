"""polycrate_blocks.envoy.k8s_list on a kind its client's discovery cache still lists but the API server no
longer serves (the cache is a file per API server address, kept between runs: an operator removed since, or
another cluster at the same address). Guard: the kind reads as not served, so install names it as a problem
("does not serve ...") instead of failing as if the API server were unreachable (seen on the real node, whose
API server keeps one address across test sessions). Other API errors still fail as such.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any

import pytest
from kubernetes.client.exceptions import ApiException

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "collections"))
k8s_list: Any = importlib.import_module("ansible_collections.polycrate_blocks.envoy.plugins.modules.k8s_list")

QUERY = {"api_version": "operator.victoriametrics.com/v1beta1", "kind": "VMPodScrape"}


class Client:
    def __init__(self, status: int) -> None:
        self.status = status

    def get(self, resource: Any, **params: Any) -> Any:
        raise ApiException(status=self.status, reason="from the API server")


class Service:
    """K8sService as _metadata_list uses it: discovery (cached) finds the kind, the list call answers."""

    def __init__(self, status: int) -> None:
        self.client = Client(status)

    def find_resource(self, kind: str, api_version: str) -> object:
        return object()


def test_a_kind_gone_since_discovery_is_not_served() -> None:
    assert k8s_list._metadata_list(Service(404), QUERY, []) == {"resources": [], "api_found": False}


def test_other_api_errors_still_fail() -> None:
    with pytest.raises(ApiException):
        k8s_list._metadata_list(Service(403), QUERY, [])


class Answer:
    def __init__(self, body: dict[str, Any]) -> None:
        self.data = json.dumps(body)


class Listing(Service):
    """The API server answers a PartialObjectMetadataList holding one CRD applied by two managers."""

    def __init__(self) -> None:
        fields: dict[str, Any] = {"f:spec": {"f:versions": {}}}
        item = {
            "metadata": {
                "name": "gateways.gateway.networking.k8s.io",
                "managedFields": [
                    {"manager": "helm", "operation": "Update", "fieldsType": "FieldsV1", "fieldsV1": fields},
                    {"manager": "kube-apiserver", "operation": "Update", "subresource": "status", "fieldsV1": fields},
                ],
            }
        }
        self.client = type("C", (), {"get": lambda _self, resource, **params: Answer({"items": [item]})})()


@pytest.mark.parametrize("managers", [False, True], ids=["metadata-only", "with-managers"])
def test_managed_fields_keep_who_wrote_never_the_fields(managers: bool) -> None:
    """install reads the CRDs with their managers (lifecycle.crd_owners); a CRD's fieldsV1 is as large as its
    schema and never leaves the module."""
    query = {"api_version": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "managed_fields": managers}
    (found,) = k8s_list._metadata_list(Listing(), query, [])["resources"]
    expected = [
        {"manager": "helm", "operation": "Update"},
        {"manager": "kube-apiserver", "operation": "Update", "subresource": "status"},
    ]
    assert found["metadata"].get("managedFields") == (expected if managers else None)
