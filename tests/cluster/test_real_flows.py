"""What only real pods show, on ONE install of the block on the real node, installed with
its real playbook the way users do, into a cluster that enforces what a careful owner would:

- the block's namespace enforces Pod Security `restricted`, and every namespace involved (the block's, the
  tenant's, the monitoring one, another team's) starts with a default-deny NetworkPolicy (ingress and
  egress), enforced by kube-router; the config says `network_policy.provider: kubernetes`;
- the WAF is on (the image built from waf/), PROXY protocol is on (strict), the default Gateway listens on
  HTTP 80 and TLS Passthrough 443;
- a tenant runs two backends as pods (the echo image): `echo`, opened to the proxies by the tenant's own
  policies, and `closed`, which admits everyone but which no policy lets the proxies reach; routes:
  an HTTPRoute to each, a TLSRoute (Passthrough) to echo, which terminates TLS itself.

Then, each printed in the test output:

1. Pod Security restricted at run time: every pod the block causes (certgen's Job, the controller, the proxies
   with their shutdown-manager, the WAF) started and turned Ready (certgen: Succeeded), none restarted, and a
   pod outside `restricted` is refused there (so the enforcement was on).
2. Traffic end to end: a client in a network namespace of its own (the internet) sends PROXY protocol v1
   and v2 headers, as a load balancer would, to the LoadBalancer address kube-proxy serves -> the proxy pods
   -> the backend pod; benign 200, attack 403 (the WAF), the TLSRoute answered by the backend's own TLS; the
   WAF's audit line and the backend's X-Forwarded-For name the address from the header; no header: refused.
3. The network policies enforced both ways: each flow the block needs is open, each it must forbid is
   refused, every refusal gated (its target's EndpointSlice ready before, during and after the probes, and
   the same target reached by an allowed peer right before and after). Then every rule of the block's
   policies is removed in turn from the live object: exactly the flows that need it turn red, and nothing
   else changes (the only rule no probe can judge here, the API server -> controller webhook, is named).

One install serves all three (it costs most of this file's time); the checks only read, except the rule
removals, which come last and put each rule back.
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from envoy_block.polycrate import merge_config
from tests.cluster.common import waf_lines
from tests.cluster.conftest import Kube
from tests.cluster.realnet import (
    PodWatch,
    Readiness,
    dial,
    fetch,
    internet,
    pod_netns,
    proxy_v1,
    proxy_v2,
)
from tests.cluster.realpods import backend, delete_namespaces, echo_pod_spec, gateway_address, route
from tests.harness.cluster import Cluster
from tests.harness.node import NODE_IP, deployment_ready
from tests.harness.registry import Registry
from tests.support import apiserver
from tests.support.output import show
from tests.support.tenant_objects import proxy_protocol_config
from tools.oci.images import ECHO_REF, WAF_REF

pytestmark = pytest.mark.playbook
NS = "envoy-gateway-system"
TENANT = "tenant-flows"
MONITORING = "monitoring"
OUTSIDE = "other-team"
GW = "gateway.networking.k8s.io/v1"
NETPOL = "networking.k8s.io/v1"
SHOP, CLOSED, SECURE = "shop.example.com", "closed.example.com", "secure.example.com"
END_USER, END_USER_V2 = "192.0.2.50", "192.0.2.51"  # TEST-NET-1: whom the load balancer's header names
PROBE = {"flows.test/probe": "true"}  # the test's own pods, not the block's
CERTGEN_PROBE = "app=certgen,flows.test/probe=true"
RESTRICTED_NS = {
    "pod-security.kubernetes.io/enforce": "restricted",
    "pod-security.kubernetes.io/enforce-version": "latest",
}
PROXY_POD_LABELS = {"envoy.polycrate.io/role": "proxy", "app.kubernetes.io/instance": "envoy"}
WAF_REGISTRY, _, WAF_REST = WAF_REF.partition("/")
WAF_REPOSITORY, _, WAF_TAG = WAF_REST.partition(":")


def block_config(kube: Kube) -> dict[str, Any]:
    cfg = merge_config(
        proxy_protocol_config(),
        {
            # A short drain: the uninstall at the end waits for the proxy pods' (test_proxy_rollout.py
            # judges the drain itself).
            "data_plane": {"replicas": 1, "shutdown": {"min_drain_duration": "3s", "drain_timeout": "15s"}},
            "waf": {
                "enabled": True,
                "default_policy": {"enabled": True},
                "image": {"registry": WAF_REGISTRY, "repository": WAF_REPOSITORY, "tag": WAF_TAG},
                # The flows are the subject, not the WAF's latency: at a load average of 27 on 2 cores (make
                # test's jobs side by side) a decision took longer than the default 250 ms and Envoy failed the
                # request closed with 504 (2026-12-07). The timeout itself: tests/traffic/test_alerts.py.
                "message_timeout": "2s",
            },
            # Judged after kube-proxy's DNAT: the API server's own address, as on a cluster.
            "network_policy": {"provider": "kubernetes", "api_server_cidrs": [f"{NODE_IP}/32"]},
        },
    )
    return kube.config(**cfg)


def _policy(namespace: str, name: str, selector: dict[str, str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": NETPOL,
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"podSelector": {"matchLabels": selector} if selector else {}, **spec},
    }


def _default_deny(namespace: str) -> dict[str, Any]:
    return _policy(namespace, "default-deny", {}, policyTypes=["Ingress", "Egress"])


def _namespace(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}


def _probe_pod(kube: Kube, namespace: str, name: str, labels: dict[str, str]) -> None:
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {**labels, **PROBE}},
            "spec": echo_pod_spec(),
        }
    )


def _ready_pod(kube: Kube, namespace: str, selector: str) -> str:
    def one() -> str | None:
        for pod in kube.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector=selector):
            conditions = (pod.get("status") or {}).get("conditions") or []
            if not pod["metadata"].get("deletionTimestamp") and any(
                c["type"] == "Ready" and c["status"] == "True" for c in conditions
            ):
                return str(pod["metadata"]["name"])
        return None

    found: str = kube.wait(one, 120, f"a Ready pod {namespace}/{selector}")
    return found


@dataclass
class Setup:
    kube: Kube
    cfg: dict[str, Any]
    pods: PodWatch
    vip: str
    internet: Path
    proxy_service: str
    timings: dict[str, float] = field(default_factory=dict)


def _tenant_and_neighbours(kube: Kube) -> None:
    """The cluster around the block, before the install: namespaces with their default-deny, the tenant's and
    the other teams' own policies."""
    kube.apply(_namespace(NS, RESTRICTED_NS))
    kube.apply(_namespace(TENANT, RESTRICTED_NS))
    kube.apply(_namespace(MONITORING))
    kube.apply(_namespace(OUTSIDE))
    for namespace in (NS, TENANT, MONITORING, OUTSIDE):
        kube.apply(_default_deny(namespace))
    # The tenant opens `echo` to the proxies, both ways (their egress, its ingress); `closed` admits anyone,
    # but nothing lets the proxies send to it: the promised 503.
    proxies = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}}}
    proxies["podSelector"] = {"matchLabels": PROXY_POD_LABELS}
    ports = [{"protocol": "TCP", "port": 8080}, {"protocol": "TCP", "port": 8443}]
    kube.apply(
        _policy(
            TENANT,
            "echo-from-proxies",
            {"app": "echo"},
            policyTypes=["Ingress"],
            ingress=[{"from": [proxies], "ports": ports}],
        )
    )
    kube.apply(_policy(TENANT, "closed-from-anyone", {"app": "closed"}, policyTypes=["Ingress"], ingress=[{}]))
    echo = {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": TENANT}},
        "podSelector": {"matchLabels": {"app": "echo"}},
    }
    kube.apply(
        _policy(
            NS, "proxies-to-echo", PROXY_POD_LABELS, policyTypes=["Egress"], egress=[{"to": [echo], "ports": ports}]
        )
    )
    # The scraper and the other team's pod may send anywhere: a refusal is then the target's policy's doing.
    kube.apply(_policy(MONITORING, "scraper-egress", {}, policyTypes=["Egress"], egress=[{}]))
    kube.apply(_policy(OUTSIDE, "anything-out", {}, policyTypes=["Egress"], egress=[{}]))


