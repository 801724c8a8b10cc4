"""Tenant objects for the admission tests, written once: the unit tests evaluate the rendered admission
policies on them with a CEL engine, the cluster tests send them to the real API server.

CASES: EnvoyExtensionPolicies against waf.enforce. GATEWAY_CASES: Gateways against the PROXY protocol port
guard (config PROXY_PROTOCOL_CONFIG: default Gateway on 80 and 443, merged shared class).
Each case: (id, object, expected). expected None = admitted; otherwise a fragment of the denial message.
Every object is one its CRD accepts (the unit tests check that through the gate), so a denial is the
admission policy's doing, never the schema's.
"""

from __future__ import annotations

from typing import Any

TENANT_NAMESPACE = "tenant-waf"
GW_API = "gateway.networking.k8s.io"
LUA = [{"type": "Inline", "inline": "function envoy_on_request(handle) end"}]
OWN_EXT_PROC = [{"backendRefs": [{"name": "authz", "port": 9000}]}]
MERGE_HINT = "spec.mergeType: StrategicMerge"
EXT_PROC_HINT = "replaces the Gateway policy's extProc list"


def policy(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyExtensionPolicy",
        "metadata": {"name": name, "namespace": TENANT_NAMESPACE},
        "spec": spec,
    }


def ref(kind: str, name: str = "shop") -> dict[str, str]:
    return {"group": GW_API, "kind": kind, "name": name}


CASES: list[tuple[str, dict[str, Any], str | None]] = [
    # Admitted: route policies that merge and bring no extProc keep the WAF in front.
    (
        "route-merged-lua",
        policy("route-merged-lua", targetRefs=[ref("HTTPRoute")], mergeType="StrategicMerge", lua=LUA),
        None,
    ),
    (
        "grpcroute-json-merged",
        policy("grpcroute-json-merged", targetRefs=[ref("GRPCRoute")], mergeType="JSONMerge", lua=LUA),
        None,
    ),
    # Admitted: what the WAF never covered anyway (a tenant's own Gateway, TLS passthrough / TCP routes).
    ("own-gateway", policy("own-gateway", targetRefs=[ref("Gateway", "tenant-gw")], extProc=OWN_EXT_PROC), None),
    ("tcproute", policy("tcproute", targetRefs=[ref("TCPRoute")], lua=LUA), None),
    ("tlsroute-ext-proc", policy("tlsroute-ext-proc", targetRefs=[ref("TLSRoute")], extProc=OWN_EXT_PROC), None),
    (
        "selector-gateways",
        policy("selector-gateways", targetSelectors=[{"kind": "Gateway", "matchLabels": {"team": "a"}}], lua=LUA),
        None,
    ),
    # Denied: no mergeType on HTTP routes replaces the Gateway's policy, WAF included.
    ("route-no-merge", policy("route-no-merge", targetRefs=[ref("HTTPRoute")], lua=LUA), MERGE_HINT),
    ("grpcroute-no-merge", policy("grpcroute-no-merge", targetRefs=[ref("GRPCRoute")], lua=LUA), MERGE_HINT),
    (
        "deprecated-targetref",
        policy("deprecated-targetref", targetRef=ref("HTTPRoute"), lua=LUA),
        MERGE_HINT,
    ),
    (
        "selector-routes",
        policy("selector-routes", targetSelectors=[{"kind": "HTTPRoute", "matchLabels": {"app": "shop"}}], lua=LUA),
        MERGE_HINT,
    ),
    (
        "route-among-others",
        policy("route-among-others", targetRefs=[ref("TCPRoute"), ref("HTTPRoute", "web")], lua=LUA),
        MERGE_HINT,
    ),
    ("route-empty-policy", policy("route-empty-policy", targetRefs=[ref("HTTPRoute")]), MERGE_HINT),
    # Denied: merged, but its own extProc list replaces the WAF's.
    (
        "route-merged-ext-proc",
        policy(
            "route-merged-ext-proc", targetRefs=[ref("HTTPRoute")], mergeType="StrategicMerge", extProc=OWN_EXT_PROC
        ),
        EXT_PROC_HINT,
    ),
]


