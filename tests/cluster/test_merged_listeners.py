"""Listeners Envoy Gateway v1.9.1 mishandles on a shared port, on the real control plane, controller and
proxies (issue 37): where the listener guard refuses, and what the proxies do when it is off.

The reference README's platform edge: the bootstrap Gateway eg-shared (HTTP on 80, TLS Passthrough on 443
without hostname, no TLSRoute yet) on the merged shared class. Evidence is Envoy's own: the shared proxies'
`listener_manager.lds.update_rejected` (their stats listener, the path the VMPodScrape scrapes) and what the
VIP serves.

1. Guard on (the default): the API server refuses every LISTENER_CASES Gateway the CEL twin refuses
   (tests/unit/test_listener_guard.py) and admits the others (server-side dry run: nothing is created).
   Two tenants' Gateways with an HTTPS and a TLS listener on one port and hostname (envoyproxy/gateway#10013)
   are out of a policy's reach (it sees one object): admitted, and the proxies reject the port's listener,
   which EnvoyXdsConfigRejected pages on; gone again when one of them goes.
2. Guard off (`tenant_guards.listeners: false`, install again): a tenant's catch-all HTTPS Gateway on 443
   is admitted, the controller calls it Programmed, and the proxies reject the listener; a second tenant's
   HTTPS Gateway for its own hostname is Programmed too and not served (every later change to the port is
   rejected, envoyproxy/gateway#9341) until a TLSRoute attaches to the bootstrap TLS listener: then both
   hosts and the passthrough answer. Meanwhile the port's last accepted listener keeps serving (shop).
"""

from __future__ import annotations

import urllib.request
from typing import Any

import pytest

from envoy_block.components.monitoring import PROXY_METRICS_PATH
from tests.cluster.common import GW_API, condition, echo_backend, gateway_address, pod_ips
from tests.cluster.conftest import Kube
from tests.cluster.realnet import fetch
from tests.support import apiserver
from tests.support.apiserver import request
from tests.support.output import show
from tests.support.tenant_objects import (
    LISTENER_CASES,
    LISTENER_CERT,
    LISTENER_NAMESPACE,
    https_listener,
    listener_gateway,
    tls_listener,
)
from tests.translator.tenant import certificate_secret

pytestmark = pytest.mark.playbook
NS = "envoy-gateway-system"
TENANT = LISTENER_NAMESPACE
SHARED = "gateway.envoyproxy.io/owning-gatewayclass=eg-shared"
STATS_PORT = 19001
REJECTED = "envoy_listener_manager_lds_update_rejected"
GUARD = "envoy-listener-guard"
GATEWAY_API = "gateway.networking.k8s.io/v1"


def _rejected(kube: Kube) -> int:
    """Listener updates the shared proxies rejected, summed over the fleet."""
    total = 0
    for ip in sorted(pod_ips(kube, NS, SHARED)):
        with urllib.request.urlopen(f"http://{ip}:{STATS_PORT}{PROXY_METRICS_PATH}", timeout=5) as response:
            for line in response.read().decode().splitlines():
                if line.startswith(REJECTED):
                    total += int(float(line.rsplit(" ", 1)[1]))
    return total


def _status(vip: str, host: str) -> int | str:
    """What a client on the internet gets from the VIP on 443 for `host` (TLS with SNI `host`)."""
    try:
        return fetch(vip, 443, host, "/", netns=None, sni=host, timeout=3).status
    except OSError as err:
        return type(err).__name__


def _served(kube: Kube, vip: str, host: str, when: str) -> None:
    kube.wait(lambda: _status(vip, host) == 200, 90, f"{host} served through the VIP {when}")


def _route(name: str, parent: str, section: str, namespace: str = TENANT, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": GATEWAY_API,
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": TENANT},
        "spec": {
            "parentRefs": [{"name": parent, "namespace": namespace, "sectionName": section}],
            "rules": [{"backendRefs": [{"name": "echo", "port": 80}]}],
            **spec,
        },
    }


def _tls_route(name: str, parent: str, section: str, hostname: str, namespace: str = TENANT) -> dict[str, Any]:
    return {
        "apiVersion": GATEWAY_API,
        "kind": "TLSRoute",
        "metadata": {"name": name, "namespace": TENANT},
        "spec": {
            "parentRefs": [{"name": parent, "namespace": namespace, "sectionName": section}],
            "hostnames": [hostname],
            "rules": [{"backendRefs": [{"name": "echo", "port": 443}]}],
        },
    }


def _programmed(kube: Kube, name: str) -> None:
    kube.wait(
        lambda: condition(kube.get(f"{GW_API}/namespaces/{TENANT}/gateways/{name}"), "Programmed") == "True",
        90,
        f"Gateway {TENANT}/{name} Programmed by the controller",
    )