@pytest.fixture(scope="module")
def setup(cluster: Cluster, registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    kube = Kube(cluster, registry, tmp_path_factory.mktemp("flows"))
    started = time.monotonic()
    timings: dict[str, float] = {}
    stack = ExitStack()
    try:
        _tenant_and_neighbours(kube)
        pods = stack.enter_context(PodWatch(cluster.api, NS))
        cfg = block_config(kube)
        start = time.monotonic()
        kube.playbook("install", cfg).ok()
        timings["install"] = time.monotonic() - start
        backend(kube, TENANT, "echo", {"TLS_NAME": SECURE})
        backend(kube, TENANT, "closed")
        kube.apply(route("HTTPRoute", TENANT, "shop", "http", SHOP, "echo", 80))
        kube.apply(route("HTTPRoute", TENANT, "closed", "http", CLOSED, "closed", 80))
        kube.apply(route("TLSRoute", TENANT, "secure", "tls", SECURE, "echo", 443))
        _probe_pod(kube, MONITORING, "scraper", {"app": "scraper"})
        _probe_pod(kube, OUTSIDE, "stranger", {"app": "stranger"})
        # A pod the certgen policy selects (the Job's own pod is gone 30 s after it finished).
        _probe_pod(kube, NS, "certgen-probe", {"app": "certgen"})
        for name in ("echo", "closed"):
            kube.wait(partial(deployment_ready, kube.api, TENANT, name), 120, f"backend {name} Ready")
        for namespace, selector in ((MONITORING, "app=scraper"), (OUTSIDE, "app=stranger"), (NS, CERTGEN_PROBE)):
            _ready_pod(kube, namespace, selector)
        vip = gateway_address(kube)
        (service,) = [
            s["metadata"]["name"]
            for s in kube.items(
                f"/api/v1/namespaces/{NS}/services", labelSelector="gateway.envoyproxy.io/owning-gatewayclass=eg-shared"
            )
        ]
        net = stack.enter_context(internet())
        timings["setup"] = time.monotonic() - started
        yield Setup(kube, cfg, pods, vip, net, service, timings)
    finally:
        stack.close()
        teardown = time.monotonic()
        delete_namespaces(kube, TENANT)
        kube.playbook("uninstall", kube.config()).ok()
        delete_namespaces(kube, NS, MONITORING, OUTSIDE)
        timings["teardown"] = time.monotonic() - teardown
        show(
            f"REAL FLOWS wall time {time.monotonic() - started:.0f} s: "
            + ", ".join(f"{k} {v:.0f} s" for k, v in timings.items()),
        )


# --- 1. Pod Security restricted at run time -----------------------------------------------------------------

ROLES = {
    "certgen Job": {"app": "certgen"},
    "controller": {"control-plane": "envoy-gateway"},
    "proxy": {"app.kubernetes.io/component": "proxy"},
    "WAF": {"app.kubernetes.io/instance": "envoy", "envoy.polycrate.io/role": "waf"},
}


def _role(labels: dict[str, str]) -> str | None:
    return next((role for role, want in ROLES.items() if want.items() <= labels.items()), None)


def test_pod_security_restricted_at_run_time(setup: Setup) -> None:
    kube = setup.kube
    labels = kube.get(f"/api/v1/namespaces/{NS}")["metadata"]["labels"]  # type: ignore[index]
    assert RESTRICTED_NS.items() <= labels.items(), labels
    # The enforcement is on: a pod outside `restricted` is refused in that namespace.
    privileged = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "privileged", "namespace": NS},
        "spec": {"containers": [{"name": "c", "image": ECHO_REF, "securityContext": {"privileged": True}}]},
    }
    code, body = apiserver.request(kube.api, "POST", f"/api/v1/namespaces/{NS}/pods", privileged, dryRun="All")
    assert code == 403, (code, body)
    assert 'violates PodSecurity "restricted:latest"' in body.get("message", ""), body

    setup.pods.stop()  # everything the install and the checks since caused
    seen = {name: pod for name, pod in setup.pods.pods.items() if not PROBE.items() <= pod["labels"].items()}
    lines, wrong = [], []
    for name, pod in sorted(seen.items()):
        role = _role(pod["labels"])
        done = pod["succeeded"] if role == "certgen Job" else pod["ready"]
        state = "Succeeded" if pod["succeeded"] else "Ready" if pod["ready"] else f"never Ready ({pod['phase']})"
        lines.append(f"PSA restricted  {role or '?':12} {name:48} {state:10} {','.join(pod['containers'])}")
        if role is None or not done or pod["restarts"]:
            wrong.append(f"{name}: role {role}, {state}, restarts {pod['restarts']}")
    refused = [
        e["message"]
        for e in kube.items(f"/api/v1/namespaces/{NS}/events", fieldSelector="reason=FailedCreate")
        if "PodSecurity" in e.get("message", "")
    ]
    show("\n".join(lines))
    assert not wrong, wrong
    assert not refused, refused
    assert {_role(p["labels"]) for p in seen.values()} == set(ROLES), "every kind of pod the block causes ran"
    proxies = [p for p in seen.values() if _role(p["labels"]) == "proxy"]
    assert all({"envoy", "shutdown-manager"} <= set(p["containers"]) for p in proxies), proxies


