"""Envoy Gateway v1.9.0 -> v1.9.1 (patch, on three real nodes under `make cluster-test-nodes`) and v1.8.3 ->
v1.9.1 (minor, on one node under `make cluster-test`) with the real charts:
both controllers as pods (a real rolling update: the new pod runs beside the old one until it is Ready), the
proxies as pods serving a tenant's route the whole time, through the address kube-proxy serves.

The starting point is what an operator on the old release had: the block's config with that chart.version
(and that release's controller and Envoy images), a cluster owner's Gateway API safe-upgrades admission policy
(from that release's CRD chart: the v1.5.1 bundle for v1.8.3) and a tenant with routes on the shared Gateway
and a Gateway of their own. Then install with v1.9.1: CRDs first (server-side, past the admission policy),
helm upgrades the release (certgen's Job runs again), the v1.9.1 controller pod starts beside the old one
and takes the lease, every object is Accepted/Programmed for its current generation again, the proxies move
to v1.9.1's Envoy (distroless-v1.39.1), the VIP stays. Three steady clients count failed requests through the
tenant Gateway's address while the controller is replaced, while the proxy pods roll and while the new
controller restarts afterwards: HTTP, HTTPS terminated with the tenant's certificate (which the proxies get
over SDS: envoyproxy/gateway#9918 lost it on this very upgrade, #9519 after a controller restart) and TLS passed
through to the backend; a handshake that shows another certificate counts as failed (printed; none allowed
while the controller is replaced, while the proxies roll, after, across the restart, and no wrong certificate
at any time; from v1.9.0 the HTTPS client may lose handshakes inside upstream's bug's window only, UPSTREAM_WINDOW). The
patch upgrade runs with `controller.replicas: 2` (a budget, leader election; a new pod beside the two old ones).
From v1.8.3, half-way (new proxy pods held by a cluster owner's admission policy) status and plan say what still
rolls (not from v1.9.0: see HELD); a second install changes nothing; a downgrade stops before writing anything.

Mutation checks (done once): dropping the downgrade problem from lifecycle.install_state -> red at the
downgrade (install went ahead). Waiting for the controller as Available only (the old wait) stayed green:
here the handover takes about a second, so the rollout is over before install ends; that wait is argued
in roles/envoy_apply/tasks/controller.yml, not proven here.
"""

from __future__ import annotations

import base64
import http.client
import re
import ssl
import subprocess
import threading
import time
from contextlib import ExitStack
from typing import Any

import pytest
import yaml

from envoy_block.polycrate import merge_config
from envoy_block.release import ENVOY_OF_RELEASE
from tests.cluster.common import (
    EG_API,
    GW_API,
    POLICY_KINDS,
    block_writes,
    echo_backend,
    gateway_address,
    pods_held,
    policy_accepted,
    writes,
)
from tests.cluster.conftest import CHARTS, Kube
from tests.cluster.realnet import Client, fetch
from tests.cluster.test_examples import prepare
from tests.conftest import ROOT
from tests.harness import pki
from tests.harness.controlplane import POD_CIDR
from tests.harness.node import NODE_IP
from tests.support import apiserver
from tests.support.helpers import plan
from tests.support.output import show
from tests.support.tenant_objects import (
    UPGRADE_DEDICATED_PORT,
    UPGRADE_HOST,
    UPGRADE_HTTPS_PORT,
    UPGRADE_NAMESPACE,
    UPGRADE_PASSTHROUGH_HOST,
    UPGRADE_PASSTHROUGH_PORT,
    UPGRADE_TLS_SECRET,
    proxy_protocol_config,
    upgrade_tenant,
)

