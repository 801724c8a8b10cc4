"""The block's alerts (the rendered VMRule) evaluated by a real vmalert on metrics a real VictoriaMetrics
scraped from a real Envoy (Envoy Gateway's translated configuration of examples/waf) and the real WAF:
healthy traffic fires nothing but the testbed's standing faults; the WAF stopped fires the WAF alerts and,
fail-closed, the downstream 5xx one (not the upstream one); a backend answering 500s fires the upstream 5xx
one. The rendered rule file must pass `vmalert -dryRun` (and a broken copy must not: the check can fail).

VictoriaMetrics single-node and vmalert are built from their Go module (tools/go/victoriametrics,
`make tools`). VictoriaMetrics scrapes each component under the `job` label the block's own scrapes set
(monitoring.job), every second.

What the testbed changes, and why: `metrics.rules.for` is 2s (a config key) and the alerts whose `for:` is
fixed in alerts.py (the availability and xDS ones, 2m/5m/0m) get the same 2s in the rule file vmalert reads,
so the test takes seconds; `for:` is vmalert's own timer, the expressions are the block's unchanged. The
thresholds are the defaults.

Standing faults of the testbed (they fire from the start, on their real fault, and are asserted to):
there is no Envoy Gateway controller (its scrape target answers nothing: EnvoyGatewayControllerDown), and
one Envoy runs for a fleet of data_plane.replicas 2 (EnvoyProxyFleetBelowSize).

A rejected xDS update: the testbed's Envoy has static resources (no subscription to reject an update), so a
second real Envoy, a fleet of its own in the proxies' job, subscribes to LDS from a file (path_config_source,
the same LDS API and listener manager as over gRPC) and is sent an update with a duplicate listener, which it
rejects (envoy_listener_manager_lds_update_rejected): EnvoyXdsConfigRejected must fire. The rejection from
Envoy Gateway's own xDS server is not produced here (the controller does not run in the traffic testbed).

Not proven here: EnvoyGatewayReconcileFailing (needs a controller), EnvoyProxyMemoryNearLimit and
EnvoyWafBlockingAboveBaseline (their faults, a heap near a limit and a day's baseline, are not produced),
EnvoyP99LatencyHigh (checked quiet only).

First run: EnvoyUpstream5xxRatioHigh fired when the WAF stopped, on the WAF's ext_proc cluster
(envoyextensionpolicy/.../extproc/0): the expression now counts only routes' clusters (alerts.py).
Mutation checks (done once): EnvoyUpstream5xxRatioHigh on `envoy_response_code_class="4"` -> red (never
fired on the 500s); EnvoyWafDown on `up{job="<block>-wafx"}` -> red (fired on healthy traffic);
EnvoyXdsConfigRejected on lds_update_failure instead of lds_update_rejected -> red (never fired). The broken
copy of the rule file checks that `vmalert -dryRun` can refuse one.
"""

from __future__ import annotations

import copy
import json
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from envoy_block.components.monitoring import PROXY_METRICS_PATH
from envoy_block.polycrate import merge_config
from tests.conftest import ROOT
from tests.translator import configs

from .deploy import Deployed, deployed
from .stack import ENVOY, WAF_ENV, dies_with_us, http_request, wait_for

VICTORIA_METRICS = ROOT / ".tools/bin/victoria-metrics"
VMALERT = ROOT / ".tools/bin/vmalert"
# Envoy Gateway's stats listener (bootstrap.EnvoyStatsPort), where the proxies' VMPodScrape reads.
ENVOY_STATS_PORT = 19001
FOR = "2s"
# How long a fault may take to fire its alert: scrape (1s) + latency offset (1s) + evaluation (1s) + FOR,
# with room for a loaded machine.
FIRE_WITHIN = 45.0
STANDING = {"EnvoyGatewayControllerDown", "EnvoyProxyFleetBelowSize"}


def alerting_config() -> dict[str, Any]:
    return dict(
        merge_config(
            copy.deepcopy(configs.EXAMPLES["waf"]),
            {"metrics": {"vmpodscrape": {"enabled": True}, "rules": {"enabled": True, "for": FOR}}},
        )
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


class Traffic:
    """Requests through the edge, one every 50 ms, to whatever path `path` says now (a thread)."""

    def __init__(self, edge: Deployed) -> None:
        self.port, self.host = edge.port("http"), edge.host("http")
        self.path = "/healthy"
        self.statuses: list[int] = []
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopped.is_set():
            try:
                self.statuses.append(http_request(self.port, self.host, self.path, timeout=5)[0])
            except OSError:
                self.statuses.append(0)
            self.stopped.wait(0.05)

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=10)