# --- 2. Traffic end to end ------------------------------------------------------------------------------------


def _pods(kube: Kube, namespace: str, selector: str) -> set[str]:
    return {p["metadata"]["name"] for p in kube.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector=selector)}


def test_traffic_from_the_internet_through_the_vip_to_backend_pods(setup: Setup) -> None:
    kube, vip, net = setup.kube, setup.vip, setup.internet
    backends = _pods(kube, TENANT, "app=echo")
    v1 = proxy_v1(END_USER, vip, 40001, 80)
    verdicts: list[str] = []

    def benign() -> Any:
        try:
            answer = fetch(vip, 80, SHOP, "/shop?q=shoes", netns=net, header=v1)
        except OSError:
            return None
        return answer if answer.status == 200 else None

    # The listener, the route and its endpoints reach the proxy one after another.
    answer = kube.wait(benign, 90, f"a 200 through {vip}:80")
    echo = answer.json()
    verdicts.append(f"HTTP  PROXY v1 {END_USER} -> {vip}:80 {SHOP} benign: {answer.status} from {echo['pod']}")
    assert echo["pod"] in backends
    assert echo["host"] == SHOP
    assert END_USER in echo["headers"].get("X-Forwarded-For", [""])[0], echo["headers"]

    v2 = fetch(vip, 80, SHOP, "/shop", netns=net, header=proxy_v2(END_USER_V2, vip, 40002, 80))
    verdicts.append(f"HTTP  PROXY v2 {END_USER_V2} -> {vip}:80 {SHOP} benign: {v2.status}")
    assert v2.status == 200, v2
    assert END_USER_V2 in v2.json()["headers"].get("X-Forwarded-For", [""])[0]

    attack_path = "/shop?id=1%27%20OR%20%271%27%3D%271"
    attack = fetch(vip, 80, SHOP, attack_path, netns=net, header=v1)
    verdicts.append(f"HTTP  PROXY v1 {END_USER} -> {vip}:80 {SHOP} SQL injection: {attack.status}")
    assert attack.status == 403, (attack.status, attack.body[:300])

    def audited() -> list[dict[str, Any]]:
        return [
            line
            for line in waf_lines(kube, NS)
            if line.get("event") == "waf"
            and line.get("path", "").startswith("/shop?id=")
            and line.get("action") == "block"
        ]

    lines = kube.wait(audited, 30, "the WAF's audit line for the attack")
    verdicts.append(f"WAF   audit line: client {lines[0]['client']}, rules {lines[0]['rule_ids']}")
    assert {line["client"] for line in lines} == {END_USER}, lines

    tls = fetch(vip, 443, SECURE, "/secure", netns=net, header=proxy_v1(END_USER, vip, 40003, 443), sni=SECURE)
    through_tls = tls.json()
    verdicts.append(
        f"TLS   PROXY v1 -> {vip}:443 SNI {SECURE} (Passthrough): {tls.status} from {through_tls['pod']}, "
        f"TLS terminated by the backend: {through_tls['tls']}"
    )
    assert tls.status == 200
    assert through_tls["tls"] is True
    assert through_tls["pod"] in backends
    assert SECURE.encode() in (tls.certificate or b""), "the backend's own certificate"

    # Strict PROXY protocol: a connection without the header gets no answer.
    try:
        bare: int | str = fetch(vip, 80, SHOP, "/", netns=net, timeout=5).status
    except (OSError, http.client.HTTPException) as exc:
        bare = type(exc).__name__
    verdicts.append(f"HTTP  no PROXY header -> {vip}:80: {bare}")
    show("\n".join(f"TRAFFIC {v}" for v in verdicts))
    assert not isinstance(bare, int), f"answered {bare} without a PROXY protocol header"