pytestmark = pytest.mark.playbook
NS = "envoy-gateway-system"
# The default release and the releases it is upgraded from: the previous patch (on three nodes, make
# cluster-test-nodes: a surge and a handover across nodes) and the previous minor line (on one, make cluster-test).
NEW = "v1.9.1"
OLDS = (pytest.param("v1.9.0", marks=pytest.mark.three_nodes), "v1.8.3")
# The patch upgrade runs with two controller replicas (controller.replicas: a budget and leader election),
# on three nodes: the rolling update replaces one leader candidate at a time under traffic.
CONTROLLER_REPLICAS = {"v1.9.0": 2, "v1.8.3": 1}
# Where the new proxy pods are held half-way (a cluster owner's admission policy) so status and plan can be
# read while the proxies still roll. Not from v1.9.0: a proxy that runs across the v1.9.0 -> v1.9.1 controller
# change loses its TLS certificates 15 s after the new controller's first push (envoyproxy/gateway#9918,
# envoyproxy/envoy#47309), so holding its replacement is an outage by design, the one upstream documents and
# the block's whole-fleet surge exists to avoid. There the proxies roll as the controller hands over.
HELD = {"v1.8.3"}
# What upstream's bug still costs on v1.9.0 -> v1.9.1: refused TLS handshakes (judged on the HTTPS client only;
# HTTP and passthrough lose nothing). The old proxies fail 15 s after the new controller's first push and serve
# until the new fleet is Ready: the new leader (the stopped one's lease freed at once, install's controller.yml)
# plus a proxy pod's start (Envoy Gateway's startup probe runs every 10 s, a field no EnvoyProxy sets and the
# block's own tenant guard refuses as a patch) plus the endpoints' update. Measured on three nodes: 325 + 69
# failed handshakes (about 40 s) with 25% surge and the lease waited out; 1 to 7 s (4 to 61) with the block's
# whole-fleet surges and the lease freed on a quiet machine, 16 s (41) beside the conformance suite, 31 s (77)
# beside a cold `make test`'s three other jobs (load average 25: the new pods took 21 to 32 s to be Ready). How
# long is the machine's; what the block decides is that the whole fleet is replaced in one step, so that is what
# _judge_upstream_window holds, with every loss inside the window, so no other cause hides in it. Nothing the
# block can set brings it to 0 on v1.9.1 (envoyproxy/envoy#47309 is open); EnvoyTlsCertificateMissing pages on it.
UPSTREAM_WINDOW = {"v1.9.0"}
# One surge step: every pod of a proxy Deployment's new ReplicaSet is created at once (a 25% surge on two
# replicas creates the second only after the first is Ready, 20 s or more later on this machine).
ONE_STEP = 5
CRD = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
VAP = "/apis/admissionregistration.k8s.io/v1"
SAFE_UPGRADES = "safe-upgrades.gateway.networking.k8s.io"
OWN_PROXY = (
    f"gateway.envoyproxy.io/owning-gateway-name=own,gateway.envoyproxy.io/owning-gateway-namespace={UPGRADE_NAMESPACE}"
)
PROXY_PODS = "app.kubernetes.io/component=proxy"


def config(kube: Kube, version: str, **extra: Any) -> dict[str, Any]:
    """Everything an upgrade can break: default Gateway with HTTP and TLS Passthrough listeners, PROXY
    protocol, a BackendTrafficPolicy, the WAF with its default policy, VMPodScrape, network policies."""
    cfg = merge_config(
        proxy_protocol_config(),
        {
            "chart": {"version": version},
            "image": {"controller": {"tag": version}, "proxy": {"tag": ENVOY_OF_RELEASE[version]}},
            "backend_traffic": {"enabled": True},
            # An image of our own: install refuses the never-published default.
            "waf": {
                "enabled": True,
                "default_policy": {"enabled": True},
                "image": {"registry": "registry.example.com", "repository": "platform/envoy-waf"},
            },
            "metrics": {"vmpodscrape": {"enabled": True}},
            # Enforced here (kube-router): egress to the API server is judged after kube-proxy's DNAT, so the
            # CIDR is the API server's own address, as on a cluster; the proxies reach no backend the operator
            # has not opened (the tenant's echo pod: the pod network, its two ports).
            "network_policy": {
                "provider": "kubernetes",
                "api_server_cidrs": [f"{NODE_IP}/32"],
                "extra_egress_to": [{"cidr": POD_CIDR, "ports": [8080, 8443]}],
            },
            **extra,
        },
    )
    return kube.config(**cfg)


def _serves(address: str, port: int) -> bool:
    connection = http.client.HTTPConnection(address, port, timeout=2)
    try:
        connection.request("GET", "/", headers={"Host": "own.example.com"})
        return bool(connection.getresponse().status == 200)
    except OSError:
        return False
    finally:
        connection.close()