def _listener(name: str, port: int) -> dict[str, Any]:
    return {
        "@type": "type.googleapis.com/envoy.config.listener.v3.Listener",
        "name": name,
        "address": {"socket_address": {"address": "127.0.0.1", "port_value": port}},
        "filter_chains": [
            {
                "filters": [
                    {
                        "name": "envoy.filters.network.direct_response",
                        "typed_config": {
                            "@type": "type.googleapis.com/envoy.extensions.filters.network.direct_response.v3.Config"
                        },
                    }
                ]
            }
        ],
    }


class XdsEnvoy:
    """A real Envoy subscribed to LDS from a file: Envoy applies (or rejects) each new version of it as it
    would a DiscoveryResponse from the controller."""

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.admin_port = free_port()
        self.lds = workdir / "lds.yaml"
        self.update([_listener("probe", free_port())])
        bootstrap = {
            "node": {"id": "xds-probe", "cluster": "xds-probe"},
            "admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": self.admin_port}}},
            "dynamic_resources": {
                "lds_config": {"resource_api_version": "V3", "path_config_source": {"path": str(self.lds)}}
            },
        }
        (workdir / "bootstrap.yaml").write_text(yaml.safe_dump(bootstrap), encoding="utf-8")
        self.log = (workdir / "envoy.log").open("wb")
        command = [str(ENVOY), "-c", str(workdir / "bootstrap.yaml"), "--concurrency", "1", "--disable-hot-restart"]
        command += ["--log-level", "warn"]
        self.process = subprocess.Popen(dies_with_us(command), stdout=self.log, stderr=subprocess.STDOUT, env=WAF_ENV)
        wait_for("the LDS-subscribed Envoy applying its first update", lambda: self.lds_stat("success") == 1)

    def update(self, listeners: list[dict[str, Any]]) -> None:
        """A new LDS version: written beside and moved into place (Envoy watches for the rename)."""
        staged = self.dir / "lds.staged.yaml"
        staged.write_text(yaml.safe_dump({"resources": listeners}), encoding="utf-8")
        staged.rename(self.lds)

    def lds_stat(self, name: str) -> int:
        if self.process.poll() is not None:
            raise RuntimeError(f"the LDS-subscribed Envoy exited: {(self.dir / 'envoy.log').read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.admin_port}/stats?filter=lds", timeout=1) as answer:
                stats = answer.read().decode()
        except OSError:
            return -1
        for line in stats.splitlines():
            key, _, value = line.partition(": ")
            if key == f"listener_manager.lds.update_{name}":
                return int(value)
        return -1

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=15)
        self.log.close()


class Monitoring:
    """VictoriaMetrics (scraping the components) and vmalert (evaluating the rule file) on loopback."""

    def __init__(self, workdir: Path, scrape: dict[str, Any], rule_file: Path) -> None:
        self.dir = workdir
        self.vm_url = f"http://127.0.0.1:{free_port()}"
        self.vmalert_url = f"http://127.0.0.1:{free_port()}"
        (workdir / "scrape.yml").write_text(yaml.safe_dump(scrape), encoding="utf-8")
        self.processes: list[subprocess.Popen[bytes]] = []
        self._start(
            "victoria-metrics",
            [
                str(VICTORIA_METRICS),
                f"-storageDataPath={workdir / 'vm-data'}",
                f"-httpListenAddr={self.vm_url.removeprefix('http://')}",
                f"-promscrape.config={workdir / 'scrape.yml'}",
                "-search.latencyOffset=1s",
                "-search.disableCache",
            ],
        )
        wait_for("VictoriaMetrics ready", lambda: self._answers(f"{self.vm_url}/health"), why=self._logs)
        self._start(
            "vmalert",
            [
                str(VMALERT),
                f"-rule={rule_file}",
                f"-datasource.url={self.vm_url}",
                f"-remoteWrite.url={self.vm_url}",
                "-notifier.blackhole",
                "-evaluationInterval=1s",
                "-rule.evalDelay=1s",
                f"-httpListenAddr={self.vmalert_url.removeprefix('http://')}",
            ],
        )
        wait_for("vmalert ready", lambda: self._answers(f"{self.vmalert_url}/health"), why=self._logs)

    def _start(self, name: str, argv: list[str]) -> None:
        log = (self.dir / f"{name}.log").open("wb")
        self.processes.append(subprocess.Popen(dies_with_us(argv), stdout=log, stderr=subprocess.STDOUT, env=WAF_ENV))

    def _answers(self, url: str) -> bool:
        for process in self.processes:
            if process.poll() is not None:
                raise RuntimeError(f"{process.args!r} exited with {process.returncode}: {self._logs()}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def _logs(self) -> str:
        return "".join(f"\n{p.name}: {p.read_text(errors='replace')[-2000:]}" for p in self.dir.glob("*.log"))

    def query(self, expr: str) -> list[dict[str, Any]]:
        url = f"{self.vm_url}/api/v1/query?{urllib.parse.urlencode({'query': expr})}"
        return list(get_json(url)["data"]["result"])

    def alerts(self) -> dict[str, str]:
        """Alert name -> state (pending or firing), from vmalert's API."""
        found: dict[str, str] = {}
        for alert in get_json(f"{self.vmalert_url}/api/v1/alerts")["data"]["alerts"]:
            if found.get(alert["name"]) != "firing":
                found[alert["name"]] = alert["state"]
        return found

    def labels(self, name: str) -> list[dict[str, str]]:
        """The labels of each active instance of alert `name` (which Gateway, which cluster)."""
        alerts = get_json(f"{self.vmalert_url}/api/v1/alerts")["data"]["alerts"]
        return [alert["labels"] for alert in alerts if alert["name"] == name]

    def rules(self) -> list[dict[str, Any]]:
        groups = get_json(f"{self.vmalert_url}/api/v1/rules")["data"]["groups"]
        return [rule for group in groups for rule in group["rules"]]

    def stop(self) -> None:
        for process in reversed(self.processes):  # vmalert first: it flushes to VictoriaMetrics on exit
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=5)


