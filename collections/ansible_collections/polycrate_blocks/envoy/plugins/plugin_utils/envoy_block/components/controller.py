"""gateway-helm release: chart reference and values (the controller itself is Helm's to render), with the
controller's day-2 settings (controller.replicas, resources, node_selector, tolerations, priority_class_name)
shaped and checked like the proxies' (placement.py) and put where gateway-helm v1.8/v1.9 reads them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from .. import ENVOY_GATEWAY_VERSION, advisories, credentials, fact, images, labels, placement
from ..model import Checked, Config, Problem

RELEASE_NAME = "envoy-gateway"
# The controller's Deployment, as gateway-helm names it.
DEPLOYMENT = "envoy-gateway"
# The Lease its replicas elect a leader by (the LeaderElectionID Envoy Gateway v1.8 and v1.9 set), in its
# namespace. Only the leader provisions the proxies (their Deployments, Services).
LEADER_LEASE = "5b9825d2.gateway.envoyproxy.io"
# A controller upgrade starts every new replica before it stops an old one: the proxies then move from the old
# controllers to the new ones in one step, not one replica at a time (each move is a push of the new
# release's configuration: on v1.9.0 -> v1.9.1 the start of a 15 s clock, envoyproxy/gateway#9918). gateway-helm
# v1.9 takes the strategy; v1.8's chart has no such value and keeps the Deployment's default.
STRATEGY = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}}
# What else gateway-helm (v1.8, v1.9) names for the controller in its namespace: its ConfigMap, certgen's
# service account (the chart's fullname, release plus chart name, "-certgen"), and the Secrets certgen writes
# (the controller's xDS server certificate, the proxies' client one, rate limit's, the OIDC HMAC key).
CONFIG_MAP = "envoy-gateway-config"
CERTGEN_SERVICE_ACCOUNT = f"{RELEASE_NAME}-gateway-helm-certgen"
SECRETS = ("envoy-gateway", "envoy", "envoy-rate-limit", "envoy-oidc-hmac")
# Its pods, by the Deployment's selector as gateway-helm writes it (v1.8 and v1.9): control-plane plus the
# chart's selector labels, the chart's name and the release name.
POD_SELECTOR = (
    "control-plane=envoy-gateway",
    "app.kubernetes.io/name=gateway-helm",
    f"app.kubernetes.io/instance={RELEASE_NAME}",
)


def reserved_names() -> dict[str, tuple[str, ...]]:
    """The controller's names in its namespace that no EnvoyProxy may reuse: its resources' and service
    accounts' names, its Secrets, its ConfigMap (the EnvoyProxy guard's lists)."""
    return {
        "names": (DEPLOYMENT, CONFIG_MAP, CERTGEN_SERVICE_ACCOUNT),
        "secrets": SECRETS,
        "configMaps": (CONFIG_MAP,),
    }


def values(config: Config) -> dict[str, Any]:
    pod_labels = {
        "app.kubernetes.io/part-of": labels.PART_OF,
        labels.LOG_SOURCE_LABEL: labels.LOG_SOURCE,
    }
    out: dict[str, Any] = {
        # The block applies every CRD itself, server-side and before the release (Helm never upgrades
        # crds/); the chart's crds subchart would otherwise also render the Gateway API upgrade VAP.
        "crds": {"enabled": False},
        "global": {
            "images": {
                "envoyGateway": {"image": images.reference(config.get("image.controller"))},
                "envoyProxy": {"image": images.reference(config.get("image.proxy"))},
            },
        },
        "deployment": _deployment(config, pod_labels),
        **_disruption_budget(config),
        **_certgen(config),
        "config": {
            "envoyGateway": {
                "provider": {
                    "type": "Kubernetes",
                    "kubernetes": {"deploy": {"type": config.get("deploy_type")}, **_leader_election(config)},
                },
                **runtime_flags(config),
            },
        },
    }
    if pull_secrets := images.pull_secrets(config):
        # The chart's highest-precedence pull secrets: the controller's and certgen's pods, and (with
        # global.images.envoyProxy.image set) the default EnvoyProxy of Gateways without one of the block's.
        out["global"]["imagePullSecrets"] = pull_secrets
    return out


def _deployment(config: Config, pod_labels: dict[str, str]) -> dict[str, Any]:
    """gateway-helm's `deployment`: replicas, the container's resources, and the pods' placement."""
    settings = config.get("controller")
    pod: dict[str, Any] = {"labels": pod_labels, **_placement(settings)}
    deployment: dict[str, Any] = {
        "replicas": settings["replicas"],
        "envoyGateway": {"resources": placement.resources(settings["resources"]), "strategy": STRATEGY},
        "pod": pod,
    }
    if settings["priority_class_name"]:
        deployment["priorityClassName"] = settings["priority_class_name"]
    return deployment