HETZNER = {"load-balancer.hetzner.cloud/uses-proxyprotocol": "true"}
DEFAULT_LISTENERS = [
    {"name": "http", "protocol": "HTTP", "port": 80, "allowed_routes_namespaces": "All"},
    {"name": "tls", "protocol": "TLS", "port": 443, "tls_mode": "Passthrough", "allowed_routes_namespaces": "All"},
]


def proxy_protocol_config(merge: bool = True, **proxy_protocol: Any) -> dict[str, Any]:
    return {
        "gatewayclass": {"shared": {"merge_gateways": merge}},
        "default_gateway": {"enabled": True, "listeners": DEFAULT_LISTENERS},
        "client_traffic": {
            "enabled": True,
            "proxy_protocol": {"enabled": True, "service_annotations": HETZNER, **proxy_protocol},
        },
    }


PROXY_PROTOCOL_CONFIG = proxy_protocol_config()


def gateway(name: str, class_name: str, *listeners: tuple[str, int], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": f"{GW_API}/v1",
        "kind": "Gateway",
        "metadata": {"name": name, "namespace": TENANT_NAMESPACE},
        "spec": {
            "gatewayClassName": class_name,
            "listeners": [{"name": f"l{i}", "protocol": p, "port": port} for i, (p, port) in enumerate(listeners)],
            **spec,
        },
    }


PORTS_HINT = "only ports 80, 443"
NO_LISTENER_SETS = {"namespaces": {"from": "None"}}
ALL_LISTENER_SETS = {"namespaces": {"from": "All"}}
GATEWAY_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    ("tenant-80", gateway("a", "eg-shared", ("HTTP", 80)), None),
    ("tenant-80-and-443", gateway("b", "eg-shared", ("HTTP", 80), ("HTTPS", 443)), None),
    ("tenant-listenersets-none", gateway("c", "eg-shared", ("HTTP", 80), allowedListeners=NO_LISTENER_SETS), None),
    ("dedicated-any-port", gateway("d", "eg-dedicated", ("HTTP", 8080), ("UDP", 5353)), None),
    ("tenant-8080", gateway("e", "eg-shared", ("HTTP", 80), ("HTTP", 8080)), PORTS_HINT),
    ("tenant-udp-443", gateway("f", "eg-shared", ("UDP", 443)), PORTS_HINT),
    (
        "tenant-listenersets-all",
        gateway("g", "eg-shared", ("HTTP", 80), allowedListeners=ALL_LISTENER_SETS),
        "ListenerSets",
    ),
]


# The upgrade scenario's tenant (tests/cluster/test_upgrade.py): what a team builds on the block's classes,
# each of which an upgrade must carry over: an HTTPRoute and a TLSRoute on the shared default Gateway
# (listeners http and tls, PROXY_PROTOCOL_CONFIG) and a Gateway of its own on eg-dedicated with three listeners:
# HTTP, HTTPS terminated with the tenant's certificate (Secret UPGRADE_TLS_SECRET: the proxies get it over SDS,
# what envoyproxy/gateway#9918 and #9519 lost on upgrade and controller restart) and TLS passed through to the
# backend's own certificate, each with a route.
UPGRADE_NAMESPACE = "tenant-upgrade"
UPGRADE_DEDICATED_PORT = 9080
UPGRADE_HTTPS_PORT = 9443
UPGRADE_PASSTHROUGH_PORT = 9444
UPGRADE_TLS_SECRET = "own-tls"
UPGRADE_HOST = "own.example.com"
UPGRADE_PASSTHROUGH_HOST = "secure.example.com"