@contextmanager
def monitoring(edge: Deployed, workdir: Path, rule_file: Path, xds: XdsEnvoy) -> Iterator[Monitoring]:
    config = edge.scenario.config
    block = config.block_name
    rendered = edge.scenario.inputs
    waf_scrape = next(o for o in rendered if o["kind"] == "VMPodScrape" and o["metadata"]["name"].endswith("-waf"))
    (endpoint,) = waf_scrape["spec"]["podMetricsEndpoints"]
    waf = next(o for o in rendered if o["kind"] == "Deployment" and o["metadata"]["name"].endswith("-waf"))
    ports = {p["name"]: p["containerPort"] for p in waf["spec"]["template"]["spec"]["containers"][0]["ports"]}

    def job(component: str, port: int, path: str) -> dict[str, Any]:
        return {
            "job_name": f"{block}-{component}",
            "metrics_path": path,
            "static_configs": [{"targets": [f"127.0.0.1:{port}"]}],
        }

    proxies = job("proxies", ENVOY_STATS_PORT, PROXY_METRICS_PATH)
    # The LDS-subscribed Envoy: a fleet of its own (the owner label the VMPodScrape copies from its pod).
    fleet = {"gateway_envoyproxy_io_owning_gateway_name": "xds-probe"}
    proxies["static_configs"].append({"targets": [f"127.0.0.1:{xds.admin_port}"], "labels": fleet})
    scrape = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
        "scrape_configs": [
            proxies,
            job("waf", ports[endpoint["port"]], endpoint["path"]),
            # No controller runs in the traffic testbed: its target answers nothing (a standing fault).
            job("controller", free_port(), "/metrics"),
        ],
    }
    running = Monitoring(workdir, scrape, rule_file)
    try:
        yield running
    finally:
        running.stop()


def rule_file(edge: Deployed, directory: Path) -> Path:
    """The rendered VMRule's groups as vmalert reads them, every `for:` set to FOR."""
    (vm_rule,) = [o for o in edge.scenario.inputs if o["kind"] == "VMRule"]
    groups = copy.deepcopy(vm_rule["spec"]["groups"])
    for group in groups:
        for rule in group["rules"]:
            rule["for"] = FOR
    path = directory / "rules.yml"
    path.write_text(yaml.safe_dump({"groups": groups}), encoding="utf-8")
    return path


def dry_run(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VMALERT), "-dryRun", f"-rule={path}"], capture_output=True, text=True, timeout=60, check=False
    )


def wait_firing(mon: Monitoring, names: set[str], fault: str, since: float) -> dict[str, float]:
    """Wait until every alert in `names` fires; print and return when each was first seen firing."""
    seen: dict[str, float] = {}

    def all_firing() -> bool:
        now = mon.alerts()
        for name in names:
            if now.get(name) == "firing" and name not in seen:
                seen[name] = time.monotonic() - since
                print(f"ALERT {name} firing {seen[name]:.1f} s after {fault}")
        return set(seen) == names

    wait_for(
        f"{sorted(names)} firing after {fault}",
        all_firing,
        timeout=FIRE_WITHIN,
        why=lambda: f"(fired: {sorted(seen)}; active now: {mon.alerts()})",
    )
    return seen