def _placement(settings: Mapping[str, Any]) -> dict[str, Any]:
    """nodeSelector and tolerations, as the chart takes them for the controller's pods and certgen's job."""
    out: dict[str, Any] = {}
    if settings["node_selector"]:
        out["nodeSelector"] = dict(sorted(settings["node_selector"].items()))
    if settings["tolerations"]:
        out["tolerations"] = placement.tolerations(settings["tolerations"])
    return out


def _certgen(config: Config) -> dict[str, Any]:
    """certgen's job runs where the controller's pods may (a node pool of its own, tainted: helm waits for
    the job, which would stay Pending anywhere else)."""
    placed = _placement(config.get("controller"))
    return {"certgen": {"job": placed}} if placed else {}


def highly_available(config: Config) -> bool:
    return int(config.get("controller.replicas")) >= 2


def _disruption_budget(config: Config) -> dict[str, Any]:
    """With 2 or more replicas, a drain evicts one controller pod at a time (the chart renders the budget
    for maxUnavailable >= 1; its minAvailable default 0 renders none)."""
    return {"podDisruptionBudget": {"maxUnavailable": 1}} if highly_available(config) else {}


def _leader_election(config: Config) -> dict[str, Any]:
    """Leader election is Envoy Gateway's default; with 2 or more replicas the block says so, so that a
    chart whose defaults change cannot leave two replicas writing at once."""
    return {"leaderElection": {"disable": False}} if highly_available(config) else {}


# The runtime flag Envoy Gateway v1.9.2 added to stop applying EnvoyProxy `patch` fields (with the controller's
# privileges); v1.9.1 does not know it.
ENVOY_PROXY_PATCH_FLAG = "EnvoyProxyPatch"


def runtime_flags(config: Config) -> dict[str, Any]:
    """The EnvoyGateway config's runtimeFlags: with tenant_guards.envoy_proxy (which refuses patches at
    admission) on a controller release that has the flag (one that carries advisories.ENVOY_PROXY_PATCH's
    fix), the controller also ignores them: EnvoyProxy objects that predate the guard keep none."""
    tag = str(config.get("image.controller.tag"))
    if config.get("tenant_guards.envoy_proxy") and advisories.fixes(advisories.ENVOY_PROXY_PATCH, tag):
        return {"runtimeFlags": {"disabled": [ENVOY_PROXY_PATCH_FLAG]}}
    return {}


