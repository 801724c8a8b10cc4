"""Admission guards against what tenants may author to reach past their namespace (docs/security.md).

`tenant_guards.backends`: Backend objects (any namespace) may not aim the proxies at loopback, link-local or
cloud metadata addresses and names, the proxies' own ports, a Unix socket, or a DynamicResolver. Envoy
Gateway ignores Backends unless its extensionApis.enableBackend is on (the block leaves it off): the guard
holds the day someone turns it on.

`tenant_guards.envoy_proxy`: EnvoyProxy objects only in the block's namespace, with no `patch` fields, and no
names, service accounts, volumes or env references that are the controller's, nor names of the WAF's (which
shares that namespace: a proxy fleet under its name would overwrite its Deployment or Service). Envoy Gateway
v1.9.2 closed the collisions in its own code and added the EnvoyProxyPatch runtime flag; v1.9.1, the newest
release obtainable here, has neither, so the API server refuses them instead.

Who may still write EnvoyProxy objects: whoever may write in the block's namespace (the controller's). The
block's own EnvoyProxies obey every rule (tests/unit/test_tenant_guards.py renders them and evaluates the
policy on them), so the policy exempts nobody: no label, field manager or annotation a tenant could copy
opens it. The trust boundary is RBAC on that namespace, which is the platform team's anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import advisories, proxy_ports
from ..model import Checked, Config
from ..plan import Phase, Step
from . import admission, controller, waf

ENVOY_PROXY_RESOURCE = admission.Resource("gateway.envoyproxy.io", "v1alpha1", "envoyproxies")
K = "object.spec.provider.kubernetes"
# The EnvoyProxy's Kubernetes resources that carry a `name` and (but the service account) a `patch`
# (the v1.9.1 CRD: spec.provider.kubernetes.*).
PATCHED = ("envoyDeployment", "envoyDaemonSet", "envoyService", "envoyHpa", "envoyPDB")
NAMED = (*PATCHED, "envoyServiceAccount")
WORKLOADS = ("envoyDeployment", "envoyDaemonSet")


def envoy_proxy_guard_name(config: Config) -> str:
    return f"{config.block_name}-envoyproxy-guard"


def _has(path: str) -> str:
    """`has()` for every step of a dotted path below `object.spec.provider.kubernetes`."""
    parts = path.split(".")
    return " && ".join(f"has({K}.{'.'.join(parts[: i + 1])})" for i in range(len(parts)))


def _in(field: str, names: str) -> str:
    """`field` set and one of `variables.<names>` (a reference's `name` is optional in the core API)."""
    owner, _, leaf = field.rpartition(".")
    return f"(has({owner}.{leaf}) && {field} in variables.{names})" if owner else f"{field} in variables.{names}"


def _env(var: str, env_from: bool) -> str:
    """A container's env (valueFrom) and, where the type has it, envFrom naming the controller's Secret or
    ConfigMap (the EnvoyProxy's own `container` has no envFrom; its init containers are core Containers)."""
    env = (
        f"(has({var}.env) && {var}.env.exists(e, has(e.valueFrom) && ("
        f"(has(e.valueFrom.secretKeyRef) && {_in('e.valueFrom.secretKeyRef.name', 'secrets')}) || "
        f"(has(e.valueFrom.configMapKeyRef) && {_in('e.valueFrom.configMapKeyRef.name', 'configMaps')}))))"
    )
    from_all = (
        f"(has({var}.envFrom) && {var}.envFrom.exists(f, "
        f"(has(f.secretRef) && {_in('f.secretRef.name', 'secrets')}) || "
        f"(has(f.configMapRef) && {_in('f.configMapRef.name', 'configMaps')})))"
    )
    return f"{env} || {from_all}" if env_from else env


def _volumes(workload: str) -> str:
    pod_volumes = f"{K}.{workload}.pod.volumes"
    projected = (
        "(has(v.projected) && has(v.projected.sources) && v.projected.sources.exists(s, "
        f"(has(s.secret) && {_in('s.secret.name', 'secrets')}) || "
        f"(has(s.configMap) && {_in('s.configMap.name', 'configMaps')})))"
    )
    return (
        f"({_has(workload + '.pod.volumes')} && {pod_volumes}.exists(v, "
        f"(has(v.secret) && {_in('v.secret.secretName', 'secrets')}) || "
        f"(has(v.configMap) && {_in('v.configMap.name', 'configMaps')}) || {projected}))"
    )


def _references() -> str:
    """Any volume, env or envFrom of the proxy's container or init containers naming the controller's
    Secrets or ConfigMap."""
    found = []
    for workload in WORKLOADS:
        found.append(_volumes(workload))
        found.append(f"({_has(workload + '.container')} && {_env(f'{K}.{workload}.container', env_from=False)})")
    found.append(
        f"({_has('envoyDeployment.initContainers')} && "
        f"{K}.envoyDeployment.initContainers.exists(c, {_env('c', env_from=True)}))"
    )
    return "!variables.kube || !(" + " || ".join(found) + ")"


def envoy_proxy_guard(config: Config) -> tuple[dict[str, Any], dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding: deny EnvoyProxy objects a tenant could escalate through."""
    namespace = config.get("namespace")
    reserved = controller.reserved_names()
    names = {**reserved, "names": (*reserved["names"], *waf.reserved_names(config))}
    patch = " || ".join(f"({_has(key + '.patch')})" for key in PATCHED)
    named = " || ".join(f"({_has(key + '.name')} && {K}.{key}.name in variables.names)" for key in NAMED)
    shown = ", ".join(names["names"])
    rules = (
        admission.Rule(
            f"object.metadata.namespace == {admission.cel_string(namespace)}",
            f"EnvoyProxy objects configure proxies that Envoy Gateway's controller creates with its own "
            f"privileges, so only the platform's namespace {namespace} may hold them. Use the GatewayClasses "
            f"the platform offers, or ask the platform team for an EnvoyProxy in {namespace}.",
        ),
        admission.Rule(
            f"!variables.kube || !({patch})",
            "spec.provider.kubernetes.*.patch is applied by Envoy Gateway's controller with its own service "
            "account, which may write far more than the proxies need (Envoy Gateway v1.9.2 adds the "
            "EnvoyProxyPatch runtime flag to turn it off). Remove the patch and use the typed fields (pod, "
            "container, envoyService, envoyHpa, envoyPDB).",
        ),
        admission.Rule(
            f"!variables.kube || !({named})",
            f"spec.provider.kubernetes.*.name reuses a name of the Envoy Gateway controller or the WAF ({shown}): "
            "the controller would overwrite its own or the WAF's Deployment, Service or service account with the "
            "proxies'. Choose another name, or leave it out (Envoy Gateway names the proxies' resources itself).",
        ),
        admission.Rule(
            _references(),
            f"a volume or env reference names the Envoy Gateway controller's Secrets "
            f"({', '.join(names['secrets'])}) or ConfigMap ({', '.join(names['configMaps'])}): the proxies "
            "would read the controller's certificates and keys or its configuration. Reference your own "
            "Secrets and ConfigMaps.",
        ),
    )
    variables = (
        ("kube", "has(object.spec.provider) && has(object.spec.provider.kubernetes)"),
        *((key, "[" + ", ".join(admission.cel_string(n) for n in values) + "]") for key, values in names.items()),
    )
    return admission.objects(config, envoy_proxy_guard_name(config), ENVOY_PROXY_RESOURCE, rules, variables=variables)


BACKEND_RESOURCE = admission.Resource("gateway.envoyproxy.io", "v1alpha1", "backends")
# Addresses a tenant's Backend must not aim the proxies at, matched as text (RE2; CEL's IP library is not in
# every API server the block supports, and the unit tests' CEL engine lacks it). `[.]` instead of `\.`: the
# expressions stay free of escapes. IPv4: loopback, "this network" (0.0.0.0/8), link-local (169.254.0.0/16:
# AWS, GCP, Azure, OpenStack and ECS metadata), Alibaba Cloud's metadata 100.100.100.200. IPv6 (any case):
# loopback and unspecified in every spelling of zeros, IPv4-mapped addresses (they would reopen the IPv4
# ranges), link-local fe80::/10, AWS's metadata prefix fd00:ec2::/32.
FORBIDDEN_IPV4 = "^(127|0)[.]|^169[.]254[.]|^100[.]100[.]100[.]200$"
FORBIDDEN_IPV6 = "(?i)^([0:]*:[0:]*1?|[0:]*:ffff:.*|fe[89ab][0-9a-f]:.*|fd00:0?ec2:.*)$"
# Names that resolve to the same places: localhost (and *.localhost, RFC 6761, and the ip6- names of the
# kubelet's /etc/hosts), the metadata services' names, and those IPv4 addresses written as a hostname (the CRD's
# hostname pattern admits 169.254.169.254, and Envoy resolves a numeric name to itself).
FORBIDDEN_HOSTS = (
    "^(localhost|.*[.]localhost|ip6-localhost|ip6-loopback|metadata|metadata[.]google[.]internal|instance-data|"
    "instance-data[.]ec2[.]internal|(127|0)([.][0-9]+){3}|169[.]254([.][0-9]+){2}|100[.]100[.]100[.]200)[.]?$"
)


def backend_guard_name(config: Config) -> str:
    return f"{config.block_name}-backend-guard"


def backend_guard(config: Config) -> tuple[dict[str, Any], dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding: deny Backends that aim the proxies at the node's or pod's own
    loopback, link-local and cloud metadata addresses, the proxies' own ports, a Unix socket inside the proxy
    pod, or wherever a request's Host header says (DynamicResolver)."""
    ports = sorted(proxy_ports.RESERVED)
    shown_ports = ", ".join(f"{port} ({what})" for port, what in sorted(proxy_ports.RESERVED.items()))
    every = "!has(object.spec.endpoints) || object.spec.endpoints.all(e, {})"
    rules = (
        admission.Rule(
            "!has(object.spec.type) || object.spec.type != 'DynamicResolver'",
            "a DynamicResolver Backend sends each request wherever its Host header points, cloud metadata and "
            "the proxies' own loopback included. List the endpoints (type Endpoints).",
        ),
        admission.Rule(
            every.format(
                "!has(e.ip) || !(e.ip.address.matches(variables.forbiddenIPv4) || "
                "e.ip.address.matches(variables.forbiddenIPv6))"
            ),
            "spec.endpoints[].ip.address is a loopback, unspecified, link-local or cloud metadata address "
            "(127.0.0.0/8, 0.0.0.0/8, 169.254.0.0/16 with 169.254.169.254, 100.100.100.200, ::1, ::, "
            "IPv4-mapped, fe80::/10, fd00:ec2::/32): from a proxy it reaches the proxy's own pod or node, or "
            "the cloud's credentials. Point it at your service's address.",
        ),
        admission.Rule(
            every.format("!has(e.fqdn) || !e.fqdn.hostname.matches(variables.forbiddenHosts)"),
            "spec.endpoints[].fqdn.hostname names localhost or a cloud metadata service (localhost, "
            "*.localhost, ip6-localhost, metadata, metadata.google.internal, instance-data, or a loopback, "
            "link-local or metadata address written as a name): from a proxy it reaches the proxy's own pod or "
            "the cloud's credentials. Point it at your service's name.",
        ),
        admission.Rule(
            every.format(
                "!(has(e.ip) && e.ip.port in variables.proxyPorts) && "
                "!(has(e.fqdn) && e.fqdn.port in variables.proxyPorts)"
            ),
            f"spec.endpoints[].*.port is one of the proxies' own ports ({shown_ports}): Envoy's admin "
            "interface and its statistics are not a backend. Use your service's port.",
        ),
        admission.Rule(
            every.format("!has(e.unix)"),
            "spec.endpoints[].unix is a socket inside the proxy's own pod, which tenants' routes must not "
            "reach. Use an ip or fqdn endpoint.",
        ),
    )
    variables = (
        ("forbiddenIPv4", admission.cel_string(FORBIDDEN_IPV4)),
        ("forbiddenIPv6", admission.cel_string(FORBIDDEN_IPV6)),
        ("forbiddenHosts", admission.cel_string(FORBIDDEN_HOSTS)),
        ("proxyPorts", "[" + ", ".join(str(port) for port in ports) + "]"),
    )
    return admission.objects(config, backend_guard_name(config), BACKEND_RESOURCE, rules, variables=variables)


def build(config: Config) -> list[Step]:
    steps = []
    if config.get("tenant_guards.envoy_proxy"):
        # Before the block's own EnvoyProxies (same phase, earlier component): they pass it on every apply.
        steps += admission.steps(envoy_proxy_guard(config), Phase.PROXY_CONFIG)
    if config.get("tenant_guards.backends"):
        steps += admission.steps(backend_guard(config), Phase.PROXY_CONFIG)
    return steps


def check(values: Mapping[str, Any], raw: Mapping[str, Any]) -> Checked:
    """Switched off on a controller without Envoy Gateway's own EnvoyProxy checks (advisories.
    ENVOY_PROXY_COLLISIONS): say what is then open."""
    guards = values["tenant_guards"]
    warnings = []
    controller_tag = str(values["image"]["controller"]["tag"])
    row = advisories.ENVOY_PROXY_COLLISIONS
    if not guards["envoy_proxy"] and advisories.fixes(row, controller_tag) is False:
        warnings.append(
            f"config.tenant_guards.envoy_proxy: false on Envoy Gateway {controller_tag}, which lacks {row.fixed}'s "
            "EnvoyProxy checks: anyone who may write an EnvoyProxy can run proxies with the controller's names, "
            "Secrets or patches (docs/security.md#tenant-envoyproxy-objects); keep it true unless only the "
            "platform team can write EnvoyProxy objects"
        )
    return [], warnings