def upgrade_tenant(block_namespace: str, backend: str = "echo") -> list[dict[str, Any]]:
    def route(kind: str, name: str, parent: str, namespace: str, section: str, port: int) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "parentRefs": [{"name": parent, "namespace": namespace, "sectionName": section}],
            "rules": [{"backendRefs": [{"name": backend, "port": port}]}],
        }
        if kind == "TLSRoute":
            spec["hostnames"] = [UPGRADE_PASSTHROUGH_HOST]
        return {
            "apiVersion": f"{GW_API}/v1",
            "kind": kind,
            "metadata": {"name": name, "namespace": UPGRADE_NAMESPACE},
            "spec": spec,
        }

    own = {
        "apiVersion": f"{GW_API}/v1",
        "kind": "Gateway",
        "metadata": {"name": "own", "namespace": UPGRADE_NAMESPACE},
        "spec": {
            "gatewayClassName": "eg-dedicated",
            "listeners": [
                {"name": "http", "protocol": "HTTP", "port": UPGRADE_DEDICATED_PORT},
                {
                    "name": "https",
                    "protocol": "HTTPS",
                    "port": UPGRADE_HTTPS_PORT,
                    "hostname": UPGRADE_HOST,
                    "tls": {"mode": "Terminate", "certificateRefs": [{"name": UPGRADE_TLS_SECRET}]},
                },
                {
                    "name": "tls",
                    "protocol": "TLS",
                    "port": UPGRADE_PASSTHROUGH_PORT,
                    "hostname": UPGRADE_PASSTHROUGH_HOST,
                    "tls": {"mode": "Passthrough"},
                },
            ],
        },
    }
    return [
        route("HTTPRoute", "shop", "eg-shared", block_namespace, "http", 80),
        route("TLSRoute", "secure", "eg-shared", block_namespace, "tls", 443),
        own,
        route("HTTPRoute", "own", "own", UPGRADE_NAMESPACE, "http", 80),
        route("HTTPRoute", "own-https", "own", UPGRADE_NAMESPACE, "https", 80),
        route("TLSRoute", "own-tls", "own", UPGRADE_NAMESPACE, "tls", 443),
    ]


# ---- EnvoyProxy objects against tenant_guards.envoy_proxy (the block's namespace: the default one).
BLOCK_NAMESPACE = "envoy-gateway-system"
NAMESPACE_HINT = "only the platform's namespace envoy-gateway-system may hold them"
PATCH_HINT = "spec.provider.kubernetes.*.patch"
NAME_HINT = "reuses a name of the Envoy Gateway controller or the WAF"
REFERENCE_HINT = "names the Envoy Gateway controller's Secrets"


def envoy_proxy(name: str, namespace: str = BLOCK_NAMESPACE, **kubernetes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"provider": {"type": "Kubernetes", "kubernetes": kubernetes}} if kubernetes else {}
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "EnvoyProxy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def _secret_env(name: str) -> list[dict[str, Any]]:
    return [{"name": "KEY", "valueFrom": {"secretKeyRef": {"name": name, "key": "tls.key"}}}]