@dataclass(frozen=True)
class HelmRelease:
    """What install hands to kubernetes.core.helm (plan.helm). `auth` leaves the plan only with credentials
    asked for (install's registry login, under no_log)."""

    name: str
    namespace: str
    chart_ref: str
    chart_version: str
    # helm registry login takes the host alone (oci://docker.io/envoyproxy/gateway-helm -> docker.io).
    registry_host: str
    skip_crds: bool
    values: dict[str, Any]
    # {} when credentials are configured but the plan was read back from a fact without them (from_dict).
    auth: dict[str, str] | None = field(default=None, repr=False)

    @property
    def controller_image(self) -> str:
        """The controller image the release's values run (global.images.envoyGateway.image)."""
        return str(self.values["global"]["images"]["envoyGateway"]["image"])

    def to_dict(self, include_secrets: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "namespace": self.namespace,
            "chart_ref": self.chart_ref,
            "chart_version": self.chart_version,
            "registry_host": self.registry_host,
            "skip_crds": self.skip_crds,
            "values": self.values,
            **({"auth": dict(self.auth)} if include_secrets and self.auth else {}),
            "auth_configured": self.auth is not None,
        }
        return out

    @classmethod
    def from_dict(cls, data: object, path: str = "plan.helm") -> HelmRelease:
        """The release from the plan's `helm` (to_dict, with or without credentials). registry_host and
        auth_configured are derived: checked against chart_ref and the credentials when the fact has them."""
        keys = ("name", "namespace", "chart_ref", "chart_version", "registry_host", "skip_crds", "values")
        d = fact.fields(data, path, (*keys, "auth_configured"), ("auth",))
        configured = fact.boolean(d, "auth_configured", path)
        auth = fact.string_map(d, "auth", path) if "auth" in d else ({} if configured else None)
        if "auth" in d:
            fact.fields(auth, f"{path}.auth", ("username", "password"))
        release = cls(
            name=fact.string(d, "name", path),
            namespace=fact.string(d, "namespace", path),
            chart_ref=fact.string(d, "chart_ref", path),
            chart_version=fact.string(d, "chart_version", path),
            registry_host=fact.string(d, "registry_host", path),
            skip_crds=fact.boolean(d, "skip_crds", path),
            values=fact.mapping(d, "values", path),
            auth=auth,
        )
        fact.derived(
            {"registry_host": release.registry_host, "auth_configured": configured},
            {"registry_host": registry_host(release.chart_ref), "auth_configured": release.auth is not None},
            path,
        )
        return release


@dataclass(frozen=True)
class ControllerSettings:
    """plan.controller: whether the block manages the controller (controller.install), the Deployment the
    chart makes, and whether install may move it to an older chart.version (chart.allow_downgrade)."""

    install: bool
    deployment: str
    allow_downgrade: bool
    lease: str
    pod_selector: list[str]

    @classmethod
    def from_dict(cls, data: object, path: str = "plan.controller") -> ControllerSettings:
        d = fact.fields(data, path, ("install", "deployment", "allow_downgrade", "lease", "pod_selector"))
        return cls(
            install=fact.boolean(d, "install", path),
            deployment=fact.string(d, "deployment", path),
            allow_downgrade=fact.boolean(d, "allow_downgrade", path),
            lease=fact.string(d, "lease", path),
            pod_selector=fact.string_list(d, "pod_selector", path),
        )


def registry_host(chart_ref: str) -> str:
    """What helm registry login takes: the host alone (oci://docker.io/envoyproxy/gateway-helm -> docker.io)."""
    return chart_ref.removeprefix("oci://").split("/", 1)[0]


def release(config: Config) -> HelmRelease:
    auth = config.get("chart.auth")
    return HelmRelease(
        name=RELEASE_NAME,
        namespace=config.get("namespace"),
        chart_ref=config.get("chart.repo.url"),
        chart_version=config.get("chart.version"),
        registry_host=registry_host(str(config.get("chart.repo.url"))),
        skip_crds=True,
        values=values(config),
        auth={"username": auth["username"], "password": auth["password"]} if auth["username"] else None,
    )


def settings(config: Config) -> ControllerSettings:
    return ControllerSettings(
        install=bool(config.get("controller.install")),
        deployment=DEPLOYMENT,
        allow_downgrade=bool(config.get("chart.allow_downgrade")),
        lease=LEADER_LEASE,
        pod_selector=list(POD_SELECTOR),
    )


