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

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from . import GATEWAY_API_VERSION, fact
from .model import Checked, Config, Problem
from .plan import DIGEST_ANNOTATION, with_digest
from .release import semver


@dataclass(frozen=True)
class GatewayApiCrds:
    """gateway_api_crds.*: whether the block installs Gateway API's CRDs, which channel, which release (the
    bundle of the configured Envoy Gateway release), and whether install may apply them over another owner's
    (take_ownership, lifecycle/crd_owners.py)."""

    install: bool
    channel: str
    version: str
    take_ownership: bool = False

    @classmethod
    def from_dict(cls, data: object, path: str = "plan.crds.gateway_api") -> GatewayApiCrds:
        d = fact.fields(data, path, ("install", "channel", "version", "take_ownership"))
        return cls(
            install=fact.boolean(d, "install", path),
            channel=fact.string(d, "channel", path),
            version=fact.string(d, "version", path),
            take_ownership=fact.boolean(d, "take_ownership", path),
        )


@dataclass(frozen=True)
class EnvoyGatewayCrds:
    version: str  # chart.version: Envoy Gateway's CRDs come with the release the block installs

    @classmethod
    def from_dict(cls, data: object, path: str = "plan.crds.envoy_gateway") -> EnvoyGatewayCrds:
        d = fact.fields(data, path, ("version",))
        return cls(version=fact.string(d, "version", path))


@dataclass(frozen=True)
class CrdSettings:
    """plan.crds: where the CRDs come from (crds.directory, else gateway-crds-helm at crds.chart_url, with
    chart_values), which ones (gateway_api, envoy_gateway), and whether uninstall removes them
    (uninstall.remove_crds)."""

    gateway_api: GatewayApiCrds
    envoy_gateway: EnvoyGatewayCrds
    directory: str
    chart_url: str
    remove_on_uninstall: bool

    @property
    def chart_values(self) -> dict[str, Any]:
        return chart_values(self.gateway_api.install, self.gateway_api.channel)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        remove = out.pop("remove_on_uninstall")
        # The order plan.yaml shows: the source's settings, its values, then what uninstall does.
        return {**out, "chart_values": self.chart_values, "remove_on_uninstall": remove}

    @classmethod
    def from_dict(cls, data: object, path: str = "plan.crds") -> CrdSettings:
        """The settings from the plan's `crds`. Derived and checked: chart_values (from gateway_api) and
        gateway_api.version (the bundle of envoy_gateway.version's release)."""
        keys = ("gateway_api", "envoy_gateway", "directory", "chart_url", "chart_values", "remove_on_uninstall")
        d = fact.fields(data, path, keys)
        settings = cls(
            gateway_api=GatewayApiCrds.from_dict(d["gateway_api"], f"{path}.gateway_api"),
            envoy_gateway=EnvoyGatewayCrds.from_dict(d["envoy_gateway"], f"{path}.envoy_gateway"),
            directory=fact.string(d, "directory", path),
            chart_url=fact.string(d, "chart_url", path),
            remove_on_uninstall=fact.boolean(d, "remove_on_uninstall", path),
        )
        fact.derived(
            {"chart_values": d["chart_values"], "gateway_api": {"version": settings.gateway_api.version}},
            {
                "chart_values": settings.chart_values,
                "gateway_api": {"version": gateway_api_version(settings.envoy_gateway.version)},
            },
            path,
        )
        return settings


def chart_values(gateway_api_install: bool, channel: str) -> dict[str, Any]:
    """gateway-crds-helm's values: the Gateway API CRDs of the channel (or none), Envoy Gateway's always."""
    gateway_api = {"enabled": gateway_api_install, "channel": channel}
    return {"crds": {"gatewayAPI": gateway_api, "envoyGateway": {"enabled": True}}}