# --- 3. Network policies enforced both ways ------------------------------------------------------------------

DNS, API = "UDP/53 TCP/53", "TCP/443 TCP/6443"
PROXIES_IN = "envoy-proxies ingress TCP"


@dataclass(frozen=True)
class Flow:
    name: str
    source: str  # a key of _sources()
    target: str  # a key of TARGETS
    port: int
    expected: str  # "open" or "refused"
    needs: tuple[str, ...] = ()  # the block's rules that let it through (see rule_label)
    peer: str | None = None  # refused: a source allowed to the same target, probed right before and after


FLOWS = (
    Flow("internet -> proxy listener (LB address:80)", "internet", "vip", 80, "open", (PROXIES_IN,)),
    Flow("internet -> proxy listener (LB address:443)", "internet", "vip", 443, "open", (PROXIES_IN,)),
    Flow(
        "proxy -> controller xDS",
        "proxy",
        "controller",
        18000,
        "open",
        ("envoy-proxies egress TCP/18000", "envoy-controller ingress TCP/18000"),
    ),
    Flow(
        "proxy -> WAF gRPC",
        "proxy",
        "waf",
        9002,
        "open",
        ("envoy-proxies egress TCP/9002", "envoy-waf ingress TCP/9002"),
    ),
    Flow("proxy -> DNS", "proxy", "dns", 53, "open", (f"envoy-proxies egress {DNS}",)),
    Flow("controller -> API server", "controller", "apiserver", 443, "open", (f"envoy-controller egress {API}",)),
    Flow("controller -> DNS", "controller", "dns", 53, "open", (f"envoy-controller egress {DNS}",)),
    Flow("certgen -> API server", "certgen", "apiserver", 443, "open", (f"envoy-certgen egress {API}",)),
    Flow("certgen -> DNS", "certgen", "dns", 53, "open", (f"envoy-certgen egress {DNS}",)),
    Flow("WAF -> DNS", "waf", "dns", 53, "open", (f"envoy-waf egress {DNS}",)),
    Flow("monitoring -> proxy metrics", "scraper", "proxy-pod", 19001, "open", (PROXIES_IN,)),
    Flow(
        "monitoring -> controller metrics",
        "scraper",
        "controller-pod",
        19001,
        "open",
        ("envoy-controller ingress TCP/19001",),
    ),
    Flow("monitoring -> WAF metrics", "scraper", "waf-pod", 9090, "open", ("envoy-waf ingress TCP/9090",)),
    Flow("proxy -> opened backend (tenant's policies)", "proxy", "echo-pod", 8080, "open"),
    Flow("other pod -> unopened backend (it admits anyone)", "stranger", "closed-pod", 8080, "open"),
    Flow("other pod -> WAF gRPC", "stranger", "waf", 9002, "refused", peer="proxy"),
    Flow("other pod -> controller xDS", "stranger", "controller", 18000, "refused", peer="proxy"),
    Flow("other pod -> WAF metrics", "stranger", "waf-pod", 9090, "refused", peer="scraper"),
    Flow("other pod -> controller metrics", "stranger", "controller-pod", 19001, "refused", peer="scraper"),
    Flow("WAF -> API server", "waf", "apiserver", 443, "refused", peer="controller"),
    Flow("proxy -> unopened backend", "proxy", "closed-pod", 8080, "refused", peer="stranger"),
)
# Not judged by any probe: kube-router admits every packet from the node's own addresses (the kubelet's
# probes), so the API server -> controller webhook rule cannot be told from "allow all" on one node.
UNPROBED = {"envoy-controller ingress TCP/9443": "the API server runs on the node: kube-router admits the node"}
# target -> (the Service whose EndpointSlice gates it, how it is addressed: its cluster IP or a ready pod's IP)
TARGETS = {
    "vip": ("proxies", "lb"),
    "proxy-pod": ("proxies", "pod"),
    "controller": ("controller", "cluster"),
    "controller-pod": ("controller", "pod"),
    "waf": ("waf", "cluster"),
    "waf-pod": ("waf", "pod"),
    "dns": ("dns", "cluster"),
    "apiserver": ("apiserver", "cluster"),
    "echo-pod": ("echo", "pod"),
    "closed-pod": ("closed", "pod"),
}