ENVOY_PROXY_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    # Admitted: the platform's own, typed fields, its own Secrets and ConfigMaps, names of its own.
    ("platform-empty", envoy_proxy("platform-empty"), None),
    (
        "platform-typed",
        envoy_proxy(
            "platform-typed",
            envoyDeployment={
                "name": "edge-proxies",
                "replicas": 2,
                "pod": {
                    "volumes": [
                        {"name": "own", "secret": {"secretName": "edge-certs"}},
                        {"name": "cfg", "configMap": {"name": "edge-config"}},
                        {"name": "tmp", "emptyDir": {}},
                    ]
                },
                "container": {"env": [*_secret_env("edge-certs"), {"name": "PLAIN", "value": "envoy-gateway"}]},
            },
            envoyService={"name": "edge", "type": "ClusterIP"},
            envoyServiceAccount={"name": "edge-proxies"},
        ),
        None,
    ),
    # Refused: another namespace, even an empty one (Gateways reach it through infrastructure.parametersRef).
    ("tenant-namespace", envoy_proxy("mine", namespace="tenant-waf"), NAMESPACE_HINT),
    (
        "deployment-patch",
        envoy_proxy(
            "deployment-patch",
            envoyDeployment={"patch": {"type": "StrategicMerge", "value": {"spec": {"template": {"spec": {}}}}}},
        ),
        PATCH_HINT,
    ),
    (
        "service-patch",
        envoy_proxy("service-patch", envoyService={"patch": {"value": {"metadata": {"annotations": {"a": "b"}}}}}),
        PATCH_HINT,
    ),
    (
        "pdb-patch",
        envoy_proxy("pdb-patch", envoyPDB={"minAvailable": 1, "patch": {"value": {"spec": {}}}}),
        PATCH_HINT,
    ),
    # Admitted: names that only look like the WAF's (the block "envoy": its WAF is envoy-waf).
    (
        "named-like-the-waf",
        envoy_proxy(
            "like-waf",
            envoyDeployment={"name": "envoy-waf-edge"},
            envoyService={"name": "my-envoy-waf"},
            envoyServiceAccount={"name": "defaults"},
        ),
        None,
    ),
    ("deployment-named-controller", envoy_proxy("named", envoyDeployment={"name": "envoy-gateway"}), NAME_HINT),
    # Refused: the WAF's names in the same namespace (its Deployment, Service, and the service account its
    # pods run as), whether or not the WAF is on.
    ("deployment-named-waf", envoy_proxy("waf-deploy", envoyDeployment={"name": "envoy-waf"}), NAME_HINT),
    ("service-named-waf", envoy_proxy("waf-svc", envoyService={"name": "envoy-waf"}), NAME_HINT),
    ("daemonset-named-waf", envoy_proxy("waf-ds", envoyDaemonSet={"name": "envoy-waf"}), NAME_HINT),
    ("waf-service-account", envoy_proxy("waf-sa", envoyServiceAccount={"name": "default"}), NAME_HINT),
    ("service-named-config", envoy_proxy("svc", envoyService={"name": "envoy-gateway-config"}), NAME_HINT),
    (
        "certgen-service-account",
        envoy_proxy("sa", envoyServiceAccount={"name": "envoy-gateway-gateway-helm-certgen"}),
        NAME_HINT,
    ),
    (
        "controller-secret-volume",
        envoy_proxy(
            "vol",
            envoyDeployment={"pod": {"volumes": [{"name": "steal", "secret": {"secretName": "envoy-gateway"}}]}},
        ),
        REFERENCE_HINT,
    ),
    (
        "daemonset-config-volume",
        envoy_proxy(
            "ds-vol",
            envoyDaemonSet={"pod": {"volumes": [{"name": "cfg", "configMap": {"name": "envoy-gateway-config"}}]}},
        ),
        REFERENCE_HINT,
    ),
    (
        "projected-hmac",
        envoy_proxy(
            "projected",
            envoyDeployment={
                "pod": {"volumes": [{"name": "p", "projected": {"sources": [{"secret": {"name": "envoy-oidc-hmac"}}]}}]}
            },
        ),
        REFERENCE_HINT,
    ),
    (
        "env-controller-key",
        envoy_proxy("env", envoyDeployment={"container": {"env": _secret_env("envoy-gateway")}}),
        REFERENCE_HINT,
    ),
    (
        "init-env-from",
        envoy_proxy(
            "init",
            envoyDeployment={
                "initContainers": [
                    {"name": "grab", "image": "busybox", "envFrom": [{"secretRef": {"name": "envoy-rate-limit"}}]}
                ]
            },
        ),
        REFERENCE_HINT,
    ),
]


# ---- Backend objects against tenant_guards.backends (a tenant namespace: the guard covers every namespace).
ADDRESS_HINT = "is a loopback, unspecified, link-local or cloud metadata address"
HOST_HINT = "names localhost or a cloud metadata service"
PORT_HINT = "is one of the proxies' own ports"
UNIX_HINT = "is a socket inside the proxy's own pod"
RESOLVER_HINT = "a DynamicResolver Backend sends each request wherever its Host header points"


def backend(name: str, *endpoints: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "gateway.envoyproxy.io/v1alpha1",
        "kind": "Backend",
        "metadata": {"name": name, "namespace": TENANT_NAMESPACE},
        "spec": {**({"endpoints": list(endpoints)} if endpoints else {}), **spec},
    }


