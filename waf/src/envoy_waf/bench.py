"""`make bench-waf`: one run on this machine, side by side, loopback only, bounded duration.

Envoy -> backend vs Envoy + WAF -> backend with one worker and with N (the CPUs this process may use):
requests/s, added p50 and p99 at 1 and 16 connections (wrk), the WAF's CPU per request (supervisor and
workers summed) vs the engine alone on the same request, RSS per worker, and the engine-bound ceiling of
this machine: CPUs / (engine CPU + Envoy's CPU per request), both measured in this run. The backend is a
second Envoy answering with a direct response, so it is not the bottleneck. wrk and that backend share
the machine too and the ceiling leaves them out, so it is a little above what this machine can reach.
Prints a table and whether each target is met; it reports, it does not gate.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import cpus, reaper
from .engine import Engine
from .settings import Settings, directives
from .testbed import HCM_TYPE, ROUTER_TYPE, EnvoyProcess, WAFProcess, free_port

DURATION = os.environ.get("BENCH_DURATION", "5s")
TICKS = os.sysconf("SC_CLK_TCK")
HOST = "bench.example.com"
URL = "http://127.0.0.1:"
PATH = "/bench?q=hello"


class DirectResponseBackend:
    """A second Envoy that answers 200 itself: a backend that is never the bottleneck."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="bench-backend-"))
        config: dict[str, Any] = {
            "static_resources": {
                "listeners": [
                    {
                        "name": "backend",
                        "address": {"socket_address": {"address": "127.0.0.1", "port_value": self.port}},
                        "filter_chains": [
                            {
                                "filters": [
                                    {
                                        "name": "envoy.filters.network.http_connection_manager",
                                        "typed_config": {
                                            "@type": HCM_TYPE,
                                            "stat_prefix": "backend",
                                            "route_config": {
                                                "virtual_hosts": [
                                                    {
                                                        "name": "all",
                                                        "domains": ["*"],
                                                        "routes": [
                                                            {
                                                                "match": {"prefix": "/"},
                                                                "direct_response": {
                                                                    "status": 200,
                                                                    "body": {"inline_string": "ok\n"},
                                                                },
                                                            }
                                                        ],
                                                    }
                                                ]
                                            },
                                            "http_filters": [
                                                {
                                                    "name": "envoy.filters.http.router",
                                                    "typed_config": {"@type": ROUTER_TYPE},
                                                }
                                            ],
                                        },
                                    }
                                ]
                            }
                        ],
                    }
                ]
            }
        }
        (self.dir / "backend.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        envoy = shutil.which("envoy") or str(Path(sys.executable).parent / "envoy")
        self.process = subprocess.Popen(
            reaper.command(
                [
                    envoy,
                    "-c",
                    str(self.dir / "backend.yaml"),
                    "--disable-hot-restart",
                    "-l",
                    "error",
                    "--concurrency",
                    "1",
                    "--base-id",
                    "7",
                ]
            ),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(1.0)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        shutil.rmtree(self.dir, ignore_errors=True)


def _percentile(out: str, pct: int) -> float:
    """A latency percentile from wrk's "Latency Distribution" block, in milliseconds."""
    match = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.MULTILINE)
    if match is None:
        raise RuntimeError(f"no {pct}% line in wrk output:\n{out}")
    return float(match.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[match.group(2)]


def wrk(port: int, connections: int) -> dict[str, float]:
    out = subprocess.run(
        # A host name, as real clients send: a numeric Host scores (CRS 920350) and every request would be logged.
        ["wrk", "-t1", f"-c{connections}", f"-d{DURATION}", "--latency", "-H", f"Host: {HOST}", f"{URL}{port}{PATH}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    p50, p99 = _percentile(out, 50), _percentile(out, 99)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non2xx:
        raise RuntimeError(f"benchmark traffic was not all 200: {non2xx.group(1)} errors")
    return {"rps": rps, "p50": p50, "p99": p99, "requests": total}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


BENCH_HEADERS = [  # what Envoy sends the WAF for wrk's request
    (b"host", HOST.encode()),
    (b"x-forwarded-proto", b"http"),
    (b"x-request-id", b"0" * 36),
    (b"x-envoy-expected-rq-timeout-ms", b"15000"),
]


def engine_cpu_per_request(crs: str, n: int = 3000) -> float:
    engine = Engine(directives(Settings(crs_dir=crs)))
    for _ in range(200):
        engine.evaluate(method="GET", uri=PATH, headers=BENCH_HEADERS)
    start = time.process_time()
    for _ in range(n):
        engine.evaluate(method="GET", uri=PATH, headers=BENCH_HEADERS)
    engine.close()
    return (time.process_time() - start) / n


@dataclass
class WafRun:
    """Envoy + a WAF of some workers: wrk results by connections, and what the run cost."""

    wrk: dict[int, dict[str, float]]
    waf_cpu: float  # seconds per request, supervisor and workers summed
    envoy_cpu: float  # seconds per request, the Envoy in front of the WAF
    rss: list[float]  # MiB per worker
    supervisor_rss: float


def run_waf(crs: str, backend_port: int, workers: int) -> WafRun:
    """Envoy + a WAF of `workers` workers at 1 and 16 connections; CPU per request over both runs."""
    waf = WAFProcess(crs, workers=workers)
    envoy = EnvoyProcess(backend_port, waf.port, body=False)
    try:
        wrk(envoy.port, 16)  # warm-up: every connection to the WAF opened
        pids = [waf.process.pid, *waf.worker_pids()]
        waf0, envoy0 = sum(cpu_seconds(p) for p in pids), cpu_seconds(envoy.process.pid)
        results = {conns: wrk(envoy.port, conns) for conns in (1, 16)}
        served = sum(int(r["requests"]) for r in results.values())
        return WafRun(
            wrk=results,
            waf_cpu=(sum(cpu_seconds(p) for p in pids) - waf0) / served,
            envoy_cpu=(cpu_seconds(envoy.process.pid) - envoy0) / served,
            rss=[rss_mib(p) for p in pids[1:]],
            supervisor_rss=rss_mib(pids[0]),
        )
    finally:
        envoy.stop()
        waf.stop()


def main() -> int:
    crs = os.environ.get("CRS_DIR", str(Path(__file__).resolve().parents[3].parent / "shared" / "crs" / "v4.28.0"))
    if not shutil.which("wrk"):
        print("wrk not found: apt-get install wrk (Debian)", file=sys.stderr)
        return 2
    n = cpus.available()
    load_before = os.getloadavg()
    backend = DirectResponseBackend()
    direct_envoy = EnvoyProcess(backend.port, None)
    try:
        direct: dict[int, dict[str, float]] = {}
        for conns in (1, 16):
            wrk(direct_envoy.port, conns)  # warm-up
            direct[conns] = wrk(direct_envoy.port, conns)
    finally:
        direct_envoy.stop()
    try:
        one = run_waf(crs, backend.port, 1)
        many = run_waf(crs, backend.port, n)
    finally:
        backend.stop()
    engine_cpu = engine_cpu_per_request(crs)

    load_after = os.getloadavg()
    print(
        f"\nWAF benchmark (loopback, {n} CPUs, wrk -t1 -d{DURATION}, CRS PL1, benign GET; 1-minute load "
        f"average {load_before[0]:.2f} before, {load_after[0]:.2f} after)\n"
    )
    cols = ("Envoy direct", "WAF 1 worker", f"WAF {n} workers")
    print(f"{'':34}" + "".join(f"{c:>16}" for c in cols))

    def row(label: str, values: list[str]) -> None:
        print(f"{label:34}" + "".join(f"{v:>16}" for v in values))

    for conns in (1, 16):
        row(f"requests/s, {conns} conn", [f"{r[conns]['rps']:.0f}" for r in (direct, one.wrk, many.wrk)])
        for pct in ("p50", "p99"):
            base = direct[conns][pct]
            row(
                f"added {pct} ms, {conns} conn",
                [f"({base:.2f})", *(f"{r.wrk[conns][pct] - base:.2f}" for r in (one, many))],
            )
    row("WAF CPU ms per request", ["", *(f"{r.waf_cpu * 1000:.3f}" for r in (one, many))])
    row("  x engine-only", ["", *(f"{r.waf_cpu / engine_cpu:.2f}" for r in (one, many))])
    row("Envoy CPU ms per request", ["", *(f"{r.envoy_cpu * 1000:.3f}" for r in (one, many))])
    row("RSS MiB per worker", ["", *(" ".join(f"{x:.0f}" for x in r.rss) for r in (one, many))])
    row("RSS MiB supervisor", ["", *(f"{r.supervisor_rss:.0f}" for r in (one, many))])
    ceiling = n / (engine_cpu + many.envoy_cpu)
    share = many.wrk[16]["rps"] / ceiling
    print(f"\nengine only: {engine_cpu * 1000:.3f} ms CPU per request (same request, in-process, no gRPC)")
    print(
        f"engine-bound ceiling: {n} CPUs / ({engine_cpu * 1000:.3f} + {many.envoy_cpu * 1000:.3f} ms Envoy) "
        f"= {ceiling:.0f} requests/s; reached with {n} workers at 16 conn: {many.wrk[16]['rps']:.0f} ({share:.0%})"
    )
    ratio = many.waf_cpu / engine_cpu
    added = many.wrk[1]["p50"] - direct[1]["p50"]
    targets = [
        ("WAF CPU per request <= 1.5 x engine-only", ratio <= 1.5, f"{ratio:.2f}x"),
        ("throughput >= 70% of the engine-bound ceiling", share >= 0.7, f"{share:.0%}"),
        ("added p50 <= 1.5 ms at 1 connection", added <= 1.5, f"{added:.2f} ms"),
    ]
    print("\nTargets:")
    for name, met, value in targets:
        print(f"  [{'met' if met else 'MISSED'}] {name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