def _services(setup: Setup) -> dict[str, tuple[str, str]]:
    return {
        "proxies": (NS, setup.proxy_service),
        "controller": (NS, "envoy-gateway"),
        "waf": (NS, "envoy-waf"),
        "dns": ("kube-system", "kube-dns"),
        "apiserver": ("default", "kubernetes"),
        "echo": (TENANT, "echo"),
        "closed": (TENANT, "closed"),
    }


def _sources(setup: Setup) -> dict[str, Path]:
    """Each source's network namespace: a Ready pod of each (looked up again each round: pods may move)."""
    kube = setup.kube
    node = kube.cluster.node
    assert node is not None
    pods = {
        "proxy": (NS, "app.kubernetes.io/component=proxy"),
        "controller": (NS, "control-plane=envoy-gateway"),
        "waf": (NS, "envoy.polycrate.io/role=waf"),
        "certgen": (NS, CERTGEN_PROBE),
        "scraper": (MONITORING, "app=scraper"),
        "stranger": (OUTSIDE, "app=stranger"),
    }
    found = {
        key: pod_netns(kube.api, node.cgroup_root, ns, _ready_pod(kube, ns, sel)) for key, (ns, sel) in pods.items()
    }
    return {**found, "internet": setup.internet}


def _addresses(setup: Setup) -> dict[str, str]:
    kube, services = setup.kube, _services(setup)
    out = {}
    for target, (service, how) in TARGETS.items():
        namespace, name = services[service]
        if how == "lb":
            out[target] = setup.vip
        elif how == "cluster":
            out[target] = kube.get(f"/api/v1/namespaces/{namespace}/services/{name}")["spec"]["clusterIP"]  # type: ignore[index]
        else:
            out[target] = _ready_address(kube, namespace, name)
    return out