def ip(address: str, port: int = 8080) -> dict[str, Any]:
    return {"ip": {"address": address, "port": port}}


def fqdn(hostname: str, port: int = 443) -> dict[str, Any]:
    return {"fqdn": {"hostname": hostname, "port": port}}


BACKEND_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    # Admitted: a tenant's own services, addresses that only look alike.
    ("private-ip", backend("private-ip", ip("10.0.0.5")), None),
    ("contains-127", backend("contains-127", ip("10.127.0.1"), ip("192.0.2.127")), None),
    ("ipv6-global", backend("ipv6-global", ip("2001:db8::1")), None),
    ("ipv6-ending-in-1", backend("ipv6-ending-in-1", ip("2001:db8:0:0:0:0:0:1"), ip("0:0:0:0:0:0:0:11")), None),
    ("fqdn", backend("fqdn", fqdn("api.example.com"), fqdn("localhost-api.example.com")), None),
    ("fqdn-numeric-labels", backend("fqdn-numeric-labels", fqdn("127.example.com"), fqdn("10.0.0.5")), None),
    ("port-18999", backend("port-18999", ip("10.0.0.5", 18999), ip("10.0.0.6", 19004)), None),
    # Refused: the proxy's own pod or node, cloud metadata, the proxies' ports, sockets, any host.
    ("loopback", backend("loopback", ip("127.0.0.1")), ADDRESS_HINT),
    ("loopback-far", backend("loopback-far", ip("10.0.0.5"), ip("127.12.0.9")), ADDRESS_HINT),
    ("unspecified", backend("unspecified", ip("0.0.0.0")), ADDRESS_HINT),
    ("metadata", backend("metadata", ip("169.254.169.254", 80)), ADDRESS_HINT),
    ("ecs-metadata", backend("ecs-metadata", ip("169.254.170.2", 80)), ADDRESS_HINT),
    ("alibaba-metadata", backend("alibaba-metadata", ip("100.100.100.200", 80)), ADDRESS_HINT),
    ("ipv6-loopback", backend("ipv6-loopback", ip("0:0:0:0:0:0:0:1")), ADDRESS_HINT),
    ("ipv6-loopback-short", backend("ipv6-loopback-short", ip("0::1")), ADDRESS_HINT),
    ("ipv6-unspecified", backend("ipv6-unspecified", ip("0::0")), ADDRESS_HINT),
    ("ipv6-link-local", backend("ipv6-link-local", ip("fe80::1")), ADDRESS_HINT),
    ("ipv6-link-local-upper", backend("ipv6-link-local-upper", ip("FEBF::a")), ADDRESS_HINT),
    ("aws-ipv6-metadata", backend("aws-ipv6-metadata", ip("fd00:ec2::254", 80)), ADDRESS_HINT),
    ("ipv4-mapped", backend("ipv4-mapped", ip("0:0:0:0:0:ffff:7f00:1")), ADDRESS_HINT),
    ("localhost", backend("localhost", fqdn("localhost", 80)), HOST_HINT),
    ("sub-localhost", backend("sub-localhost", fqdn("admin.localhost", 80)), HOST_HINT),
    ("gcp-metadata", backend("gcp-metadata", fqdn("metadata.google.internal", 80)), HOST_HINT),
    ("aws-instance-data", backend("aws-instance-data", fqdn("instance-data.ec2.internal.", 80)), HOST_HINT),
    # The CRD's hostname pattern admits an IPv4 address, which Envoy resolves to itself (found in review).
    ("metadata-as-name", backend("metadata-as-name", fqdn("169.254.169.254", 80)), HOST_HINT),
    ("loopback-as-name", backend("loopback-as-name", fqdn("127.0.0.1.", 8080)), HOST_HINT),
    ("alibaba-as-name", backend("alibaba-as-name", fqdn("100.100.100.200", 80)), HOST_HINT),
    ("ip6-localhost", backend("ip6-localhost", fqdn("ip6-localhost", 80)), HOST_HINT),
    ("admin-port", backend("admin-port", ip("10.0.0.5", 19000)), PORT_HINT),
    ("stats-port", backend("stats-port", fqdn("envoy-stats.example.com", 19001)), PORT_HINT),
    ("unix", backend("unix", {"unix": {"path": "/var/run/envoy.sock"}}), UNIX_HINT),
    ("dynamic-resolver", backend("dynamic-resolver", type="DynamicResolver"), RESOLVER_HINT),
]