def _safe_upgrades_policy(kube: Kube, old: str) -> list[dict[str, Any]]:
    """The cluster owner's Gateway API safe-upgrades policy and binding (from the old release's CRD chart)."""
    rendered = subprocess.run(
        [
            *(str(ROOT / ".tools/bin/helm"), "template", "crds", str(CHARTS / f"gateway-crds-helm-{old}.tgz")),
            *("--set", "crds.gatewayAPI.enabled=true", "--set", "crds.gatewayAPI.channel=standard"),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return [
        d
        for d in yaml.safe_load_all(rendered)
        if d and d["kind"] in ("ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding")
    ]


def _vap_path(obj: dict[str, Any]) -> str:
    plural = (
        "validatingadmissionpolicies"
        if obj["kind"] == "ValidatingAdmissionPolicy"
        else "validatingadmissionpolicybindings"
    )
    return f"{VAP}/{plural}"


def _tenant(kube: Kube) -> list[dict[str, Any]]:
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": UPGRADE_NAMESPACE}})
    echo_backend(kube, UPGRADE_NAMESPACE)
    crt, key = pki.self_signed(UPGRADE_HOST)
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {"name": UPGRADE_TLS_SECRET, "namespace": UPGRADE_NAMESPACE},
            "data": {"tls.crt": base64.b64encode(crt).decode(), "tls.key": base64.b64encode(key).decode()},
        }
    )
    objects = upgrade_tenant(NS)
    for obj in objects:
        path = f"{GW_API}/namespaces/{UPGRADE_NAMESPACE}/{obj['kind'].lower()}s/{obj['metadata']['name']}"
        kube.api._call(
            "PATCH",
            path,
            params={"fieldManager": "tenant", "force": "true"},
            data=yaml.safe_dump(obj),
            headers={"Content-Type": "application/apply-patch+yaml"},
        )
    return objects


def _current(obj: dict[str, Any] | None, kind: str) -> bool:
    """`kind` True, reported for the object's current generation."""
    generation = (obj or {}).get("metadata", {}).get("generation")
    return any(
        c["type"] == kind and c["status"] == "True" and c.get("observedGeneration") == generation
        for c in ((obj or {}).get("status") or {}).get("conditions") or []
    )


def _unsettled(kube: Kube, cfg: dict[str, Any], tenant: list[dict[str, Any]]) -> list[str]:
    """Every block and tenant object not (yet) Accepted/Programmed for its current generation."""
    out = []
    for step in plan(cfg).ordered():
        if step.kind == "GatewayClass":
            obj = kube.get(f"{GW_API}/gatewayclasses/{step.name}")
            ok = _current(obj, "Accepted")
        elif step.kind == "Gateway":
            obj = kube.get(f"{GW_API}/namespaces/{step.namespace}/gateways/{step.name}")
            ok = _current(obj, "Programmed")
        elif step.kind in POLICY_KINDS:
            obj = kube.get(f"{EG_API}/namespaces/{step.namespace}/{POLICY_KINDS[step.kind]}/{step.name}")
            generation = (obj or {}).get("metadata", {}).get("generation")
            ok = policy_accepted(obj) and all(
                c.get("observedGeneration") == generation
                for a in obj["status"]["ancestors"]  # type: ignore[index]
                for c in a["conditions"]
            )
        else:
            continue
        if not ok:
            out.append(f"{step.kind}/{step.name}")
    for t in tenant:
        obj = kube.get(f"{GW_API}/namespaces/{UPGRADE_NAMESPACE}/{t['kind'].lower()}s/{t['metadata']['name']}")
        generation = (obj or {}).get("metadata", {}).get("generation")
        if t["kind"] == "Gateway":
            ok = _current(obj, "Programmed")
        else:
            parents = ((obj or {}).get("status") or {}).get("parents") or []
            ok = bool(parents) and all(
                any(
                    c["type"] == "Accepted" and c["status"] == "True" and c.get("observedGeneration") == generation
                    for c in p["conditions"]
                )
                for p in parents
            )
        if not ok:
            out.append(f"tenant {t['kind']}/{t['metadata']['name']}")
    return out


