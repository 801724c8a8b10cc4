"""`make bench-waf`: one run on this machine, side by side, loopback only, bounded duration.

Envoy -> backend vs Envoy + WAF -> backend (requests/s, p50, p99 at 1 and 16 connections, wrk), and the
WAF process's CPU per request vs the engine alone on the same request. The backend is a second Envoy
answering with a direct response, so it is not the bottleneck. Prints a table with ratios and whether
each target is met; it reports, it does not gate.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from . import reaper
from .engine import Engine
from .settings import Settings, directives
from .testbed import HCM_TYPE, ROUTER_TYPE, EnvoyProcess, WAFProcess, free_port

DURATION = os.environ.get("BENCH_DURATION", "5s")
TICKS = os.sysconf("SC_CLK_TCK")


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
        ["wrk", "-t1", f"-c{connections}", f"-d{DURATION}", "--latency", f"http://127.0.0.1:{port}/bench?q=hello"],
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


def engine_cpu_per_request(crs: str, n: int = 3000) -> float:
    engine = Engine(directives(Settings(crs_dir=crs)))
    headers = [
        (b"host", b"127.0.0.1"),
        (b"x-forwarded-proto", b"http"),
        (b"x-request-id", b"0" * 36),
        (b"x-envoy-expected-rq-timeout-ms", b"15000"),
    ]
    for _ in range(200):
        engine.evaluate(method="GET", uri="/bench?q=hello", headers=headers)
    start = time.process_time()
    for _ in range(n):
        engine.evaluate(method="GET", uri="/bench?q=hello", headers=headers)
    return (time.process_time() - start) / n


def main() -> int:
    crs = os.environ.get("CRS_DIR", str(Path(__file__).resolve().parents[3].parent / "shared" / "crs" / "v4.28.0"))
    if not shutil.which("wrk"):
        print("wrk not found: apt-get install wrk (Debian)", file=sys.stderr)
        return 2
    backend = DirectResponseBackend()
    waf = WAFProcess(crs)
    direct = EnvoyProcess(backend.port, None)
    filtered = EnvoyProcess(backend.port, waf.port, body=False)
    results: dict[tuple[str, int], dict[str, float]] = {}
    try:
        for conns in (1, 16):
            wrk(direct.port, conns)  # warm-up
            results[("direct", conns)] = wrk(direct.port, conns)
        wrk(filtered.port, 1)
        cpu0 = cpu_seconds(waf.process.pid)
        served = 0
        for conns in (1, 16):
            results[("waf", conns)] = wrk(filtered.port, conns)
            served += int(results[("waf", conns)]["requests"])
        waf_cpu = (cpu_seconds(waf.process.pid) - cpu0) / served
    finally:
        filtered.stop()
        direct.stop()
        waf.stop()
        backend.stop()
    engine_cpu = engine_cpu_per_request(crs)

    print(f"\nWAF benchmark (loopback, {os.cpu_count()} cores, wrk -t1 -d{DURATION}, CRS PL1, benign GET)\n")
    print(f"{'':28}{'Envoy direct':>14}{'Envoy + WAF':>14}{'ratio':>9}")
    for conns in (1, 16):
        d, w = results[("direct", conns)], results[("waf", conns)]
        print(f"{f'requests/s, {conns} conn':28}{d['rps']:>14.0f}{w['rps']:>14.0f}{w['rps'] / d['rps']:>9.2f}")
        print(f"{f'p50 ms, {conns} conn':28}{d['p50']:>14.2f}{w['p50']:>14.2f}{w['p50'] / d['p50']:>9.2f}")
        print(f"{f'p99 ms, {conns} conn':28}{d['p99']:>14.2f}{w['p99']:>14.2f}{w['p99'] / d['p99']:>9.2f}")
    print(f"\n{'CPU per request':28}{'engine only':>14}{'WAF process':>14}{'ratio':>9}")
    print(f"{'ms':28}{engine_cpu * 1000:>14.3f}{waf_cpu * 1000:>14.3f}{waf_cpu / engine_cpu:>9.2f}")
    added = results[("waf", 1)]["p50"] - results[("direct", 1)]["p50"]
    throughput = results[("waf", 16)]["rps"] / results[("direct", 16)]["rps"]
    targets = [
        ("WAF CPU per request <= 1.25 x engine-only", waf_cpu / engine_cpu <= 1.25, f"{waf_cpu / engine_cpu:.2f}x"),
        ("Envoy+WAF throughput >= 1/4 of direct (16 conn)", throughput >= 0.25, f"{throughput:.2f}"),
        ("added p50 <= 2 ms at 1 connection", added <= 2.0, f"{added:.2f} ms"),
    ]
    print("\nTargets:")
    for name, met, value in targets:
        print(f"  [{'met' if met else 'MISSED'}] {name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