def test_alerts_fire_on_their_faults_and_only_then(tmp_path: Path) -> None:
    with deployed(alerting_config(), tmp_path) as edge:
        rules = rule_file(edge, tmp_path)
        checked = dry_run(rules)
        assert checked.returncode == 0, f"vmalert -dryRun refused the rendered rules: {checked.stdout[-3000:]}"
        broken = tmp_path / "broken.yml"
        broken.write_text(rules.read_text(encoding="utf-8").replace("expr: ", "expr: sum(", 1), encoding="utf-8")
        assert dry_run(broken).returncode != 0, "vmalert -dryRun accepted a rule file with a broken expression"
        names = {r["alert"] for g in yaml.safe_load(rules.read_text(encoding="utf-8"))["groups"] for r in g["rules"]}
        assert names >= STANDING, f"the testbed's standing faults have no alert among {sorted(names)}"

        xds_dir = Path(tempfile.mkdtemp(prefix="xds-", dir=tmp_path))
        xds = XdsEnvoy(xds_dir)
        try:
            with monitoring(edge, Path(tempfile.mkdtemp(prefix="alerts-", dir=tmp_path)), rules, xds) as mon:
                traffic = Traffic(edge)
                try:
                    _phases(edge, mon, traffic, names, xds)
                finally:
                    traffic.stop()
        finally:
            xds.stop()


def _phases(edge: Deployed, mon: Monitoring, traffic: Traffic, names: set[str], xds: XdsEnvoy) -> None:
    block = edge.scenario.config.block_name
    start = time.monotonic()
    # Healthy: wait until VictoriaMetrics has a rate of the proxies' upstream requests (two scrapes with
    # traffic between them) and the WAF is up, then let vmalert evaluate a few rounds on it.
    wait_for(
        "the proxies' and the WAF's series in VictoriaMetrics",
        lambda: (
            bool(mon.query(f'sum(rate(envoy_cluster_upstream_rq_total{{job="{block}-proxies"}}[5m])) > 0'))
            and bool(mon.query(f'up{{job="{block}-waf"}} == 1'))
        ),
        timeout=FIRE_WITHIN,
    )
    wait_firing(mon, STANDING, "start (standing faults)", start)
    time.sleep(5)
    assert set(traffic.statuses) == {200}, f"healthy traffic got {sorted(set(traffic.statuses))}"
    errors = {r["name"]: r["lastError"] for r in mon.rules() if r.get("lastError")}
    assert not errors, f"vmalert could not evaluate: {errors}"
    evaluated = {r["name"] for r in mon.rules()}
    assert evaluated == names, f"vmalert evaluates {sorted(evaluated)}, the VMRule has {sorted(names)}"
    quiet = set(mon.alerts()) - STANDING
    assert not quiet, f"healthy traffic fired {quiet}"

    # The WAF stopped: fail closed, Envoy answers 500 and never reaches the backend.
    assert edge.waf is not None
    edge.waf.stop()
    fault = time.monotonic()
    try:
        waf_alerts = {"EnvoyWafDown", "EnvoyWafStreamsFailing", "EnvoyDownstream5xxRatioHigh"}
        wait_firing(mon, waf_alerts, "the WAF stopped", fault)
        assert 500 in traffic.statuses, "the WAF stopped yet no request got 500 (fail closed)"
        upstream = mon.labels("EnvoyUpstream5xxRatioHigh")
        assert not upstream, f"the WAF stopped fired the upstream (backend) alert: {upstream}"
    finally:
        edge.waf.start()
    wait_for("EnvoyWafDown resolved after the WAF restarted", lambda: "EnvoyWafDown" not in mon.alerts(), 30)

    # A backend answering 500s (through the restarted WAF).
    traffic.path = "/status/500/"
    fault = time.monotonic()
    wait_firing(mon, {"EnvoyUpstream5xxRatioHigh"}, "the backend answering 500", fault)
    clusters = {labels.get("envoy_cluster_name", "") for labels in mon.labels("EnvoyUpstream5xxRatioHigh")}
    print(f"EnvoyUpstream5xxRatioHigh names {sorted(clusters)}")
    assert clusters, "EnvoyUpstream5xxRatioHigh names no cluster"
    assert all(c.startswith("httproute/") for c in clusters), f"not the tenant's route: {clusters}"
    assert "EnvoyP99LatencyHigh" not in mon.alerts()
    assert "EnvoyXdsConfigRejected" not in mon.alerts(), "EnvoyXdsConfigRejected fired before any rejection"

    # A rejected xDS update: two listeners of one name in one LDS version, which Envoy refuses.
    xds.update([_listener("probe", free_port()), _listener("probe", free_port())])
    fault = time.monotonic()
    wait_for("the LDS-subscribed Envoy rejecting the update", lambda: xds.lds_stat("rejected") == 1)
    wait_firing(mon, {"EnvoyXdsConfigRejected"}, "the rejected LDS update", fault)
    fleets = {
        labels.get("gateway_envoyproxy_io_owning_gateway_name") for labels in mon.labels("EnvoyXdsConfigRejected")
    }
    assert fleets == {"xds-probe"}, f"EnvoyXdsConfigRejected names {fleets}, not the rejecting Envoy's fleet"
