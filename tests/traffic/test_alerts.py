"""The block's alerts (the rendered VMRule) evaluated by a real vmalert on metrics a real VictoriaMetrics
scraped from real components, every alert fired by its fault and quiet before it (docs/alerts.md has the
table). The rendered rule file must pass `vmalert -dryRun` (and a broken copy must not: the check can fail).

VictoriaMetrics single-node and vmalert are built from their Go module (tools/go/victoriametrics,
`make tools`). VictoriaMetrics scrapes each component under the `job` label the block's own scrapes set
(monitoring.job), every second.

What the testbed changes, and why: the rule file vmalert reads is the rendered VMRule with only each `for:`
shortened to 2s (one of 0 stays 0; rule_file checks nothing else differs), so the test takes seconds;
test_rendered_for_windows_are_the_documented_ones holds the rendered `for:` and severities to
docs/alerts.md. Thresholds are the defaults; the proxies' memory limit is MEMORY_LIMIT (the default 1Gi is
out of reach of a test).

test_alerts_fire_on_their_faults_and_only_then: a real Envoy on Envoy Gateway's translated configuration of
examples/waf, the real WAF, backends, and two more real Envoys subscribed to LDS from a file, a fleet of their
own (the probe fleet). In order: healthy traffic with background attacks fires nothing but the standing
faults (no controller: EnvoyGatewayControllerDown; one Envoy for the default Gateway's fleet of two:
EnvoyProxyFleetBelowSize for that fleet only); the baseline replayed (replay_baseline) keeps
EnvoyWafBlockingAboveBaseline quiet while the WAF blocks above waf_block_min_rate, and an attack burst fires
it; the WAF stopped fires EnvoyWafDown, EnvoyWafStreamsFailing and, fail closed, EnvoyDownstream5xxRatioHigh
(not the upstream one); a backend answering 500s fires EnvoyUpstream5xxRatioHigh on the route's cluster; a
backend answering after 1.5 s fires EnvoyP99LatencyHigh; one probe rejecting an LDS update (the listener
v1.9.1 builds for a catch-all HTTPS beside a TLS listener without routes) fires EnvoyXdsConfigRejected and the
other stopped fires EnvoyProxyFleetBelowSize for the probe fleet; uploads stalled one byte short (their bodies
held in the WAF's buffer) fire EnvoyProxyMemoryNearLimit;
every proxy stopped fires EnvoyProxiesDown.

test_controller_alerts_fire_on_a_real_controller: the real controller (v1.9.1) standalone (file provider,
host infrastructure running a real Envoy), scraped on its metrics port: quiet while it reconciles a Gateway;
a Gateway whose proxy it fails to create fires EnvoyGatewayReconcileFailing; stopped, it fires
EnvoyGatewayControllerDown. Its own test: its metrics port is the testbed Envoy's stats port.

Not proven here (docs/alerts.md says why): a rejection of the controller's own xDS push (the probes' LDS
rejection moves the same counter), reconcile failures only a cluster produces (status writes, applying a
Deployment), a day of real baseline (it is replayed, real values at moved times).

First run: EnvoyUpstream5xxRatioHigh fired when the WAF stopped, on the WAF's ext_proc cluster
(envoyextensionpolicy/.../extproc/0): the expression now counts only routes' clusters (alerts.py).
Mutation checks (done once; tools/mutate.py runs no traffic test, they need a network namespace):
EnvoyUpstream5xxRatioHigh on `envoy_response_code_class="4"` -> red (never fired on the 500s); EnvoyWafDown
on `up{job="<block>-wafx"}` -> red (fired on healthy traffic); EnvoyXdsConfigRejected on lds_update_failure
instead of lds_update_rejected -> red (never fired); EnvoyP99LatencyHigh's threshold x10 (a unit slip) -> red
(never fired on the 1.5 s backend); EnvoyWafBlockingAboveBaseline's baseline without `offset 10m` (it then
includes the burst) -> red; EnvoyProxyMemoryNearLimit at twice memory_ratio -> red; EnvoyGatewayReconcileFailing
on status="failed" -> red. The broken copy of the rule file checks that `vmalert -dryRun` can refuse one.
"""

from __future__ import annotations