def _deployment(kube: Kube, name: str) -> dict[str, Any]:
    found = kube.get(f"/apis/apps/v1/namespaces/{NS}/deployments/{name}")
    assert found is not None, name
    return found


def _image(deployment: dict[str, Any]) -> str:
    return str(deployment["spec"]["template"]["spec"]["containers"][0]["image"])


def _proxies(kube: Kube) -> list[dict[str, Any]]:
    return kube.items(
        f"/apis/apps/v1/namespaces/{NS}/deployments", labelSelector="app.kubernetes.io/managed-by=envoy-gateway"
    )


def _rolled(d: dict[str, Any]) -> bool:
    s, wanted = d.get("status") or {}, d["spec"].get("replicas", 1)
    return bool(
        s.get("observedGeneration") == d["metadata"]["generation"]
        and s.get("updatedReplicas") == s.get("availableReplicas") == s.get("replicas") == wanted
    )


def _vip(kube: Kube) -> list[str]:
    gw = kube.get(f"{GW_API}/namespaces/{NS}/gateways/eg-shared") or {}
    return [a["value"] for a in (gw.get("status") or {}).get("addresses") or []]


def _leader(kube: Kube) -> str:
    leases = kube.items(f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases")
    return " ".join(str((lease.get("spec") or {}).get("holderIdentity", "")) for lease in leases)


def _controller_pods(kube: Kube) -> list[dict[str, Any]]:
    return kube.items(f"/api/v1/namespaces/{NS}/pods", labelSelector="control-plane=envoy-gateway")


def _tenant_certificate(kube: Kube) -> bytes:
    """The tenant's certificate (DER), as the HTTPS listener must show it."""
    secret = kube.get(f"/api/v1/namespaces/{UPGRADE_NAMESPACE}/secrets/{UPGRADE_TLS_SECRET}") or {}
    return ssl.PEM_cert_to_DER_cert(base64.b64decode(secret["data"]["tls.crt"]).decode())


def _restart(kube: Kube, name: str) -> None:
    """`kubectl rollout restart`: a new pod template, so the Deployment rolls."""
    kube.api.merge_patch(
        f"/apis/apps/v1/namespaces/{NS}/deployments/{name}",
        {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": str(time.time())}}}}},
    )


def _phase(clients: list[Client], phase: str) -> None:
    for client in clients:
        client.phase = phase


def _proxy_pods_settled(kube: Kube) -> bool:
    """Every proxy Deployment rolled and no old proxy pod left terminating."""
    proxies = _proxies(kube)
    pods = kube.items(f"/api/v1/namespaces/{NS}/pods", labelSelector=PROXY_PODS)
    return (
        all(_rolled(d) for d in proxies)
        and not [p for p in pods if p["metadata"].get("deletionTimestamp")]
        and len(pods) == sum(d["spec"].get("replicas", 1) for d in proxies)
    )


def _running(pod: dict[str, Any]) -> bool:
    return any("running" in (c.get("state") or {}) for c in (pod.get("status") or {}).get("containerStatuses") or [])


def _pod_state(pod: dict[str, Any]) -> str:
    if pod["metadata"].get("deletionTimestamp"):
        return "terminating"
    ready = any(
        c["type"] == "Ready" and c["status"] == "True" for c in (pod.get("status") or {}).get("conditions") or []
    )
    return "ready" if ready else "starting"


class Overlap:
    """Samples the controller while it runs (its own API client: a thread of its own): the most controller
    pods running at once (a rolling update starts the new pod before it stops the old one), and a timeline of
    the handover: each controller and proxy pod's state, the lease holder, printed with the clients' failures
    so a lost handshake can be placed against the pods that served it."""

    def __init__(self, kube: Kube) -> None:
        self.api = kube.cluster.api
        self.most = 0
        self.timeline: list[str] = []
        self._seen: dict[str, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Overlap:
        self._thread.start()
        return self

    def _note(self, key: str, state: str) -> None:
        if self._seen.get(key) != state:
            self._seen[key] = state
            self.timeline.append(f"{time.strftime('%H:%M:%S')} {key}: {state}")

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                pods = self.api.items(f"/api/v1/namespaces/{NS}/pods", labelSelector="control-plane=envoy-gateway")
                self.most = max(self.most, len([p for p in pods if _running(p)]))
                proxies = self.api.items(f"/api/v1/namespaces/{NS}/pods", labelSelector=PROXY_PODS)
                leases = self.api.items(f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases")
            except Exception as exc:  # noqa: BLE001 - a sampler: an API hiccup is a gap, not a failure
                self._note("sampler", type(exc).__name__)
                self._stop.wait(0.3)
                continue
            for pod in pods:
                self._note(f"controller {pod['metadata']['name']}", _pod_state(pod))
            for pod in proxies:
                self._note(f"proxy {pod['metadata']['name']}", _pod_state(pod))
            holder = " ".join(str((x.get("spec") or {}).get("holderIdentity", "")).split("_")[0] for x in leases)
            self._note("lease", holder or "free")
            self._stop.wait(0.3)

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


def _clock(line: str) -> int:
    """Seconds of the day of a line that starts with HH:MM:SS (the clients' failures, the timeline)."""
    return sum(int(x) * f for x, f in zip(line[:8].split(":"), (3600, 60, 1), strict=True))


def _judge_upstream_window(old: str, https: Client, timeline: list[str], old_pods: tuple[set[str], set[str]]) -> None:
    """The HTTPS client's losses through the handover are upstream's bug and nothing else: none before 15 s
    (less a second of clock resolution) after the first old controller stopped (the proxies' first push from a
    new one), none after the last old proxy left the endpoints (terminating: its readiness fails at once), all
    of them refused handshakes (no wrong certificate); and the old fleet was replaced in one surge step (every
    new pod of each proxy Deployment's first new ReplicaSet started within ONE_STEP seconds), which is what
    keeps that window short whatever the machine's speed."""
    handover = ("controller replaced", "proxy pods replaced")
    lost = sorted(line for phase in handover for line in https.failed.get(phase, []))
    old_controllers, old_proxies = old_pods
    stopped = min(
        _clock(line) for line in timeline if line.endswith(": terminating") and any(c in line for c in old_controllers)
    )
    gone = max(
        _clock(line) for line in timeline if line.endswith(": terminating") and any(p in line for p in old_proxies)
    )
    show(
        f"UPGRADE {old}: {len(lost)} TLS handshakes refused (#9918) between "
        f"{(lost[0][:8] + ' and ' + lost[-1][:8]) if lost else '-'}; old controllers stopped {stopped - gone:+d} s "
        f"before the last old proxy left (the window: from {stopped + 15 - gone:+d} s)"
    )
    for line in lost:
        assert stopped + 14 <= _clock(line) <= gone + 2, (line, stopped, gone, lost)
        assert "ConnectionResetError" in line or "SSL" in line, line
    # "HH:MM:SS proxy <deployment>-<replicaset hash>-<pod>: starting", the new pods in order of appearance.
    first: dict[str, str] = {}
    started: dict[str, list[int]] = {}
    for line in timeline:
        new = re.fullmatch(r"\d\d:\d\d:\d\d proxy (\S+)-([a-z0-9]+)-[a-z0-9]+: starting", line)
        if not new or f"{new[1]}-{new[2]}" in {p.rsplit("-", 1)[0] for p in old_proxies}:
            continue
        if first.setdefault(new[1], new[2]) == new[2]:
            started.setdefault(new[1], []).append(_clock(line))
    assert started, f"no new proxy pod in the timeline: {timeline}"
    for deployment, times in started.items():
        assert max(times) - min(times) <= ONE_STEP, f"{deployment}'s fleet replaced in one step: {timeline}"


@pytest.mark.parametrize("old", OLDS)
def test_upgrade_to_v1_9_1_with_traffic(kube: Kube, old: str) -> None:
    for chart in (f"gateway-helm-{old}.tgz", f"gateway-crds-helm-{old}.tgz"):
        kube.registry.push(CHARTS / chart)
    timings: dict[str, float] = {}
    # The CRDs other tests left are v1.9.1's: start from a cluster that never had them.
    ours = (".gateway.networking.k8s.io", ".gateway.envoyproxy.io")
    for crd in kube.items(CRD):
        if crd["metadata"]["name"].endswith(ours):
            apiserver.delete(kube.api, f"{CRD}/{crd['metadata']['name']}")
    kube.wait(lambda: not [c for c in kube.items(CRD) if c["metadata"]["name"].endswith(ours)], 120, "CRDs removed")
    replicas = CONTROLLER_REPLICAS[old]
    old_cfg = config(kube, old, controller={"replicas": replicas})
    new_cfg = config(kube, NEW, controller={"replicas": replicas})
    prepare(kube, old_cfg)  # the VictoriaMetrics CRDs, as its operator installs them
    policy = _safe_upgrades_policy(kube, old)
    for obj in policy:
        kube.api.post(_vap_path(obj), obj)
    clients: list[Client] = []
    hold = ExitStack()
    try:
        start = time.monotonic()
        kube.playbook("install", old_cfg).ok()
        timings[f"install {old}"] = time.monotonic() - start
        tenant = _tenant(kube)
        assert _image(_deployment(kube, "envoy-gateway")).endswith(f":{old}")
        kube.wait(
            lambda: not _unsettled(kube, old_cfg, tenant), 120, f"{old} settles: {_unsettled(kube, old_cfg, tenant)}"
        )
        vip = _vip(kube)
        assert vip, "the default Gateway has an address"
        assert {_image(d).rpartition(":")[2] for d in _proxies(kube)} == {ENVOY_OF_RELEASE[old]}
        (own,) = kube.wait(
            lambda: [
                d["metadata"]["name"]
                for d in kube.items(f"/apis/apps/v1/namespaces/{NS}/deployments", labelSelector=OWN_PROXY)
            ],
            60,
            "the tenant Gateway's proxy",
        )
        address = gateway_address(kube, UPGRADE_NAMESPACE, "own")
        kube.wait(lambda: _serves(address, UPGRADE_DEDICATED_PORT), 90, f"the tenant route through {own}'s pods")
        assert len(_controller_pods(kube)) == replicas
        # TLS the whole time: terminated with the tenant's certificate (SDS), and passed through to the
        # backend's own (the one it showed before the upgrade).
        https = Client(
            address, UPGRADE_HTTPS_PORT, UPGRADE_HOST, sni=UPGRADE_HOST, certificate=_tenant_certificate(kube)
        )
        kube.wait(
            lambda: https.once() is None, 90, f"HTTPS on {address}:{UPGRADE_HTTPS_PORT} with the tenant's certificate"
        )
        passthrough = Client(address, UPGRADE_PASSTHROUGH_PORT, UPGRADE_PASSTHROUGH_HOST, sni=UPGRADE_PASSTHROUGH_HOST)
        kube.wait(lambda: passthrough.once() is None, 90, f"TLS passed through on {address}:{UPGRADE_PASSTHROUGH_PORT}")
        passthrough.certificate = fetch(
            address, UPGRADE_PASSTHROUGH_PORT, UPGRADE_PASSTHROUGH_HOST, netns=None, sni=UPGRADE_PASSTHROUGH_HOST
        ).certificate
        client = Client(address, UPGRADE_DEDICATED_PORT)
        clients = [client, https, passthrough]
        for each in clients:
            each.start()
        time.sleep(1)

        # The upgrade, with new proxy pods held by admission: the controller moves, the proxies wait.
        old_pod = {p["metadata"]["name"] for p in _controller_pods(kube)}
        old_proxies = {
            p["metadata"]["name"] for p in kube.items(f"/api/v1/namespaces/{NS}/pods", labelSelector=PROXY_PODS)
        }
        certs = (kube.get(f"/api/v1/namespaces/{NS}/secrets/envoy") or {}).get("data")
        leader = kube.wait(lambda: _leader(kube).strip(), 60, f"the {old} controller leads")
        if old in HELD:
            hold.enter_context(pods_held(kube, NS, "app.kubernetes.io/component", "proxy"))
        mark = len(kube.cluster.audit())
        _phase(clients, "controller replaced")
        start = time.monotonic()
        overlap = hold.enter_context(Overlap(kube))  # stopped once the proxies rolled
        upgrade = kube.playbook("install", new_cfg).ok()
        timings[f"install {NEW}"] = time.monotonic() - start
        assert overlap.most >= replicas + 1, "a real rolling update: a new controller pod ran beside the old ones"
        w = writes(kube, mark)
        crd_writes = [i for i, x in enumerate(w) if x.resource == "customresourcedefinitions"]
        helm_release = [
            i
            for i, x in enumerate(w)
            if x.resource == "secrets" and x.name.startswith("sh.helm.release.v1.envoy-gateway")
        ]
        assert crd_writes, f"the {NEW} CRDs are applied"
        assert helm_release, "helm records the upgrade"
        assert max(crd_writes) < min(helm_release), f"the CRDs are {NEW}'s before helm upgrades the release"
        # Nothing deleted: the only deletions are helm's pre-upgrade hooks (certgen's Job and RBAC, the
        # topology injector webhook: hook-delete-policy before-hook-creation), each created again after.
        by_block = block_writes(kube, mark)
        for i, x in enumerate(by_block):
            if x.verb in ("delete", "deletecollection"):
                recreated = [y for y in by_block[i:] if y.verb == "create" and y[1:4] == x[1:4]]
                assert x.agent.startswith("Helm/"), f"the block deleted {x}"
                assert recreated, f"deleted and not re-created: {x}"
        assert [x for x in w if x.resource == "jobs" and x.verb == "create" and x.agent.startswith("Helm/")], (
            "certgen ran again"
        )
        assert (kube.get(f"/api/v1/namespaces/{NS}/secrets/envoy") or {}).get("data") == certs, (
            "certgen keeps the proxies' xDS client certificates: the running Envoy reconnects to the new controller"
        )
        gateways = kube.get(f"{CRD}/gateways.gateway.networking.k8s.io") or {}
        assert gateways["metadata"]["annotations"]["gateway.networking.k8s.io/bundle-version"] == "v1.6.1"
        assert kube.get(f"{CRD}/tcproutes.gateway.networking.k8s.io"), "v1.9 reads TCPRoutes as v1: its CRD is there"
        for obj in policy:  # the cluster owner's policy: neither in the way, nor taken over, nor removed
            live = kube.get(f"{_vap_path(obj)}/{SAFE_UPGRADES}") or {}
            assert "meta.helm.sh/release-name" not in (live.get("metadata", {}).get("annotations") or {})
        release = kube.items(
            f"/api/v1/namespaces/{NS}/secrets", labelSelector="owner=helm,name=envoy-gateway,status=deployed"
        )
        assert [s["metadata"]["labels"]["version"] for s in release] == ["2"]
        controller = _deployment(kube, "envoy-gateway")
        assert _image(controller).endswith(f":{NEW}")
        assert _rolled(controller), "install waited for the controller's rollout, not just Available"
        new_pod = {p["metadata"]["name"] for p in _controller_pods(kube)}
        assert not new_pod & old_pod
        # The identity is <hostname>_<uuid>, one uuid per process; the old pod has stopped.
        kube.wait(lambda: _leader(kube).strip() not in ("", leader), 60, f"the {NEW} controller leads")
        kube.wait(
            lambda: not _unsettled(kube, new_cfg, tenant), 120, f"{NEW} settles: {_unsettled(kube, new_cfg, tenant)}"
        )
        assert _vip(kube) == vip, "the VIP stays"
        kind = "patch" if old.startswith("v1.9.") else "upgrade"
        assert f"{kind} {old} -> {NEW}" in upgrade.output, upgrade.output[-3000:]

        # Half-upgraded: the controller is v1.9.1, the proxies' new pods cannot be created yet.
        kube.wait(
            lambda: {_image(d).rpartition(":")[2] for d in _proxies(kube)} == {ENVOY_OF_RELEASE[NEW]},
            60,
            f"the proxy Deployments on {NEW}'s Envoy",
        )
        if old in HELD:
            status = kube.playbook("status", new_cfg)
            assert status.returncode != 0, "status is not healthy while the proxies roll"
            rolling = f"rolling to docker.io/envoyproxy/envoy:{ENVOY_OF_RELEASE[NEW]}"
            assert rolling in status.output, status.output[-3000:]
            planned = kube.playbook("plan", new_cfg).ok()
            assert "Still rolling (as read before this run): proxies/" in planned.output, planned.output[-3000:]
            assert f"{NEW} as installed" in planned.output

        # The proxies roll: each new pod Ready before its old one drains and goes (maxUnavailable 0).
        _phase(clients, "proxy pods replaced")
        start = time.monotonic()
        if old in HELD:
            hold.close()  # the pods' admission hold, and the sampler
        # 300 s: on a loaded 2-core machine three nodes' new fleets took over 180 s to settle (CI, 2026-12-06).
        kube.wait(lambda: _proxy_pods_settled(kube), 300, "the proxy pods rolled and the old ones gone")
        timings["proxy rollout"] = time.monotonic() - start
        hold.close()
        _phase(clients, "after")
        time.sleep(1)
        # A controller restart after the upgrade (envoyproxy/gateway#9519: proxies lost TLS after one).
        leader = kube.wait(lambda: _leader(kube).strip(), 60, f"the {NEW} controller leads")
        _phase(clients, "controller restarted")
        start = time.monotonic()
        _restart(kube, "envoy-gateway")
        kube.wait(lambda: _rolled(_deployment(kube, "envoy-gateway")), 180, "the controller restarted")
        kube.wait(lambda: _leader(kube).strip() not in ("", leader), 60, "a restarted controller leads")
        timings["controller restart"] = time.monotonic() - start
        time.sleep(5)
        _phase(clients, "after restart")
        time.sleep(2)
        for each in clients:
            each.stop()
        show(
            f"UPGRADE {old} -> {NEW} ({replicas} controller replica(s)) failed requests (steady clients, 20/s each):\n"
            f"  HTTP {client.report()}\n  HTTPS (terminated, tenant's certificate) {https.report()}\n"
            f"  TLS passthrough {passthrough.report()}\n"
            f"  wrong certificates: {len(https.wrong_certificates()) + len(passthrough.wrong_certificates())}\n"
            "UPGRADE timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
        )
        failures = sorted({line for each in clients for lines in each.failed.values() for line in lines})
        show(
            "UPGRADE timeline (pods, lease holder; the first and last failures of each kind):\n  "
            + "\n  ".join(overlap.timeline)
            + ("\n  failures: " + " .. ".join(failures[:1] + failures[-1:]) if failures else "\n  failures: none")
        )
        handover = ("controller replaced", "proxy pods replaced")
        for each in clients:
            for phase in (*handover, "after", "controller restarted", "after restart"):
                assert each.sent.get(phase), (phase, each.sent)
                if each is https and phase in handover and old in UPSTREAM_WINDOW:
                    continue  # judged below
                assert not each.failed.get(phase), (each.port, phase, each.failed.get(phase))
        if old in UPSTREAM_WINDOW:
            _judge_upstream_window(old, https, overlap.timeline, (old_pod, old_proxies))
        assert not https.wrong_certificates() + passthrough.wrong_certificates()
        assert kube.playbook("status", new_cfg).returncode == 0

        again = kube.playbook("install", new_cfg, record_helm=True).ok()
        assert again.recap["changed"] == 0, again.output[-3000:]
        assert again.helm == [], f"a second {NEW} install starts no helm"

        mark = len(kube.cluster.audit())
        down = kube.playbook("install", config(kube, old))
        assert down.returncode != 0
        assert f"chart.version {old} is older than the Envoy Gateway {NEW}" in down.output, down.output[-3000:]
        assert "chart.allow_downgrade: true" in down.output
        assert block_writes(kube, mark) == [], "nothing written by the refused downgrade"
    finally:
        for each in clients:
            each.stop()
        hold.close()
        kube.delete(
            {
                "apiVersion": "gateway.networking.k8s.io/v1",
                "kind": "Gateway",
                "metadata": {"name": "own", "namespace": UPGRADE_NAMESPACE},
            }
        )
        apiserver.delete_namespace(kube.api, UPGRADE_NAMESPACE)
        for obj in policy:
            apiserver.delete(kube.api, f"{_vap_path(obj)}/{obj['metadata']['name']}")
