"""Envoy Gateway v1.9.0 -> v1.9.1 (patch) and v1.8.3 -> v1.9.1 (minor) with the real charts, both real
controllers and a real Envoy serving a tenant's route the whole time.

The starting point is what an operator on the old release had: the block's config with that chart.version
(and that release's controller and Envoy images), a cluster owner's Gateway API safe-upgrades admission policy
(from that release's CRD chart: the v1.5.1 bundle for v1.8.3) and a tenant with routes on the shared Gateway
and a Gateway of their own. Then install with v1.9.1: CRDs first (server-side, past the admission policy),
helm upgrades the release (certgen runs again), the v1.9.1 controller takes the host ports and the lease,
every object is Accepted/Programmed for its current generation again, the proxies move to v1.9.1's Envoy
(distroless-v1.39.1), the VIP stays. A steady client counts
failed requests through the tenant Gateway's real Envoy while the controller is replaced and while the
Envoy process itself is replaced (printed). Half-way (proxies held) status and plan say what still rolls;
a second install changes nothing; a downgrade stops before writing anything.

Mutation checks (done once): dropping the downgrade problem from lifecycle.install_state -> red at the
downgrade (install went ahead). Waiting for the controller as Available only (the old wait) stayed green:
here the handover takes about a second, so the rollout is over before install ends; that wait is argued
in roles/envoy_apply/tasks/controller.yml, not proven here.
"""

from __future__ import annotations

import http.client
import http.server
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block.polycrate import merge_config
from envoy_block.release import ENVOY_OF_RELEASE
from tests.cluster.common import EG_API, GW_API, POLICY_KINDS, block_writes, policy_accepted, writes
from tests.cluster.conftest import CHARTS, Kube
from tests.cluster.proxy import EchoHandler, ProxyPod, host_address
from tests.cluster.realnet import Client
from tests.cluster.test_examples import prepare
from tests.conftest import ROOT
from tests.support import apiserver
from tests.support.helpers import plan
from tests.support.tenant_objects import (
    UPGRADE_DEDICATED_PORT,
    UPGRADE_NAMESPACE,
    proxy_protocol_config,
    upgrade_tenant,
)

pytestmark = pytest.mark.playbook
NS = "envoy-gateway-system"
# The default release and the releases it is upgraded from: the previous patch and the previous minor line.
NEW = "v1.9.1"
OLDS = ("v1.9.0", "v1.8.3")
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
            "network_policy": {"provider": "kubernetes", "api_server_cidrs": ["10.96.0.1/32"]},
            **extra,
        },
    )
    return kube.config(**cfg)


def _serves(port: int) -> bool:
    try:
        with urllib.request.urlopen(
            urllib.request.Request(f"http://127.0.0.1:{port}/", headers={"Host": "own.example.com"}), timeout=2
        ) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@pytest.fixture
def backend() -> Iterator[int]:
    server = http.server.ThreadingHTTPServer(("0.0.0.0", 0), EchoHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


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


def _tenant(kube: Kube, port: int) -> list[dict[str, Any]]:
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": UPGRADE_NAMESPACE}})
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "echo", "namespace": UPGRADE_NAMESPACE},
            "spec": {
                "ports": [
                    {"name": "http", "port": 80, "targetPort": port},
                    {"name": "tls", "port": 443, "targetPort": port},
                ]
            },
        }
    )
    kube.api.post(
        f"/apis/discovery.k8s.io/v1/namespaces/{UPGRADE_NAMESPACE}/endpointslices",
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": "echo-1",
                "namespace": UPGRADE_NAMESPACE,
                "labels": {"kubernetes.io/service-name": "echo"},
            },
            "addressType": "IPv4",
            "ports": [
                {"name": "http", "port": port, "protocol": "TCP"},
                {"name": "tls", "port": port, "protocol": "TCP"},
            ],
            "endpoints": [{"addresses": [host_address()], "conditions": {"ready": True}}],
        },
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


def _post(proxy: ProxyPod, path: str) -> None:
    request = urllib.request.Request(f"http://{proxy.admin[0]}:{proxy.admin[1]}/{path}", method="POST")
    with urllib.request.urlopen(request, timeout=5):
        pass


def _private_network() -> bool:
    """Only loopback in this process's network namespace: `unshare -n`, where a sysctl touches nothing else."""
    lines = Path("/proc/net/dev").read_text(encoding="utf-8").splitlines()[2:]
    return [line.split(":", 1)[0].strip() for line in lines] == ["lo"]


def _swap(kube: Kube, old: ProxyPod, workdir: Path) -> ProxyPod:
    """Replace the running Envoy by one made from the proxy Deployment's current (v1.9.1) spec, as a rolling
    update does: the new one listening and configured first (both bind the port: Envoy sets SO_REUSEPORT),
    then the old one fails its health check and starts draining, as Envoy Gateway's shutdown manager makes
    it, and stops listening (what the endpoint's removal from the Service does on a cluster); requests it
    accepted finish, then it stops. In a private network namespace the kernel hands connections still
    queued on the closed socket to the new one (tcp_migrate_req), as the Service would have sent them there."""
    if _private_network():
        Path("/proc/sys/net/ipv4/tcp_migrate_req").write_text("1", encoding="utf-8")
    (name,) = [
        d["metadata"]["name"] for d in kube.items(f"/apis/apps/v1/namespaces/{NS}/deployments", labelSelector=OWN_PROXY)
    ]
    new = ProxyPod(kube.api, NS, name, workdir)
    try:
        kube.wait(
            lambda: UPGRADE_DEDICATED_PORT in new.gateway_listener_ports(),
            60,
            f"the new Envoy's listener ({new.errors()[-800:]})",
        )
    except BaseException:
        new.stop()
        raise
    _post(old, "healthcheck/fail")
    _post(old, "drain_listeners?inboundonly")
    time.sleep(1)  # requests the old Envoy accepted finish
    old.stop()
    return new