def _ready_address(kube: Kube, namespace: str, name: str, timeout: float = 60) -> str:
    """A ready endpoint's address of the Service, waiting up to `timeout` for one: a probe only means something
    against a ready target (the Readiness gate judges the round). At a load average of 27 the shared proxy's
    Service once had no ready endpoint between rounds (2026-12-07, a fresh clone's run; the cause was not seen,
    most likely its readiness probe timing out under load), which is not a verdict on the rule removed."""
    deadline = time.monotonic() + timeout
    while True:
        slices = kube.items(
            f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices",
            labelSelector=f"kubernetes.io/service-name={name}",
        )
        ready = [
            a
            for s in slices
            for e in s.get("endpoints") or []
            if (e.get("conditions") or {}).get("ready")
            for a in e["addresses"]
        ]
        if ready:
            return str(ready[0])
        assert time.monotonic() < deadline, f"{namespace}/{name}: no ready endpoint for {timeout:.0f} s"
        time.sleep(0.5)


@dataclass
class Verdict:
    flow: Flow
    raw: str  # what the probe saw: "open", "refused", "timeout", an error
    ready: str  # "" when the target was ready before, during and after the probes, else why not
    peer: str = ""  # refused: "" when the allowed peer reached the target right before and after, else why not

    @property
    def got(self) -> str:
        return "open" if self.raw == "open" else "refused"

    @property
    def gate(self) -> str:
        return "; ".join(g for g in (self.ready, self.peer) if g)

    @property
    def passed(self) -> bool:
        return self.got == self.flow.expected and not self.gate