def without_gateway_api(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The plan's `crds` settings (CrdSettings.to_dict) with the Gateway API CRDs left out: what install reads,
    stamps and applies when another owner's are left alone (lifecycle.crd_owners)."""
    gateway_api = {**settings["gateway_api"], "install": False}
    return {**settings, "gateway_api": gateway_api, "chart_values": chart_values(False, str(gateway_api["channel"]))}


# The Gateway API bundle each Envoy Gateway minor line ships in gateway-crds-helm (v1.8: v1.5.1, v1.9: v1.6.1):
# what another owner's CRDs must be at least for the configured release.
GATEWAY_API_OF_RELEASE = {(1, 8): "v1.5.1", (1, 9): GATEWAY_API_VERSION}


def gateway_api_version(envoy_gateway_version: str) -> str:
    """The Gateway API release the configured Envoy Gateway release needs (the newest known line's when the
    version is unknown or newer)."""
    version = semver(envoy_gateway_version)
    return GATEWAY_API_OF_RELEASE.get(version[:2], GATEWAY_API_VERSION) if version else GATEWAY_API_VERSION


def settings(config: Config) -> CrdSettings:
    return CrdSettings(
        gateway_api=GatewayApiCrds(
            install=bool(config.get("gateway_api_crds.install")),
            channel=str(config.get("gateway_api_crds.channel")),
            version=gateway_api_version(str(config.get("chart.version"))),
            take_ownership=bool(config.get("gateway_api_crds.take_ownership")),
        ),
        envoy_gateway=EnvoyGatewayCrds(version=str(config.get("chart.version"))),
        directory=str(config.get("crds.directory")),
        chart_url=str(config.get("crds.chart_url")),
        remove_on_uninstall=bool(config.get("uninstall.remove_crds")),
    )


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """take_ownership applies the block's Gateway API CRDs over another owner's: it needs the block to apply
    them at all."""
    gateway_api = values["gateway_api_crds"]
    problems: list[Problem] = []
    if gateway_api["take_ownership"] and not gateway_api["install"]:
        problems.append(
            Problem(
                "config.gateway_api_crds.take_ownership",
                "applies the block's Gateway API CRDs over another owner's, but gateway_api_crds.install is false "
                "(the block applies none); set install: true to take them over, or remove take_ownership",
            )
        )
    return problems, []


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
# A CRD's manifest digest (plan.DIGEST_ANNOTATION): a re-install applies only CRDs whose digest differs
# (applying ~20 unchanged CRDs of megabytes of schema cost 8-20 s per run).
# Where the block took the CRDs from, as "<sha256 of the source>/<how many CRDs it gave>": when every
# CRD the cluster holds from the configured source is there, a re-install neither renders the CRD chart
# (a helm run and megabytes of YAML) nor parses the folder.
SOURCE_ANNOTATION = "envoy.polycrate.io/crd-source"
# Bumped when what a source gives for the same input changes (selection rules, annotations).
SOURCE_FORMAT = "1"

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class CrdError(ValueError):
    """The CRD source cannot give what the config needs; nothing has been applied."""


GATEWAY_API_GROUPS = ("gateway.networking.k8s.io", "gateway.networking.x-k8s.io")
ENVOY_GATEWAY_GROUPS = ("gateway.envoyproxy.io",)


def groups(gateway_api_install: bool) -> tuple[str, ...]:
    return (GATEWAY_API_GROUPS if gateway_api_install else ()) + ENVOY_GATEWAY_GROUPS


# Gateway API v1.6 (Envoy Gateway v1.9) moved TCPRoute and UDPRoute into the standard channel; the v1.5.1
# bundle of Envoy Gateway v1.8 has them in the experimental channel only.
STANDARD_SINCE_1_9 = ("tcproutes.gateway.networking.k8s.io", "udproutes.gateway.networking.k8s.io")


def required(gateway_api_install: bool, channel: str, envoy_gateway_version: str = "") -> tuple[str, ...]:
    """The CRDs the configured Envoy Gateway release's bundle must give (the newest release's when the
    version is unknown)."""
    api = GATEWAY_API_EXPERIMENTAL if channel == "experimental" else GATEWAY_API_STANDARD
    version = semver(envoy_gateway_version)
    if channel != "experimental" and version is not None and version < (1, 9, 0):
        api = tuple(name for name in api if name not in STANDARD_SINCE_1_9)
    return (api if gateway_api_install else ()) + ENVOY_GATEWAY


def documents(texts: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for where, text in texts:
        try:
            docs.extend(d for d in yaml.load_all(text, Loader=_LOADER) if isinstance(d, dict))
        except yaml.YAMLError as exc:
            raise CrdError(f"{where}: not valid YAML ({exc.__class__.__name__}: {exc})") from None
    return docs


def _yaml_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


def folder_documents(directory: str) -> list[dict[str, Any]]:
    """Every document of every *.yaml / *.yml file below `directory`, in path order."""
    root = Path(directory)
    if not root.is_dir():
        raise CrdError(f"crds.directory {directory}: not a folder. Point it at the folder holding the CRD files.")
    return documents((str(p), p.read_text(encoding="utf-8")) for p in _yaml_files(root))


def source_digest(settings: Mapping[str, Any]) -> str:
    """A digest of everything the CRDs to apply are made from: the plan's `crds` settings and, for a folder
    or a local chart, the bytes of its files. A remote chart counts by URL, version and values, as helm
    pulls it: a version re-pushed with other content is not noticed (pin versions, as helm expects)."""
    digest = hashlib.sha256()

    def add(*parts: object) -> None:
        for part in parts:
            digest.update(str(part).encode())
            digest.update(b"\0")

    def add_tree(root: Path, files: Iterable[Path]) -> None:
        for path in files:
            add(path.relative_to(root))
            digest.update(path.read_bytes())

    gateway_api = settings["gateway_api"]
    add(SOURCE_FORMAT, gateway_api["install"], gateway_api["channel"])
    if settings["directory"]:
        root = Path(settings["directory"])
        add("directory", root)
        if root.is_dir():
            add_tree(root, _yaml_files(root))
    else:
        local = Path(str(settings["chart_url"]))
        add("chart", local, settings["envoy_gateway"]["version"], json.dumps(settings["chart_values"], sort_keys=True))
        if local.is_file():
            digest.update(local.read_bytes())
        elif local.is_dir():
            add_tree(local, sorted(p for p in local.rglob("*") if p.is_file()))
    return digest.hexdigest()


def source_current(
    live: Iterable[Mapping[str, Any]], digest: str, gateway_api_install: bool, channel: str, version: str = ""
) -> bool:
    """Whether the cluster holds every CRD the source gave when last applied (counted), every needed one
    among them, none being deleted: then nothing of the source need be read again."""
    held = [
        (obj["metadata"]["name"], value.partition("/")[2])
        for obj in live
        if not obj["metadata"].get("deletionTimestamp")
        and (value := (obj["metadata"].get("annotations") or {}).get(SOURCE_ANNOTATION, "")).partition("/")[0] == digest
    ]
    names = {name for name, _ in held}
    counts = {count for _, count in held}
    return (
        len(counts) == 1
        and counts == {str(len(held))}
        and set(required(gateway_api_install, channel, version)) <= names
    )


def select(
    docs: list[dict[str, Any]],
    gateway_api_install: bool,
    channel: str,
    source: str,
    origin: str = "",
    *,
    version: str = "",
) -> dict[str, Any]:
    """The CRDs to apply (each name once, the configured channel's, needed ones checked) and their names,
    each stamped with SOURCE_ANNOTATION when `origin` (source_digest) is given."""
    crds: dict[str, dict[str, Any]] = {}
    owned = groups(gateway_api_install)
    for doc in docs:
        if doc.get("kind") != "CustomResourceDefinition" or (doc.get("spec") or {}).get("group") not in owned:
            continue
        # A folder may hold both Gateway API channels: take the configured one's CRDs only.
        doc_channel = (doc["metadata"].get("annotations") or {}).get(CHANNEL_ANNOTATION, channel)
        if doc_channel == channel:
            crds.setdefault(str(doc["metadata"]["name"]), doc)
    missing = [name for name in required(gateway_api_install, channel, version) if name not in crds]
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
    if origin:
        crds = {name: _stamped(crd, f"{origin}/{len(crds)}") for name, crd in crds.items()}
    return {"crds": [with_digest(crd) for crd in crds.values()], "names": sorted(crds), "refs": refs}


def from_source(settings: Mapping[str, Any], rendered: str = "", origin: str = "") -> dict[str, Any]:
    """`select` over the configured source: crds.directory's files, or gateway-crds-helm's rendered text when
    the directory is empty, as `settings` (shaped like the plan's `crds`, or install's `crd_settings`) select
    them; stamped with `origin` (install's source digest) when given. CrdError names what is missing."""
    if settings["directory"]:
        docs, source = folder_documents(str(settings["directory"])), f"crds.directory {settings['directory']}"
    else:
        docs, source = documents([("gateway-crds-helm", rendered)]), str(settings["chart_url"])
    return select(
        docs,
        bool(settings["gateway_api"]["install"]),
        str(settings["gateway_api"]["channel"]),
        source,
        origin,
        version=str(settings["envoy_gateway"]["version"]),
    )


def _stamped(crd: Mapping[str, Any], source: str) -> dict[str, Any]:
    annotations = {**(crd["metadata"].get("annotations") or {}), SOURCE_ANNOTATION: source}
    return {**crd, "metadata": {**crd["metadata"], "annotations": annotations}}


def _applied(metadata: Mapping[str, Any]) -> tuple[str | None, str | None]:
    annotations = metadata.get("annotations") or {}
    return annotations.get(DIGEST_ANNOTATION), annotations.get(SOURCE_ANNOTATION)


def stale(wanted: Iterable[Mapping[str, Any]], live: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The wanted CRDs the cluster does not hold as the block last applied them: missing, another digest
    or source stamp (changed here, or applied by someone else, who drops the annotations), or being
    deleted."""
    current = {
        str(obj["metadata"]["name"]): _applied(obj["metadata"])
        for obj in live
        if not obj["metadata"].get("deletionTimestamp")
    }
    return [dict(crd) for crd in wanted if current.get(str(crd["metadata"]["name"])) != _applied(crd["metadata"])]