def _guard_answers(kube: Kube) -> list[str]:
    """Every LISTENER_CASES Gateway through the real API server's admission (dry run)."""
    seen = []
    for case, gateway, expected in LISTENER_CASES:
        code, body = request(kube.api, "POST", f"{GW_API}/namespaces/{TENANT}/gateways", gateway, dryRun="All")
        seen.append(f"{case}: {code}")
        if expected is None:
            assert code == 201, (case, code, body.get("message"))
        else:
            assert code == 403, (case, code, body.get("message"))
            assert f"ValidatingAdmissionPolicy '{GUARD}'" in body["message"], case
            assert expected in body["message"], (case, body["message"])
    return seen


def test_listeners_v1_9_1_mishandles_are_refused_and_shown_failing_without_the_guard(kube: Kube) -> None:
    kube.playbook("install", kube.config(default_gateway={"enabled": True})).ok()
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": TENANT}})
    try:
        echo_backend(kube, TENANT)
        kube.apply(certificate_secret(LISTENER_CERT, TENANT))
        shop = listener_gateway("shop", "eg-shared", https_listener("https", hostname="shop.example.com"))
        kube.apply(shop)
        kube.apply(_route("shop", "shop", "https"))
        vip = gateway_address(kube, NS, "eg-shared")
        _served(kube, vip, "shop.example.com", "beside the bootstrap TLS listener")

        # 1. The guard on: refused and admitted as the CEL twin says; #10013 is out of its reach.
        show("LISTENERS guard on: " + "; ".join(_guard_answers(kube)))
        before = _rejected(kube)
        clash_tls = listener_gateway("clash-tls", "eg-shared", tls_listener("tls", hostname="dup.example.com"))
        clash_https = listener_gateway("clash-https", "eg-shared", https_listener("https", hostname="dup.example.com"))
        for obj in (clash_tls, _tls_route("clash", "clash-tls", "tls", "dup.example.com"), clash_https):
            kube.apply(obj)
        kube.apply(_route("clash", "clash-https", "https"))
        kube.wait(lambda: _rejected(kube) > before, 90, "the proxies rejecting HTTPS and TLS on one hostname")
        _programmed(kube, "clash-https")
        clashed = _rejected(kube) - before
        kube.delete(clash_https)
        _served(kube, vip, "dup.example.com", "(passthrough) once the clash is gone")
        after_clash = _rejected(kube)
        assert _status(vip, "shop.example.com") == 200
        assert _rejected(kube) == after_clash, "the port's listener accepted again"
        show(f"LISTENERS #10013 (two tenants, one hostname): admitted, {clashed} listener update(s) rejected")

        # 2. The guard off: what it refuses reaches the proxies and stops the port's updates.
        kube.playbook(
            "install", kube.config(default_gateway={"enabled": True}, tenant_guards={"listeners": False})
        ).ok()
        assert kube.get(f"/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/{GUARD}") is None
        before = _rejected(kube)
        catch_all = listener_gateway("catch-all", "eg-shared", https_listener("https"))
        kube.apply(catch_all)
        kube.apply(_route("catch-all", "catch-all", "https"))
        kube.wait(lambda: _rejected(kube) > before, 90, "the proxies rejecting the catch-all HTTPS listener")
        _programmed(kube, "catch-all")
        late = listener_gateway("late", "eg-shared", https_listener("https", hostname="late.example.com"))
        kube.apply(late)
        kube.apply(_route("late", "late", "https"))
        _programmed(kube, "late")
        frozen = {host: _status(vip, host) for host in ("any.example.com", "late.example.com")}
        assert 200 not in frozen.values(), f"served while Envoy rejects the listener: {frozen}"
        # Envoy keeps the port's last accepted listener: what was live before stays live.
        assert _status(vip, "shop.example.com") == 200, "the listener accepted before the fault kept serving"
        rejected = _rejected(kube) - before

        kube.apply(_tls_route("passthrough", "eg-shared", "tls", "db.example.com", namespace=NS))
        for host in ("any.example.com", "late.example.com", "db.example.com", "shop.example.com"):
            _served(kube, vip, host, "once a TLSRoute attaches")
        show(
            f"LISTENERS guard off: catch-all HTTPS beside the bootstrap TLS listener: {rejected} listener update(s) "
            f"rejected, Programmed but not served {frozen}; served once a TLSRoute attached"
        )
    finally:
        for name in ("shop", "clash-tls", "clash-https", "catch-all", "late"):
            kube.delete(listener_gateway(name, "eg-shared"))
        apiserver.delete_namespace(kube.api, TENANT)