def _round(setup: Setup, readiness: Readiness, flows: tuple[Flow, ...] = FLOWS) -> list[Verdict]:
    """Every flow probed once; each refusal with its allowed peer right before and after; then every target's
    readiness judged over the whole round (ready in the last sample before it, every sample during it and the
    first after it)."""
    sources, addresses = _sources(setup), _addresses(setup)
    start = time.monotonic()
    raw = []
    for flow in flows:
        address = addresses[flow.target]
        peer_before = dial(sources[flow.peer], address, flow.port) if flow.peer else "open"
        got = dial(sources[flow.source], address, flow.port)
        peer_after = dial(sources[flow.peer], address, flow.port) if flow.peer else "open"
        raw.append((flow, got, peer_before, peer_after))
    end = time.monotonic()
    verdicts = []
    for flow, got, peer_before, peer_after in raw:
        ready = readiness.gate(TARGETS[flow.target][0], start, end) or ""
        peer = "" if (peer_before, peer_after) == ("open", "open") else f"{flow.peer}: {peer_before}, {peer_after}"
        verdicts.append(Verdict(flow, got, ready, peer))
    return verdicts


def _table(title: str, verdicts: list[Verdict]) -> str:
    lines = [title, f"{'flow':50} {'expected':8} {'got':10} gate"]
    for v in verdicts:
        gate = v.gate or "target ready before/during/after" + (f", {v.flow.peer} reached it" if v.flow.peer else "")
        lines.append(f"{v.flow.name:50} {v.flow.expected:8} {v.raw:10} {gate}")
    return "\n".join(f"NETPOL {line}" for line in lines)


def test_network_policies_enforced_both_ways(setup: Setup) -> None:
    kube, vip, net = setup.kube, setup.vip, setup.internet
    header = proxy_v1(END_USER, vip, 40010, 80)
    with Readiness(kube.cluster.api, _services(setup)) as readiness:
        verdicts = _round(setup, readiness)
        # The same two backends through the proxies, end to end: the opened one answers, the unopened one
        # is the promised 503 (the proxy reaches nothing), while another pod reaches it.
        start = time.monotonic()
        opened = fetch(vip, 80, SHOP, "/", netns=net, header=header).status
        unopened = fetch(vip, 80, CLOSED, "/", netns=net, header=header).status
        sources = _sources(setup)
        reached = dial(sources["stranger"], _addresses(setup)["closed-pod"], 8080)
        end = time.monotonic()
        closed_ready = readiness.gate("closed", start, end)
    show(
        _table("the flows the block needs and forbids (kube-router enforcing)", verdicts)
        + f"\nNETPOL internet -> {SHOP} -> opened backend: HTTP {opened}\n"
        f"NETPOL internet -> {CLOSED} -> unopened backend: HTTP {unopened} "
        f"(gate: {closed_ready or 'backend ready before/during/after'}, another pod reached it: {reached})"
    )
    assert [v.flow.name for v in verdicts if not v.passed] == [], [v for v in verdicts if not v.passed]
    assert opened == 200
    assert unopened == 503
    assert closed_ready is None
    assert reached == "open"


