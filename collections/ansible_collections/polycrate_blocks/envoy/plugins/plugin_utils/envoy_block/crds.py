"""Which CRDs the block installs, read from any folder of YAML files or from gateway-crds-helm's output.

Only CustomResourceDefinition documents of the block's own API groups are applied and waited for
(Established): a folder may also hold other components' CRDs (Cilium, Calico, ...), which the block must
neither install nor, with uninstall.remove_crds, delete. Every other document is skipped:
a downloaded folder may hold anything, and gateway-crds-helm also renders Gateway API's
ValidatingAdmissionPolicy + Binding `safe-upgrades.gateway.networking.k8s.io`, which never gets the
Established condition that install waits for (waiting on it hung the first install on a real cluster). The
block pins the CRD versions itself, so that guard against hand-made downgrades is left to the cluster owner.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

GATEWAY_API_STANDARD = tuple(
    f"{plural}.gateway.networking.k8s.io"
    for plural in (
        "backendtlspolicies",
        "gatewayclasses",
        "gateways",
        "grpcroutes",
        "httproutes",
        "listenersets",
        "referencegrants",
        "tcproutes",
        "tlsroutes",
        "udproutes",
    )
)
GATEWAY_API_EXPERIMENTAL = GATEWAY_API_STANDARD + tuple(
    f"{plural}.gateway.networking.x-k8s.io" for plural in ("xbackends", "xbackendtrafficpolicies", "xmeshes")
)
ENVOY_GATEWAY = tuple(
    f"{plural}.gateway.envoyproxy.io"
    for plural in (
        "backends",
        "backendtrafficpolicies",
        "clienttrafficpolicies",
        "envoyextensionpolicies",
        "envoypatchpolicies",
        "envoyproxies",
        "httproutefilters",
        "securitypolicies",
    )
)
CHANNEL_ANNOTATION = "gateway.networking.k8s.io/channel"
# What the block last applied to a CRD, as a digest of its manifest: a re-install applies only CRDs whose
# digest differs (applying ~20 unchanged CRDs of megabytes of schema cost 8-20 s per run).
DIGEST_ANNOTATION = "envoy.polycrate.io/manifest-digest"

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CrdError(ValueError):
    """The CRD source cannot give what the config needs; nothing has been applied."""


GATEWAY_API_GROUPS = ("gateway.networking.k8s.io", "gateway.networking.x-k8s.io")
ENVOY_GATEWAY_GROUPS = ("gateway.envoyproxy.io",)


def groups(gateway_api_install: bool) -> tuple[str, ...]:
    return (GATEWAY_API_GROUPS if gateway_api_install else ()) + ENVOY_GATEWAY_GROUPS


def required(gateway_api_install: bool, channel: str) -> tuple[str, ...]:
    api = GATEWAY_API_EXPERIMENTAL if channel == "experimental" else GATEWAY_API_STANDARD
    return (api if gateway_api_install else ()) + ENVOY_GATEWAY


def documents(texts: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for where, text in texts:
        try:
            docs.extend(d for d in yaml.load_all(text, Loader=_LOADER) if isinstance(d, dict))
        except yaml.YAMLError as exc:
            raise CrdError(f"{where}: not valid YAML ({exc.__class__.__name__}: {exc})") from None
    return docs


def folder_documents(directory: str) -> list[dict[str, Any]]:
    """Every document of every *.yaml / *.yml file below `directory`, in path order."""
    root = Path(directory)
    if not root.is_dir():
        raise CrdError(f"crds.directory {directory}: not a folder. Point it at the folder holding the CRD files.")
    files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    return documents((str(p), p.read_text(encoding="utf-8")) for p in files)


def select(docs: list[dict[str, Any]], gateway_api_install: bool, channel: str, source: str) -> dict[str, Any]:
    """The CRDs to apply (each name once, the configured channel's, needed ones checked) and their names."""
    crds: dict[str, dict[str, Any]] = {}
    owned = groups(gateway_api_install)
    for doc in docs:
        if doc.get("kind") != "CustomResourceDefinition" or (doc.get("spec") or {}).get("group") not in owned:
            continue
        # A folder may hold both Gateway API channels: take the configured one's CRDs only.
        doc_channel = (doc["metadata"].get("annotations") or {}).get(CHANNEL_ANNOTATION, channel)
        if doc_channel == channel:
            crds.setdefault(str(doc["metadata"]["name"]), doc)
    missing = [name for name in required(gateway_api_install, channel) if name not in crds]
    if missing:
        raise CrdError(
            f"{source} lacks CRDs the config needs: {', '.join(missing)}. Add their files (Gateway API "
            f"{channel} channel and Envoy Gateway), or set gateway_api_crds.install: false when another owner "
            "installs the Gateway API CRDs. Nothing was applied."
        )
    refs = [
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name}}
        for name in sorted(crds)
    ]
    return {"crds": [with_digest(crd) for crd in crds.values()], "names": sorted(crds), "refs": refs}


def with_digest(crd: Mapping[str, Any]) -> dict[str, Any]:
    """The CRD with DIGEST_ANNOTATION set to the sha256 of its manifest (canonical JSON, without it)."""
    out = copy.deepcopy(dict(crd))
    annotations = dict(out["metadata"].get("annotations") or {})
    annotations.pop(DIGEST_ANNOTATION, None)
    out["metadata"] = {**out["metadata"], "annotations": annotations}
    canonical = json.dumps(out, sort_keys=True, separators=(",", ":")).encode()
    annotations[DIGEST_ANNOTATION] = hashlib.sha256(canonical).hexdigest()
    return out


def stale(wanted: Iterable[Mapping[str, Any]], live: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The wanted CRDs the cluster does not hold as the block last applied them: missing, another digest
    (changed here, or applied by someone else, who drops the annotation), or being deleted."""
    current = {
        str(obj["metadata"]["name"]): (obj["metadata"].get("annotations") or {}).get(DIGEST_ANNOTATION)
        for obj in live
        if not obj["metadata"].get("deletionTimestamp")
    }
    return [
        dict(crd)
        for crd in wanted
        if current.get(str(crd["metadata"]["name"])) != crd["metadata"]["annotations"][DIGEST_ANNOTATION]
    ]