# ---- Gateways against tenant_guards.listeners (config LISTENER_CONFIG: the reference README's bootstrap
# Gateway, HTTP on 80 and TLS Passthrough on 443 without hostname, on the merged shared class).
LISTENER_NAMESPACE = "tenant-listeners"
LISTENER_CONFIG: dict[str, Any] = {"default_gateway": {"enabled": True}}
ONE_GATEWAY_HINT = "share a port on this Gateway"
BOOTSTRAP_TLS_HINT = "shares one Envoy listener with envoy-gateway-system/eg-shared's TLS listener"
SAME_HOSTNAME_HINT = "with the port and hostname of a TLS listener of envoy-gateway-system/eg-shared"
LISTENER_CERT = "shop-tls"


def https_listener(name: str, port: int = 443, hostname: str | None = None) -> dict[str, Any]:
    listener: dict[str, Any] = {"name": name, "protocol": "HTTPS", "port": port}
    if hostname:
        listener["hostname"] = hostname
    listener["tls"] = {"mode": "Terminate", "certificateRefs": [{"kind": "Secret", "name": LISTENER_CERT}]}
    return listener


def tls_listener(name: str, port: int = 443, hostname: str | None = None) -> dict[str, Any]:
    listener: dict[str, Any] = {"name": name, "protocol": "TLS", "port": port, "tls": {"mode": "Passthrough"}}
    if hostname:
        listener["hostname"] = hostname
    return listener


def listener_gateway(name: str, class_name: str, *listeners: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GW_API}/v1",
        "kind": "Gateway",
        "metadata": {"name": name, "namespace": LISTENER_NAMESPACE},
        "spec": {"gatewayClassName": class_name, "listeners": list(listeners)},
    }


LISTENER_CASES: list[tuple[str, dict[str, Any], str | None]] = [
    # Refused: what Envoy Gateway v1.9.1 turns into a listener Envoy rejects.
    (
        "catch-all-https-beside-tls",
        listener_gateway(
            "both", "eg-dedicated", https_listener("https"), tls_listener("tls", hostname="*.example.com")
        ),
        ONE_GATEWAY_HINT,
    ),
    (
        "catch-all-https-on-the-shared-tls-port",
        listener_gateway("catch-all", "eg-shared", https_listener("https")),
        BOOTSTRAP_TLS_HINT,
    ),
    # Admitted: a hostname tells the filter chains apart; another port or class is another Envoy listener.
    (
        "https-with-hostname-beside-tls",
        listener_gateway(
            "named",
            "eg-dedicated",
            https_listener("https", hostname="shop.example.com"),
            tls_listener("tls", hostname="*.example.com"),
        ),
        None,
    ),
    (
        "https-with-hostname-on-the-shared-tls-port",
        listener_gateway("hostname-on-443", "eg-shared", https_listener("https", hostname="shop.example.com")),
        None,
    ),
    (
        "catch-all-https-on-another-port",
        listener_gateway("other-port", "eg-shared", https_listener("https", 8443)),
        None,
    ),
    ("catch-all-https-on-the-dedicated-class", listener_gateway("own", "eg-dedicated", https_listener("https")), None),
    (
        "tls-on-the-shared-tls-port",
        listener_gateway("passthrough", "eg-shared", tls_listener("tls", hostname="db.example.com")),
        None,
    ),
    (
        "another-class",
        listener_gateway("foreign", "other", https_listener("https"), tls_listener("tls", hostname="*.example.com")),
        None,
    ),
]