BLOCK_POLICIES = ("envoy-proxies", "envoy-controller", "envoy-certgen", "envoy-waf")


def rule_label(policy: str, direction: str, rule: dict[str, Any]) -> str:
    """A rule by what it opens: its policy, direction and ports (unique within a policy's direction)."""
    ports = " ".join(f"{p['protocol']}/{p['port']}" if "port" in p else p["protocol"] for p in rule.get("ports") or [])
    return f"{policy} {direction} {ports}".strip()


def _until(setup: Setup, readiness: Readiness, flows: tuple[Flow, ...], want: str, timeout: float = 30) -> None:
    """Until every flow in `flows` gets `want` (kube-router applies a policy change within a sync)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(v.got == want for v in _round(setup, readiness, flows)):
            return
        time.sleep(0.5)


def test_removing_each_rule_turns_exactly_its_flows_red(setup: Setup) -> None:
    kube = setup.kube
    base = f"/apis/{NETPOL}/namespaces/{NS}/networkpolicies"
    policies = {name: kube.get(f"{base}/{name}") for name in BLOCK_POLICIES}
    rules = [
        (name, direction, index, rule_label(name, direction, rule))
        for name, policy in policies.items()
        for direction in ("ingress", "egress")
        for index, rule in enumerate((policy or {}).get("spec", {}).get(direction) or [])
    ]
    labels = [label for *_, label in rules]
    needed = {n for f in FLOWS for n in f.needs}
    assert len(set(labels)) == len(labels), labels
    assert needed <= set(labels), f"flows name rules the block does not render: {needed - set(labels)}"
    assert set(labels) - needed == set(UNPROBED), f"rules no flow judges: {set(labels) - needed - set(UNPROBED)}"
    lines, wrong = [], []
    with Readiness(kube.cluster.api, _services(setup)) as readiness:
        baseline = _round(setup, readiness)
        assert all(v.passed for v in baseline), [v for v in baseline if not v.passed]
        for name, direction, index, label in rules:
            if label in UNPROBED:
                lines.append(f"{label:40} not probed: {UNPROBED[label]}")
                continue
            red = tuple(f for f in FLOWS if label in f.needs)
            original = policies[name]["spec"][direction]  # type: ignore[index]
            kube.api._call(
                "PATCH",
                f"{base}/{name}",
                json=[
                    {"op": "test", "path": f"/spec/{direction}/{index}", "value": original[index]},
                    {"op": "remove", "path": f"/spec/{direction}/{index}"},
                ],
                headers={"Content-Type": "application/json-patch+json"},
            )
            try:
                _until(setup, readiness, red, "refused")
                verdicts = _round(setup, readiness)
            except AssertionError as err:
                raise AssertionError(f"with {label} removed: {err}") from err
            finally:
                kube.api.merge_patch(f"{base}/{name}", {"spec": {direction: original}})
                _until(setup, readiness, red, "open")
            flipped = {v.flow.name for v in verdicts if v.got != v.flow.expected}
            ungated = [f"{v.flow.name}: {v.ready}" for v in verdicts if v.flow.name in flipped and v.ready]
            lines.append(f"{label:40} removed -> red: {', '.join(sorted(flipped)) or 'nothing'}")
            if flipped != {f.name for f in red} or ungated:
                wrong.append(f"{label}: red {sorted(flipped)}, expected {sorted(f.name for f in red)}; {ungated}")
        after = _round(setup, readiness)
    show("\n".join(f"NETPOL MUTATION {line}" for line in lines))
    assert not wrong, "\n".join(wrong)
    assert all(v.passed for v in after), [v for v in after if not v.passed]