# controller.* keys that shape the Deployment gateway-helm renders: nothing to render them into without it.
DEPLOYMENT_KEYS = ("replicas", "resources", "node_selector", "tolerations", "priority_class_name")


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """Registry credentials for the chart come as a pair (their values are never echoed); a pull secret is
    named once (a pod's imagePullSecrets is a list keyed by name: the API server refuses a name twice); the
    controller's tolerations obey the API server's rules (placement.py, as the proxies'); its Deployment
    settings need the block to install the controller."""
    problems = credentials.pair_problems("config.chart.auth", values["chart"]["auth"])
    seen: set[str] = set()
    for index, name in enumerate(values["image"]["pull_secrets"]):
        if name in seen:
            problems.append(
                Problem(f"config.image.pull_secrets[{index}]", f"'{name}' is listed twice; name each Secret once")
            )
        seen.add(name)
    settings = values["controller"]
    problems += placement.toleration_problems("config.controller.tolerations", settings["tolerations"])
    warnings = advisory_warnings(values)
    ignored = [key for key in DEPLOYMENT_KEYS if key in (raw.get("controller") or {})]
    if ignored and not settings["install"]:
        warnings.append(
            f"config.controller: {', '.join(ignored)} ignored with controller.install: false (the block renders no "
            "controller); set them where the controller is installed"
        )
    return problems, warnings


SECURITY_DOC = "docs/security.md#known-vulnerable-releases"


def advisory_warnings(values: Mapping[str, Any]) -> list[str]:
    """The configured controller release and proxy image, against the known-vulnerable releases: one warning
    each, naming every advisory and its first fixed version. chart.version is named only when it is another
    release than image.controller.tag (install refuses that pair anyway)."""
    controller_tag = str(values["image"]["controller"]["tag"])
    chart_version = str(values["chart"]["version"])
    checked = [("image.controller.tag", advisories.ENVOY_GATEWAY, controller_tag)]
    if advisories.version(chart_version) != advisories.version(controller_tag):
        checked.append(("chart.version", advisories.ENVOY_GATEWAY, chart_version))
    checked.append(("image.proxy.tag", advisories.ENVOY, str(values["image"]["proxy"]["tag"])))
    warnings = []
    for key, product, tag in checked:
        found = advisories.findings(product, tag)
        # The release the block is built and tested for (the newest obtainable here) is not warned about on
        # every render: its open issues are in docs/security.md with what the block does about each (guards,
        # checks), and status reports them for what runs. Any other affected release is a choice to warn about.
        if found and product == advisories.ENVOY_GATEWAY and _is_default(tag):
            continue
        if found:
            warnings.append(
                f"config.{key}: {found}; move {key} to such a release where your registry has it ({SECURITY_DOC})"
            )
    return warnings


def _is_default(tag: str) -> bool:
    return advisories.version(tag) == advisories.version(ENVOY_GATEWAY_VERSION)


def chart_problem(helm: Mapping[str, Any], rc: int, stdout: str, stderr: str) -> str:
    """Why install must stop before touching the release, from `helm show chart REF --version V` (its exit code
    and output), or "" when chart.version is there. For an OCI or https repository helm fails when the version
    is missing; a local chart ignores --version, so the version it reports is compared."""
    version, ref = str(helm["chart_version"]), str(helm["chart_ref"])
    if rc == 0:
        try:
            shown = yaml.safe_load(stdout)
        except yaml.YAMLError:
            shown = None
        found = str((shown or {}).get("version", "")) if isinstance(shown, dict) else ""
        if found.lstrip("v") == version.lstrip("v"):
            return ""
        why = f"the chart there is version {found or 'unknown'}"
    else:
        why = stderr.strip() or f"helm show chart exited with {rc}"
    return (
        f"chart.version {version} of chart.repo.url {ref} cannot be installed: {why}. "
        "Set chart.version to a version the repository has. Nothing was changed."
    )
