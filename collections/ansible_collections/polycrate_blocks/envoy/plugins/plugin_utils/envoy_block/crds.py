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

from collections.abc import Iterable
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
    return {"crds": list(crds.values()), "names": sorted(crds), "refs": refs}