import copy
import json
import re
import socket
import ssl
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
from envoy_block.components.proxies import fleet_size
from envoy_block.formats import quantity_bytes, seconds
from envoy_block.polycrate import merge_config
from tests.conftest import ROOT
from tests.support import metric_names
from tests.support.helpers import load, objects
from tests.support.output import show
from tests.translator import configs
from tests.translator.faults import empty_match_listener

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
# The testbed's standing faults: no controller, and one Envoy for the default Gateway's fleet of two (its
# static target carries no owner labels: the fleet "" below).
STANDING = {"EnvoyGatewayControllerDown", "EnvoyProxyFleetBelowSize"}
# The owner label that tells fleets apart on the proxies' series, and the LDS-subscribed probes' fleet.
FLEET_LABEL = "gateway_envoyproxy_io_owning_gateway_name"
PROBE_FLEET = "xds-probe"
# The proxies' memory limit in the test config (data_plane.resources.limits.memory; the block's default is
# 1Gi). The alert compares the real Envoy's heap with it; nothing enforces it here (no cgroup), so it is
# chosen between this testbed's Envoy at rest and under the load of STALLED_UPLOADS (measured and printed).
MEMORY_LIMIT = "32Mi"
# Requests whose bodies stop one byte short of their Content-Length, each held open: Envoy keeps every body
# in the WAF's buffer (ext_proc Buffered waits for the whole body), which is what the alert's runbook names.
STALLED_UPLOADS = 200
STALLED_BODY = 100_000
XSS = "/?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E"
# Background attacks while the edge is healthy: ~2.5 blocks/s, above metrics.rules.waf_block_min_rate
# (1/s), so the baseline is what keeps EnvoyWafBlockingAboveBaseline quiet, not the minimum rate.
BACKGROUND_ATTACK_EVERY = 0.4
# The baseline the rule reads is the previous day (offset 10m); the test replays its own real scrapes of
# the WAF this far back (a label of their own marks them), see replay_baseline.
REPLAY_BACK_MS = 20 * 60 * 1000


