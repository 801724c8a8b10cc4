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

`tenant_guards.listeners`: Gateways of the block's classes may not combine listeners that Envoy Gateway v1.9.1
translates into filter chains Envoy rejects (advisories.EMPTY_MATCH_ON_A_SHARED_PORT, MERGED_HOSTNAME_CLASH):
Envoy then keeps the port's previous listener and refuses every later change to it, for every Gateway merged
onto it. A policy sees one object, so it judges a Gateway's own listeners and, on the merged shared class,
its listeners against the bootstrap Gateway's (known at render); two tenants' Gateways against each other
and TLSRoute hostnames are out of its reach (docs/security.md names them, EnvoyXdsConfigRejected pages).
Rendered only while the configured controller lacks the fixes (v1.9.2).

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


GATEWAY_RESOURCE = admission.Resource("gateway.networking.k8s.io", "v1", "gateways")
LISTENER_ROWS = (advisories.EMPTY_MATCH_ON_A_SHARED_PORT, advisories.MERGED_HOSTNAME_CLASH)


def listener_guard_name(config: Config) -> str:
    return f"{config.block_name}-listener-guard"


def listener_guard_needed(config: Config) -> bool:
    """On (the default) and the configured controller lacks a fix the guard stands in for (a tag that names
    no version counts as lacking it)."""
    tag = str(config.get("image.controller.tag"))
    return bool(config.get("tenant_guards.listeners")) and any(
        advisories.fixes(row, tag) is not True for row in LISTENER_ROWS
    )


def _cel_list(values: list[Any]) -> str:
    return "[" + ", ".join(admission.cel_string(v) if isinstance(v, str) else str(v) for v in values) + "]"


def listener_guard(config: Config) -> tuple[dict[str, Any], dict[str, Any]]:
    """ValidatingAdmissionPolicy + binding: deny Gateways of the block's classes whose listeners Envoy
    Gateway v1.9.1 turns into filter chains Envoy rejects (the bootstrap Gateway's own are refused at
    render: components/gateway.py)."""
    shared = config.get("gatewayclass.shared.name")
    dedicated = config.get("gatewayclass.dedicated.name")
    tag = config.get("image.controller.tag")
    owner = f"{config.get('namespace')}/{config.get('default_gateway.name')}"
    merged = bool(config.get("default_gateway.enabled") and config.get("gatewayclass.shared.merge_gateways"))
    bootstrap = config.get("default_gateway.listeners") if merged else []
    tls_ports = sorted({lst["port"] for lst in bootstrap if lst["protocol"] == "TLS"})
    catch_all_ports = sorted({lst["port"] for lst in bootstrap if lst["protocol"] == "HTTPS" and "hostname" not in lst})

    def hosts(protocol: str) -> list[str]:
        return sorted(
            {
                f"{lst['port']}/{lst['hostname']}"
                for lst in bootstrap
                if lst["protocol"] == protocol and "hostname" in lst
            }
        )

    on_shared = f"object.spec.gatewayClassName != {admission.cel_string(shared)} || "
    rules = [
        admission.Rule(
            "!object.spec.listeners.exists(h, h.protocol == 'HTTPS' && !has(h.hostname) && "
            "object.spec.listeners.exists(t, t.protocol == 'TLS' && t.port == h.port))",
            "a TLS listener and an HTTPS listener without hostname share a port on this Gateway: while the TLS "
            f"listener has no TLSRoute (as when it is created, and after its last route goes), Envoy Gateway {tag} "
            "gives both the same empty filter-chain match, and Envoy rejects that port's listener and every "
            "later change to it (envoyproxy/gateway#9341, fixed in v1.9.2). Give the HTTPS listener a hostname, "
            "or put one of the two on another port.",
        )
    ]
    variables: list[tuple[str, str]] = []
    if tls_ports:
        variables.append(("bootstrapTlsPorts", _cel_list(tls_ports)))
        rules.append(
            admission.Rule(
                on_shared + "!object.spec.listeners.exists(h, h.protocol == 'HTTPS' && !has(h.hostname) && "
                "h.port in variables.bootstrapTlsPorts)",
                f"class {shared} merges Gateways, so an HTTPS listener without hostname on port "
                f"{', '.join(map(str, tls_ports))} shares one Envoy listener with {owner}'s TLS listener: while "
                f"that has no TLSRoute, Envoy Gateway {tag} gives both the same empty filter-chain match, and "
                f"Envoy rejects the port's listener for every Gateway of {shared} and every later change to it "
                f"(envoyproxy/gateway#9341, fixed in v1.9.2). Give the HTTPS listener a hostname, use another "
                f"port, or the {dedicated} class.",
            )
        )
    if catch_all_ports:
        variables.append(("bootstrapCatchAllHttpsPorts", _cel_list(catch_all_ports)))
        rules.append(
            admission.Rule(
                on_shared + "!object.spec.listeners.exists(t, t.protocol == 'TLS' && "
                "t.port in variables.bootstrapCatchAllHttpsPorts)",
                f"class {shared} merges Gateways, so a TLS listener on port {', '.join(map(str, catch_all_ports))} "
                f"shares one Envoy listener with {owner}'s HTTPS listener without hostname: while the TLS "
                f"listener has no TLSRoute, Envoy Gateway {tag} gives both the same empty filter-chain match, and "
                f"Envoy rejects the port's listener for every Gateway of {shared} and every later change to it "
                f"(envoyproxy/gateway#9341, fixed in v1.9.2). Use another port, or the {dedicated} class.",
            )
        )
    for protocol, other, variable in (("HTTPS", "TLS", "bootstrapTlsHosts"), ("TLS", "HTTPS", "bootstrapHttpsHosts")):
        taken = hosts(other)
        if not taken:
            continue
        variables.append((variable, _cel_list(taken)))
        rules.append(
            admission.Rule(
                on_shared + f"!object.spec.listeners.exists(l, l.protocol == '{protocol}' && has(l.hostname) && "
                f"(string(l.port) + '/' + l.hostname) in variables.{variable})",
                f"class {shared} merges Gateways, so a {protocol} listener with the port and hostname of a "
                f"{other} listener of {owner} ({', '.join(taken)}) gets the same SNI match as that one, and Envoy "
                f"rejects the port's listener for every Gateway of {shared} and every later change to it "
                f"(envoyproxy/gateway#10013, fixed in v1.9.2). Use another hostname or port, or the {dedicated} "
                "class.",
            )
        )
    return admission.objects(
        config,
        listener_guard_name(config),
        GATEWAY_RESOURCE,
        tuple(rules),
        variables=tuple(variables),
        match_conditions=(
            ("blockClass", f"object.spec.gatewayClassName in {_cel_list([shared, dedicated])}"),
            (
                "notTheDefaultGateway",
                f"object.metadata.namespace != {admission.cel_string(config.get('namespace'))} || "
                f"object.metadata.name != {admission.cel_string(config.get('default_gateway.name'))}",
            ),
        ),
    )


def build(config: Config) -> list[Step]:
    steps = []
    if listener_guard_needed(config):
        # Before the Gateways (the bootstrap one is exempt, but a tenant's applied meanwhile is not).
        steps += admission.steps(listener_guard(config), Phase.GATEWAYCLASS)
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