@pytest.mark.parametrize("old", OLDS)
def test_upgrade_to_v1_9_1_with_traffic(
    kube: Kube, backend: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str
) -> None:
    for chart in (f"gateway-helm-{old}.tgz", f"gateway-crds-helm-{old}.tgz"):
        kube.registry.push(CHARTS / chart)
    timings: dict[str, float] = {}
    kubelet = kube.cluster.kubelet
    assert kubelet is not None
    # The CRDs other tests left are v1.9.1's: start from a cluster that never had them.
    ours = (".gateway.networking.k8s.io", ".gateway.envoyproxy.io")
    for crd in kube.items(CRD):
        if crd["metadata"]["name"].endswith(ours):
            apiserver.delete(kube.api, f"{CRD}/{crd['metadata']['name']}")
    kube.wait(lambda: not [c for c in kube.items(CRD) if c["metadata"]["name"].endswith(ours)], 120, "CRDs removed")
    old_cfg, new_cfg = config(kube, old), config(kube, NEW)
    prepare(kube, old_cfg)  # the VictoriaMetrics CRDs, as its operator installs them
    policy = _safe_upgrades_policy(kube, old)
    for obj in policy:
        kube.api.post(_vap_path(obj), obj)
    old_proxy: ProxyPod | None = None
    client: Client | None = None
    try:
        start = time.monotonic()
        kube.playbook("install", old_cfg).ok()
        timings[f"install {old}"] = time.monotonic() - start
        tenant = _tenant(kube, backend)
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
        old_proxy = ProxyPod(kube.api, NS, own, tmp_path)
        kube.wait(
            lambda: _serves(UPGRADE_DEDICATED_PORT), 60, f"the tenant route through Envoy ({old_proxy.errors()[-800:]})"
        )
        client = Client("127.0.0.1", UPGRADE_DEDICATED_PORT).start()
        time.sleep(1)

        # The upgrade, with the new proxy pods held unscheduled: the controller moves, the proxies wait.
        old_pod = {p["metadata"]["name"] for p in _controller_pods(kube)}
        certs = (kube.get(f"/api/v1/namespaces/{NS}/secrets/envoy") or {}).get("data")
        leader = kube.wait(lambda: _leader(kube).strip(), 60, f"the {old} controller leads")
        kubelet.hold = lambda pod: (pod["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "proxy"
        mark = len(kube.cluster.audit())
        client.phase = "controller replaced"
        start = time.monotonic()
        upgrade = kube.playbook("install", new_cfg).ok()
        timings[f"install {NEW}"] = time.monotonic() - start
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
        # The identity is <hostname>_<uuid>, one uuid per process; the old process has stopped.
        kube.wait(lambda: _leader(kube).strip() not in ("", leader), 60, f"the {NEW} controller leads")
        kube.wait(
            lambda: not _unsettled(kube, new_cfg, tenant), 120, f"{NEW} settles: {_unsettled(kube, new_cfg, tenant)}"
        )
        assert _vip(kube) == vip, "the VIP stays"
        kind = "patch" if old.startswith("v1.9.") else "upgrade"
        assert f"{kind} {old} -> {NEW}" in upgrade.output, upgrade.output[-3000:]

        # Half-upgraded: the controller is v1.9.1, the proxies' new pods cannot start yet.
        kube.wait(
            lambda: {_image(d).rpartition(":")[2] for d in _proxies(kube)} == {ENVOY_OF_RELEASE[NEW]},
            60,
            f"the proxy Deployments on {NEW}'s Envoy",
        )
        status = kube.playbook("status", new_cfg)
        assert status.returncode != 0, "status is not healthy while the proxies roll"
        assert f"rolling to docker.io/envoyproxy/envoy:{ENVOY_OF_RELEASE[NEW]}" in status.output, status.output[-3000:]
        planned = kube.playbook("plan", new_cfg).ok()
        assert "Still rolling (as read before this run): proxies/" in planned.output, planned.output[-3000:]
        assert f"{NEW} as installed" in planned.output

        # The proxies roll: the tenant's Envoy is replaced by one from v1.9.1's Deployment spec.
        kubelet.hold = None
        kube.wait(lambda: all(_rolled(d) for d in _proxies(kube)), 120, "the proxies rolled out")
        client.phase = "proxy replaced"
        start = time.monotonic()
        old_proxy = _swap(kube, old_proxy, tmp_path)
        timings["proxy swap"] = time.monotonic() - start
        client.phase = "after"
        time.sleep(1)
        client.stop()
        with capsys.disabled():  # in `make test`'s output too, not only with -s
            print(f"\nUPGRADE {old} -> {NEW} failed requests (steady client, 20/s): {client.report()}")
            print("UPGRADE timings: " + ", ".join(f"{k} {v:.1f} s" for k, v in timings.items()))
        for phase in ("controller replaced", "after"):
            assert not client.failed.get(phase), (phase, client.failed.get(phase))
        assert status.returncode != 0
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
        if client is not None:
            client.stop()
        kubelet.hold = None
        if old_proxy is not None:
            old_proxy.stop()
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