def alerting_config() -> dict[str, Any]:
    """examples/waf with the scrapes and alerts on, every `for:` and threshold the block's default, and a
    memory limit the testbed's Envoy can reach."""
    return dict(
        merge_config(
            copy.deepcopy(configs.EXAMPLES["waf"]),
            {
                "metrics": {"vmpodscrape": {"enabled": True}, "rules": {"enabled": True}},
                "data_plane": {"resources": {"requests": {"memory": MEMORY_LIMIT}, "limits": {"memory": MEMORY_LIMIT}}},
            },
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
    """Requests through the edge from `threads` threads, each pausing `every` seconds between requests, to
    whatever path `path` says now."""

    def __init__(self, edge: Deployed, path: str = "/healthy", every: float = 0.05, threads: int = 1) -> None:
        self.port, self.host = edge.port("http"), edge.host("http")
        self.path, self.every = path, every
        self.statuses: list[int] = []
        self.stopped = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]
        for thread in self.threads:
            thread.start()

    def _run(self) -> None:
        while not self.stopped.is_set():
            try:
                self.statuses.append(http_request(self.port, self.host, self.path, timeout=15)[0])
            except OSError:
                self.statuses.append(0)
            self.stopped.wait(self.every)

    def stop(self) -> None:
        self.stopped.set()
        for thread in self.threads:
            thread.join(timeout=20)


class StalledUploads:
    """`count` POSTs, each sending all but the last byte of its body and then waiting (held open until
    close): Envoy buffers each body for the WAF until the end of the stream."""

    def __init__(self, edge: Deployed, count: int, size: int) -> None:
        head = (
            f"POST /upload HTTP/1.1\r\nHost: {edge.host('http')}\r\nContent-Type: application/octet-stream\r\n"
            f"Content-Length: {size}\r\n\r\n"
        ).encode()
        self.sockets: list[socket.socket] = []
        try:
            for _ in range(count):
                conn = socket.create_connection(("127.0.0.1", edge.port("http")), timeout=10)
                self.sockets.append(conn)
                conn.sendall(head + b"a" * (size - 1))
        except BaseException:
            self.close()
            raise

    def answered(self) -> list[str]:
        """What Envoy answered to those it answered (or closed) already, each its status line's code, or
        "closed": a held body is one it did not answer."""
        done = []
        for conn in self.sockets:
            conn.setblocking(False)
            try:
                head = conn.recv(12, socket.MSG_PEEK)  # "HTTP/1.1 504"
                done.append(head[9:12].decode("ascii", "replace") if head else "closed")
            except BlockingIOError:
                pass
            except OSError:
                done.append("closed")
            finally:
                conn.setblocking(True)
        return done

    def close(self) -> None:
        for conn in self.sockets:
            conn.close()


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


# The control plane the probes' TLS listener asks for its certificate: a gRPC cluster on a port nothing
# listens on, so the secret never arrives (as when the controller never answers a proxy's subscription).
SILENT_SDS = "silent-sds"
# Envoy's default is 15 s (what Envoy Gateway v1.9.1 leaves); 1 s keeps the test short.
SDS_FETCH_TIMEOUT = "1s"


def _tls_listener(name: str, port: int) -> dict[str, Any]:
    """A TLS listener whose certificate comes over SDS from SILENT_SDS."""
    listener = _listener(name, port)
    listener["filter_chains"][0]["transport_socket"] = {
        "name": "envoy.transport_sockets.tls",
        "typed_config": {
            "@type": "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext",
            "common_tls_context": {
                "tls_certificate_sds_secret_configs": [
                    {
                        "name": "tenant/shop-example-com",
                        "sds_config": {
                            "resource_api_version": "V3",
                            "initial_fetch_timeout": SDS_FETCH_TIMEOUT,
                            "api_config_source": {
                                "api_type": "GRPC",
                                "transport_api_version": "V3",
                                "grpc_services": [{"envoy_grpc": {"cluster_name": SILENT_SDS}}],
                            },
                        },
                    }
                ]
            },
        },
    }
    return listener


def _tls_handshake(port: int) -> str | None:
    """A TLS client's handshake with 127.0.0.1:port: None when it completes, else what went wrong."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
            context.wrap_socket(raw, server_hostname="shop.example.com"),
        ):
            return None
    except (OSError, ssl.SSLError) as exc:
        return f"{type(exc).__name__}: {exc}"


class XdsEnvoy:
    """A real Envoy subscribed to LDS from a file: Envoy applies (or rejects) each new version of it as it
    would a DiscoveryResponse from the controller. Its SDS control plane (SILENT_SDS) never answers."""

    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.admin_port = free_port()
        self.lds = workdir / "lds.yaml"
        self.update([_listener("probe", free_port())])
        silent = {"socket_address": {"address": "127.0.0.1", "port_value": free_port()}}
        bootstrap = {
            "node": {"id": "xds-probe", "cluster": "xds-probe"},
            "admin": {"address": {"socket_address": {"address": "127.0.0.1", "port_value": self.admin_port}}},
            "dynamic_resources": {
                "lds_config": {"resource_api_version": "V3", "path_config_source": {"path": str(self.lds)}},
                # Envoy Gateway's listeners take their routes and secrets over ADS: here from nobody.
                "ads_config": {
                    "api_type": "GRPC",
                    "transport_api_version": "V3",
                    "grpc_services": [{"envoy_grpc": {"cluster_name": SILENT_SDS}}],
                },
            },
            "static_resources": {
                "clusters": [
                    {
                        "name": SILENT_SDS,
                        "type": "STATIC",
                        "connect_timeout": "0.25s",
                        "typed_extension_protocol_options": {
                            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                                "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                                "explicit_http_config": {"http2_protocol_options": {}},
                            }
                        },
                        "load_assignment": {
                            "cluster_name": SILENT_SDS,
                            "endpoints": [{"lb_endpoints": [{"endpoint": {"address": silent}}]}],
                        },
                    }
                ]
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

    def output(self) -> str:
        self.log.flush()
        return (self.dir / "envoy.log").read_text(encoding="utf-8", errors="replace")

    def lds_stat(self, name: str) -> int:
        return self.stat(f"listener_manager.lds.update_{name}")

    def stat(self, name: str) -> int:
        """One counter from Envoy's admin /stats; -1 while it is not there (yet)."""
        if self.process.poll() is not None:
            raise RuntimeError(f"the LDS-subscribed Envoy exited: {(self.dir / 'envoy.log').read_text()[-2000:]}")
        query = urllib.parse.urlencode({"filter": f"^{re.escape(name)}$"})
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.admin_port}/stats?{query}", timeout=1) as answer:
                stats = answer.read().decode()
        except OSError:
            return -1
        for line in stats.splitlines():
            key, _, value = line.partition(": ")
            if key == name:
                return int(value)
        return -1

    def exposed(self) -> set[str]:
        """The metric names of Envoy's Prometheus exposition, as the scraper reads them."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.admin_port}/stats/prometheus", timeout=5) as answer:
            return metric_names.exposed(answer.read().decode())

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

    def labels(self, name: str, state: str | None = None) -> list[dict[str, str]]:
        """The labels of each active instance of alert `name` (which Gateway, which cluster), in `state`
        (pending or firing) when given."""
        alerts = get_json(f"{self.vmalert_url}/api/v1/alerts")["data"]["alerts"]
        return [a["labels"] for a in alerts if a["name"] == name and state in (None, a["state"])]

    def export(self, selector: str, start: float, end: float) -> list[dict[str, Any]]:
        """The raw samples VictoriaMetrics stored for `selector` between two unix times (its export API)."""
        query = urllib.parse.urlencode({"match[]": selector, "start": f"{start:.3f}", "end": f"{end:.3f}"})
        with urllib.request.urlopen(f"{self.vm_url}/api/v1/export?{query}", timeout=10) as response:
            return [json.loads(line) for line in response.read().decode().splitlines() if line.strip()]

    def import_series(self, series: list[dict[str, Any]]) -> None:
        body = "\n".join(json.dumps(s) for s in series).encode()
        request = urllib.request.Request(f"{self.vm_url}/api/v1/import", data=body, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.status == 204, f"VictoriaMetrics refused the import: {response.status}"

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
def monitoring(edge: Deployed, workdir: Path, rule_file: Path, probes: list[XdsEnvoy]) -> Iterator[Monitoring]:
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
    # The LDS-subscribed Envoys: a fleet of their own (the owner label the VMPodScrape copies from its pods).
    proxies["static_configs"].append(
        {"targets": [f"127.0.0.1:{p.admin_port}" for p in probes], "labels": {FLEET_LABEL: PROBE_FLEET}}
    )
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


def shortened(duration: str) -> str:
    """FOR in place of a rendered `for:`; one that is zero (fires at once) stays zero."""
    return duration if seconds(duration) == 0 else FOR


def rule_file(inputs: list[dict[str, Any]], directory: Path) -> tuple[Path, dict[str, str]]:
    """The rendered VMRule's groups as vmalert reads them, with only every `for:` shortened (shortened());
    also the rendered `for:` of each alert. Anything else differing from the rendered VMRule fails here."""
    (vm_rule,) = [o for o in inputs if o["kind"] == "VMRule"]
    groups = copy.deepcopy(vm_rule["spec"]["groups"])
    windows: dict[str, str] = {}
    for group in groups:
        for rule in group["rules"]:
            windows[rule["alert"]] = rule["for"]
            rule["for"] = shortened(rule["for"])
    path = directory / "rules.yml"
    path.write_text(yaml.safe_dump({"groups": groups}), encoding="utf-8")
    read_back = yaml.safe_load(path.read_text(encoding="utf-8"))["groups"]
    for group in read_back:
        for rule in group["rules"]:
            rule["for"] = windows[rule["alert"]]
    assert read_back == vm_rule["spec"]["groups"], (
        "the rule file vmalert reads differs from the VMRule in more than for:"
    )
    return path, windows


def documented_windows() -> dict[str, tuple[str, str]]:
    """Alert -> (severity, for:) as docs/alerts.md states them: `**Name** (severity, window)`, where no
    window means metrics.rules.for (its default as the page states it) and "fires at once" means 0m."""
    text = (ROOT / "docs/alerts.md").read_text(encoding="utf-8")
    default = re.search(r"`for:` is `metrics\.rules\.for` \((\w+)\)", text)
    assert default, "docs/alerts.md no longer states metrics.rules.for's default"
    stated = {"": default.group(1), "fires at once": "0m"}
    return {
        name: (severity, stated.get(window, window))
        for name, severity, window in re.findall(r"^\*\*(Envoy\w+)\*\* \((\w+)(?:, ([^)]+))?\):", text, re.M)
    }


def test_rendered_for_windows_are_the_documented_ones() -> None:
    """The test's rule file shortens every `for:` (rule_file); what the block renders, every alert's severity
    and `for:` with the default config, must be what the runbook says, so the shortening hides no drift."""
    _, windows = rule_file(objects(alerting_config()), Path(tempfile.mkdtemp(prefix="rules-")))
    (vm_rule,) = [o for o in objects(alerting_config()) if o["kind"] == "VMRule"]
    severities = {r["alert"]: r["labels"]["severity"] for g in vm_rule["spec"]["groups"] for r in g["rules"]}
    rendered = {name: (severities[name], window) for name, window in windows.items()}
    assert rendered == documented_windows()


def dry_run(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(VMALERT), "-dryRun", f"-rule={path}"], capture_output=True, text=True, timeout=60, check=False
    )


def wait_firing(
    mon: Monitoring, names: set[str], fault: str, since: float, fleet: str | None = None
) -> dict[str, float]:
    """Wait until every alert in `names` fires (for the proxy fleet `fleet` when given: an instance with its
    owner label); print and return when each was first seen firing."""
    seen: dict[str, float] = {}

    def firing(name: str) -> bool:
        if fleet is None:
            return mon.alerts().get(name) == "firing"
        return any(labels.get(FLEET_LABEL, "") == fleet for labels in mon.labels(name, "firing"))

    def all_firing() -> bool:
        for name in names - set(seen):
            if firing(name):
                seen[name] = time.monotonic() - since
                show(f"ALERT {name} firing {seen[name]:.1f} s after {fault}")
        return set(seen) == names

    wait_for(
        f"{sorted(names)} firing after {fault}",
        all_firing,
        timeout=FIRE_WITHIN,
        why=lambda: f"(fired: {sorted(seen)}; active now: {mon.alerts()})",
    )
    return seen


def replay_baseline(mon: Monitoring, block: str, since: float) -> int:
    """EnvoyWafBlockingAboveBaseline compares with the WAF's block rate of the previous day, ending 10 min
    ago; a test cannot wait that long. So VictoriaMetrics' own real scrapes of the WAF's block counter since
    `since` (the background attacks through the real Envoy and WAF) are written again REPLAY_BACK_MS
    earlier, as a series of their own (label replayed="baseline"): the real values at their real spacing,
    so the real rate, in the window the rule reads. Returns how many samples."""
    series = mon.export(f'waf_decisions_total{{job="{block}-waf",action="block"}}', since, time.time())
    for one in series:
        one["metric"]["replayed"] = "baseline"
        one["timestamps"] = [t - REPLAY_BACK_MS for t in one["timestamps"]]
    mon.import_series(series)
    return sum(len(one["values"]) for one in series)


def test_alerts_fire_on_their_faults_and_only_then(tmp_path: Path) -> None:
    with deployed(alerting_config(), tmp_path) as edge:
        rules, windows = rule_file(edge.scenario.inputs, tmp_path)
        checked = dry_run(rules)
        assert checked.returncode == 0, f"vmalert -dryRun refused the rendered rules: {checked.stdout[-3000:]}"
        broken = tmp_path / "broken.yml"
        broken.write_text(rules.read_text(encoding="utf-8").replace("expr: ", "expr: sum(", 1), encoding="utf-8")
        assert dry_run(broken).returncode != 0, "vmalert -dryRun accepted a rule file with a broken expression"
        names = set(windows)
        assert names >= STANDING, f"the testbed's standing faults have no alert among {sorted(names)}"

        probes: list[XdsEnvoy] = []
        try:
            for _ in range(fleet_size(edge.scenario.config.get("data_plane"))):
                probes.append(XdsEnvoy(Path(tempfile.mkdtemp(prefix="xds-", dir=tmp_path))))
            with monitoring(edge, Path(tempfile.mkdtemp(prefix="alerts-", dir=tmp_path)), rules, probes) as mon:
                traffic = Traffic(edge)
                attacks = Traffic(edge, XSS, every=BACKGROUND_ATTACK_EVERY)
                try:
                    _phases(edge, mon, traffic, attacks, names, probes)
                finally:
                    attacks.stop()
                    traffic.stop()
        finally:
            for probe in probes:
                probe.stop()


def _phases(
    edge: Deployed, mon: Monitoring, traffic: Traffic, attacks: Traffic, names: set[str], probes: list[XdsEnvoy]
) -> None:
    block = edge.scenario.config.block_name
    rules = edge.scenario.config.get("metrics.rules")
    blocks = f'waf_decisions_total{{job="{block}-waf",action="block"}}'
    start, started = time.monotonic(), time.time()
    # Healthy: wait until VictoriaMetrics has a rate of the proxies' upstream requests (two scrapes with
    # traffic between them), the WAF is up and has blocked the background attacks a few scrapes long.
    wait_for(
        "the proxies' and the WAF's series in VictoriaMetrics",
        lambda: (
            bool(mon.query(f'sum(rate(envoy_cluster_upstream_rq_total{{job="{block}-proxies"}}[5m])) > 0'))
            and bool(mon.query(f'up{{job="{block}-waf"}} == 1'))
            and sum(len(s["values"]) for s in mon.export(blocks, started, time.time())) >= 8
        ),
        timeout=FIRE_WITHIN,
    )
    wait_firing(mon, STANDING, "start (standing faults)", start)
    replayed = replay_baseline(mon, block, started)
    baseline = f"sum(rate({blocks}[1d] offset 10m))"
    wait_for("the replayed baseline in VictoriaMetrics", lambda: bool(mon.query(baseline)))
    time.sleep(3)  # vmalert evaluates a few rounds on healthy traffic, with the baseline in place (pending counts)
    assert set(traffic.statuses) == {200}, f"healthy traffic got {sorted(set(traffic.statuses))}"
    # Blocked (403), never passed; on a loaded machine the WAF may exceed its message timeout (fail closed: 500).
    assert 403 in attacks.statuses, f"background attacks: {set(attacks.statuses)}"
    assert 200 not in attacks.statuses, f"background attacks: {set(attacks.statuses)}"
    errors = {r["name"]: r["lastError"] for r in mon.rules() if r.get("lastError")}
    assert not errors, f"vmalert could not evaluate: {errors}"
    evaluated = {r["name"] for r in mon.rules()}
    assert evaluated == names, f"vmalert evaluates {sorted(evaluated)}, the VMRule has {sorted(names)}"
    quiet = set(mon.alerts()) - STANDING
    assert not quiet, f"healthy traffic fired {quiet}"
    fleets = {labels.get(FLEET_LABEL, "") for labels in mon.labels("EnvoyProxyFleetBelowSize")}
    assert fleets == {""}, f"EnvoyProxyFleetBelowSize names {fleets}: the probe fleet runs its full size"
    # Quiet because of the baseline: the WAF blocks above the minimum rate, at its usual rate.
    (now,) = mon.query(f"sum(rate({blocks}[10m]))")
    (usual,) = mon.query(baseline)
    show(
        f"BASELINE {replayed} real scrapes replayed {REPLAY_BACK_MS // 60000} min back: the WAF blocks "
        f"{float(now['value'][1]):.2f}/s, usually {float(usual['value'][1]):.2f}/s: quiet"
    )
    assert float(now["value"][1]) > rules["waf_block_min_rate"], "the background attacks block too few to judge"

    # An attack burst: blocks far above the baseline (~100/s; more only adds requests to every ratio the
    # later phases must move).
    burst = Traffic(edge, XSS, every=0.005)
    fault = time.monotonic()
    try:
        wait_firing(mon, {"EnvoyWafBlockingAboveBaseline"}, "an attack burst", fault)
    finally:
        burst.stop()
    show(
        f"EnvoyWafBlockingAboveBaseline: the burst sent {len(burst.statuses)} attacks "
        f"in {time.monotonic() - fault:.0f} s"
    )
    assert 403 in burst.statuses, f"the burst got {sorted(set(burst.statuses))}"
    assert 200 not in burst.statuses, f"the burst got {sorted(set(burst.statuses))}"

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
    show(f"EnvoyUpstream5xxRatioHigh names {sorted(clusters)}")
    assert clusters, "EnvoyUpstream5xxRatioHigh names no cluster"
    assert all(c.startswith("httproute/") for c in clusters), f"not the tenant's route: {clusters}"
    traffic.path = "/healthy"
    assert "EnvoyP99LatencyHigh" not in mon.alerts()
    assert "EnvoyXdsConfigRejected" not in mon.alerts(), "EnvoyXdsConfigRejected fired before any rejection"

    # A slow backend: requests answered after 1.5 s (p99_latency is 1s), beside the healthy traffic.
    slow = Traffic(edge, "/slow/1.5", every=0, threads=32)
    fault = time.monotonic()
    try:
        wait_firing(mon, {"EnvoyP99LatencyHigh"}, "the backend answering after 1.5 s", fault)
    finally:
        slow.stop()
    assert set(slow.statuses) == {200}, f"the slow requests got {sorted(set(slow.statuses))}"

    # A certificate that never arrives: a TLS listener added to one probe asks SILENT_SDS for its secret;
    # after the initial fetch timeout Envoy puts the listener to work without it (the pod would stay Ready)
    # and refuses the handshake of a client (envoyproxy/gateway#9918's signature).
    first, second = probes
    assert "EnvoyTlsCertificateMissing" not in mon.alerts(), "EnvoyTlsCertificateMissing fired before the fault"
    tls_port = free_port()
    second.update([_listener("probe", free_port()), _tls_listener("tls", tls_port)])
    fault = time.monotonic()
    wait_for(
        "the probe's SDS fetch timing out",
        lambda: second.stat("sds.tenant/shop-example-com.init_fetch_timeout") == 1,
    )
    handshake = _tls_handshake(tls_port)
    assert handshake is not None, "a TLS handshake succeeded without the certificate"
    refused = f"listener.127.0.0.1_{tls_port}.server_ssl_socket_factory.downstream_context_secrets_not_ready"
    assert second.stat(refused) >= 1, "Envoy did not count the handshake it refused"
    # The names the observability tests leave out (their Envoys have no SDS-fed TLS listener) are here.
    unexposed = metric_names.ENVOY_SDS_ONLY - second.exposed()
    assert not unexposed, f"the probe's exposition lacks {sorted(unexposed)}"
    wait_firing(
        mon, {"EnvoyTlsCertificateMissing"}, f"a certificate that never arrives ({handshake})", fault, PROBE_FLEET
    )
    fleets = {labels.get(FLEET_LABEL, "") for labels in mon.labels("EnvoyTlsCertificateMissing")}
    assert fleets == {PROBE_FLEET}, f"EnvoyTlsCertificateMissing names {fleets}, not the probe's fleet"

    # A rejected xDS update on one probe: the listener Envoy Gateway v1.9.1 itself builds for a catch-all
    # HTTPS listener beside a TLS listener without routes (envoyproxy/gateway#9341, tests/translator/faults.py),
    # which Envoy refuses; and the other probe stopped: its fleet runs one proxy of two.
    rejected = {
        **empty_match_listener(),
        "address": {"socketAddress": {"address": "127.0.0.1", "portValue": free_port()}},
    }
    first.update([_listener("probe", free_port()), rejected])
    second.stop()
    fault = time.monotonic()
    wait_for("the LDS-subscribed Envoy rejecting the update", lambda: first.lds_stat("rejected") == 1)
    assert "has the same matching rules defined as" in first.output(), "rejected for another reason"
    wait_firing(
        mon,
        {"EnvoyXdsConfigRejected", "EnvoyProxyFleetBelowSize"},
        "the rejected LDS update and a probe stopped",
        fault,
        PROBE_FLEET,
    )
    fleets = {labels.get(FLEET_LABEL, "") for labels in mon.labels("EnvoyXdsConfigRejected")}
    assert fleets == {PROBE_FLEET}, f"EnvoyXdsConfigRejected names {fleets}, not the rejecting Envoy's fleet"

    # Memory: bodies held in the WAF's buffer.
    heap = f'max(envoy_server_memory_heap_size{{job="{block}-proxies",{FLEET_LABEL}=""}})'
    (rest,) = mon.query(heap)
    limit = quantity_bytes(MEMORY_LIMIT)
    assert float(rest["value"][1]) < rules["memory_ratio"] * limit, "the Envoy at rest is already near MEMORY_LIMIT"
    uploads = StalledUploads(edge, STALLED_UPLOADS, STALLED_BODY)
    fault = time.monotonic()
    try:
        wait_firing(mon, {"EnvoyProxyMemoryNearLimit"}, f"{STALLED_UPLOADS} stalled uploads", fault)
        (loaded,) = mon.query(heap)
        answers = uploads.answered()
    finally:
        uploads.close()
    held = STALLED_UPLOADS - len(answers)
    show(
        f"EnvoyProxyMemoryNearLimit: heap {float(rest['value'][1]) / 2**20:.1f} MiB at rest, "
        f"{float(loaded['value'][1]) / 2**20:.1f} MiB with {held} bodies held; limit {MEMORY_LIMIT}"
        + (f"; answered before their end: {sorted(answers)}" if answers else "")
    )
    # A stalled body is held for the WAF, never passed on. On a loaded machine (a fresh clone's make test at a
    # load average of 35, 2026-12-07) Envoy answered 2 of the 200 before their end; what it answered was not
    # recorded then. A 5xx is failing closed (the WAF's message timeout or error) and may happen to a few on
    # such a machine; a 2xx or 4xx would be a body judged, or refused, without its end, and fails the test.
    assert set(answers) <= {"500", "504"}, f"stalled uploads answered {sorted(answers)}: not held, not failed closed"
    assert held >= 0.9 * STALLED_UPLOADS, f"Envoy answered {len(answers)} stalled uploads: {sorted(answers)}"

    # Every proxy gone.
    assert "EnvoyProxiesDown" not in mon.alerts()
    edge.envoy.stop()
    first.stop()
    fault = time.monotonic()
    wait_firing(mon, {"EnvoyProxiesDown"}, "every proxy stopped", fault)


ENVOY_GATEWAY = ROOT / ".tools/bin/envoy-gateway"
# The controller's metrics listener (egv1a1.GatewayMetricsPort, on 0.0.0.0: fixed), where the block's
# VMServiceScrape reads it. The testbed's Envoy binds the same port, so the controller runs in a test of its own.
CONTROLLER_METRICS_PORT = 19001
# The Envoy the controller's host infrastructure runs (func-e finds it where it would have downloaded it).
HOST_ENVOY_VERSION = "1.39.1"


def _gateway_objects(name: str, proxy_spec: dict[str, Any], port: int) -> list[dict[str, Any]]:
    """A GatewayClass with its EnvoyProxy (the host provider) and one Gateway on it."""
    proxy: dict[str, Any] = {"type": "Host", "host": {"envoyVersion": HOST_ENVOY_VERSION}}
    return [
        {
            "apiVersion": "gateway.envoyproxy.io/v1alpha1",
            "kind": "EnvoyProxy",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"provider": proxy, **proxy_spec},
        },
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "GatewayClass",
            "metadata": {"name": name},
            "spec": {
                "controllerName": "gateway.envoyproxy.io/gatewayclass-controller",
                "parametersRef": {
                    "group": "gateway.envoyproxy.io",
                    "kind": "EnvoyProxy",
                    "name": name,
                    "namespace": "default",
                },
            },
        },
        {
            "apiVersion": "gateway.networking.k8s.io/v1",
            "kind": "Gateway",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"gatewayClassName": name, "listeners": [{"name": "http", "protocol": "HTTP", "port": port}]},
        },
    ]


# The reconcile failure: a bootstrap patch that pins the stats listener's port. Envoy Gateway validates
# bootstrap patches against its Kubernetes bootstrap, which has that listener, and accepts this one; its
# host infrastructure renders the bootstrap without it (Prometheus off), so the patch cannot apply when the
# controller creates the proxy ("failed to create new infra"): the failure the alert counts. (A `replace`:
# an `add` would create the missing path, Envoy Gateway's patches run with EnsurePathExistsOnAdd.)
UNAPPLICABLE_BOOTSTRAP = {
    "bootstrap": {
        "type": "JSONPatch",
        "jsonPatches": [
            {"op": "replace", "path": "/static_resources/listeners/0/address/socket_address/port_value", "value": 19001}
        ],
    }
}


class StandaloneController:
    """The real controller (Envoy Gateway v1.9.1, `make tools`) in its standalone mode: the file provider
    reads the Gateway API objects from a directory, the host infrastructure runs each Gateway's Envoy as its
    child (func-e, on the testbed's Envoy binary)."""

    def __init__(self, workdir: Path, initial: list[dict[str, Any]]) -> None:
        self.dir = workdir
        self.resources = workdir / "resources"
        self.resources.mkdir(parents=True)
        self.write("initial", initial)  # read at start: no wait for the directory watch
        homes = {key: str(workdir / key) for key in ("configHome", "dataHome", "stateHome", "runtimeDir")}
        installed = workdir / "dataHome/envoy-versions" / HOST_ENVOY_VERSION / "bin"
        installed.mkdir(parents=True)
        (installed / "envoy").symlink_to(ENVOY)
        settings = {
            "apiVersion": "gateway.envoyproxy.io/v1alpha1",
            "kind": "EnvoyGateway",
            "gateway": {"controllerName": "gateway.envoyproxy.io/gatewayclass-controller"},
            "provider": {
                "type": "Custom",
                "custom": {
                    "resource": {"type": "File", "file": {"paths": [str(self.resources)]}},
                    "infrastructure": {"type": "Host", "host": homes},
                },
            },
            "logging": {"level": {"default": "info"}},
        }
        (workdir / "envoy-gateway.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")
        subprocess.run(
            [str(ENVOY_GATEWAY), "certgen", "--local", "--config-home", homes["configHome"]],
            check=True,
            capture_output=True,
            timeout=60,
        )
        self.log = (workdir / "envoy-gateway.log").open("wb")
        command = [str(ENVOY_GATEWAY), "server", "--config-path", str(workdir / "envoy-gateway.yaml")]
        self.process = subprocess.Popen(dies_with_us(command), stdout=self.log, stderr=subprocess.STDOUT, env=WAF_ENV)
        wait_for("the controller's /metrics", self._serving, why=lambda: f": {self.output()[-3000:]}")

    def _serving(self) -> bool:
        if self.process.poll() is not None:
            raise RuntimeError(f"the controller exited with {self.process.returncode}: {self.output()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{CONTROLLER_METRICS_PORT}/metrics", timeout=1) as answer:
                return bool(answer.status == 200)
        except OSError:
            return False

    def write(self, name: str, objects: list[dict[str, Any]]) -> None:
        """A file of objects for the file provider, moved into place whole (it watches the directory)."""
        staged = self.dir / f"{name}.staged"
        staged.write_text(yaml.safe_dump_all(objects), encoding="utf-8")
        staged.rename(self.resources / f"{name}.yaml")

    def output(self) -> str:
        self.log.flush()
        return (self.dir / "envoy-gateway.log").read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # it stops the Envoys it runs before it exits
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self.log.close()


def test_controller_alerts_fire_on_a_real_controller(tmp_path: Path) -> None:
    """EnvoyGatewayControllerDown and EnvoyGatewayReconcileFailing on the real controller's /metrics: quiet
    while it runs and reconciles a Gateway, EnvoyGatewayReconcileFailing once it fails to create a Gateway's
    proxy, EnvoyGatewayControllerDown once it is stopped. Only the controller is scraped here, so the proxy
    and WAF availability alerts fire throughout (their target is absent) and are not judged."""
    config = alerting_config()
    block = load(config).block_name
    rules, _ = rule_file(objects(config), tmp_path)
    controller = StandaloneController(tmp_path / "controller", _gateway_objects("healthy", {}, 8080))
    try:
        job = f'job="{block}-controller"'
        scrape = {
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [
                {
                    "job_name": f"{block}-controller",
                    "static_configs": [{"targets": [f"127.0.0.1:{CONTROLLER_METRICS_PORT}"]}],
                }
            ],
        }
        mon = Monitoring(Path(tempfile.mkdtemp(prefix="alerts-", dir=tmp_path)), scrape, rules)
        try:
            start = time.monotonic()
            infra = f'watchable_subscribe_total{{{job},runner="infrastructure",status="success"}}'
            wait_for(
                "the controller's reconcile of the healthy Gateway in VictoriaMetrics",
                lambda: bool(mon.query(infra)),
                timeout=FIRE_WITHIN,
                why=lambda: f": {controller.output()[-3000:]}",
            )
            time.sleep(3)  # vmalert evaluates a few rounds on the running, reconciling controller
            errors = {r["name"]: r["lastError"] for r in mon.rules() if r.get("lastError")}
            assert not errors, f"vmalert could not evaluate: {errors}"
            active = set(mon.alerts()) & {"EnvoyGatewayControllerDown", "EnvoyGatewayReconcileFailing"}
            assert not active, f"the running controller fired {active}"
            assert "failed to create new infra" not in controller.output()
            show(f"CONTROLLER reconciled the healthy Gateway, quiet {time.monotonic() - start:.1f} s after start")

            controller.write("tuned", _gateway_objects("tuned", UNAPPLICABLE_BOOTSTRAP, 8081))
            fault = time.monotonic()
            wait_firing(
                mon, {"EnvoyGatewayReconcileFailing"}, "a Gateway whose proxy the controller fails to create", fault
            )
            assert "failed to create new infra" in controller.output(), "the alert fired, but not on that failure"

            controller.stop()
            fault = time.monotonic()
            wait_firing(mon, {"EnvoyGatewayControllerDown"}, "the controller stopped", fault)
        finally:
            mon.stop()
    finally:
        controller.stop()
