"""`make bench-waf`: one run on this machine, side by side, loopback only, bounded duration.

Envoy -> backend vs Envoy + the WAF (the Go service, one process) -> backend, for a GET and for a 16 KiB
JSON POST: requests/s and added p50 at 1 and 16 connections (wrk), the WAF's CPU per request next to the
engine alone on the same request (a Go benchmark through Coraza in-process, `go test -bench`, CPU time),
and the WAF's RSS. The backend is a second Envoy answering with a direct response, so it is not the
bottleneck. Prints a table and whether each target of issue 18 is met; it reports, it does not gate.
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

from . import reaper
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


def json_body() -> bytes:
    """The 16 KiB JSON POST: an API document of 18 records with a prose field each (about 100 arguments);
    the same bytes go to the engine-alone benchmark ($WAF_BENCH_JSON)."""
    text = ("Widgets ship in two sizes and three colours; returns are free within thirty days. " * 10)[:820]
    items = ", ".join(
        f'{{"id": {1000 + i}, "name": "widget {i}", "tags": ["blue", "small"], "note": "{text}"}}' for i in range(18)
    )
    return f'{{"customer": "alice@example.com", "items": [{items}]}}'.encode()


def wrk(port: int, connections: int, script: Path | None = None) -> dict[str, float]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{DURATION}", "--latency", "-H", f"Host: {HOST}"]
    if script is not None:
        command += ["-s", str(script)]
    # A host name, as real clients send: a numeric Host scores (CRS 920350) and every request would be logged.
    out = subprocess.run([*command, f"{URL}{port}{PATH}"], capture_output=True, text=True, check=True).stdout
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


GO_BENCH = ["go", "test", "-tags", "re2_cgo", "-run", "^$"]
# The engine alone on the bench's two requests, and the service's own handler on the GET over an
# in-process gRPC connection (no TCP, no Envoy): what the service adds to the engine.
GO_BENCHMARKS = "^Benchmark(EngineGET|EngineJSON16K|ServerGET)$"


def engine_cpu_ms(json_file: Path) -> dict[str, float]:
    """CPU ms per request of the engine alone (Coraza in-process, the same rules and requests), from the Go
    benchmarks in waf/internal/server, built like the service (RE2 through cgo)."""
    out = subprocess.run(
        [*GO_BENCH, "-bench", GO_BENCHMARKS, "-benchtime", "200x", "./internal/server"],
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ, "WAF_BENCH_JSON": str(json_file)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = dict(re.findall(r"Benchmark(\w+?)(?:-\d+)?\s+\d+\s+\d+ ns/op\s+([\d.]+) cpu-ms/op", out))
    return {
        "GET": float(found["EngineGET"]),
        "JSON": float(found["EngineJSON16K"]),
        "server": float(found["ServerGET"]),
    }


@dataclass
class Run:
    """One kind of request through Envoy + the WAF: wrk by connections, and what it cost the WAF."""

    wrk: dict[int, dict[str, float]]
    waf_cpu_ms: float
    rss: float


def run_waf(envoy: EnvoyProcess, waf: WAFProcess, script: Path | None) -> Run:
    wrk(envoy.port, 16, script)  # warm-up: every connection to the WAF opened
    before = cpu_seconds(waf.process.pid)
    results = {conns: wrk(envoy.port, conns, script) for conns in (1, 16)}
    served = sum(int(r["requests"]) for r in results.values())
    return Run(results, (cpu_seconds(waf.process.pid) - before) / served * 1000, rss_mib(waf.process.pid))


def main() -> int:
    crs = os.environ.get("CRS_DIR", str(Path(__file__).resolve().parents[3].parent / "shared" / "crs" / "v4.28.0"))
    if not shutil.which("wrk"):
        print("wrk not found: apt-get install wrk (Debian)", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="bench-waf-"))
    body = json_body()
    (work / "body.json").write_bytes(body)
    script = work / "post.lua"
    script.write_text(
        'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
        f'local f = io.open("{work / "body.json"}", "rb")\nwrk.body = f:read("*a")\nf:close()\n',
        encoding="utf-8",
    )
    load_before = os.getloadavg()
    backend = DirectResponseBackend()
    runs: dict[str, dict[str, Any]] = {}
    try:
        direct_envoy = EnvoyProcess(backend.port, None)
        try:
            for kind, lua in (("GET", None), ("JSON", script)):
                wrk(direct_envoy.port, 16, lua)
                runs.setdefault(kind, {})["direct"] = {c: wrk(direct_envoy.port, c, lua) for c in (1, 16)}
        finally:
            direct_envoy.stop()
        waf = WAFProcess(crs, workers=0)  # GOMAXPROCS: the runtime's default, as in the pod
        envoy = EnvoyProcess(backend.port, waf.port, message_timeout="5s")
        try:
            for kind, lua in (("GET", None), ("JSON", script)):
                runs[kind]["waf"] = run_waf(envoy, waf, lua)
        finally:
            envoy.stop()
            waf.stop()
    finally:
        backend.stop()
    engine = engine_cpu_ms(work / "body.json")
    shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    print(
        f"\nWAF benchmark (loopback, {os.cpu_count()} CPUs, wrk -t1 -d{DURATION}, CRS PL1; GET {PATH} and a "
        f"{len(body)} byte JSON POST; 1-minute load average {load_before[0]:.2f} before, {load_after[0]:.2f} after)\n"
    )
    print(f"{'':34}{'GET':>14}{'JSON 16 KiB':>14}")

    def row(label: str, values: list[str]) -> None:
        print(f"{label:34}" + "".join(f"{v:>14}" for v in values))

    for conns in (1, 16):
        row(f"Envoy direct req/s, {conns} conn", [f"{runs[k]['direct'][conns]['rps']:.0f}" for k in ("GET", "JSON")])
        row(f"Envoy + WAF req/s, {conns} conn", [f"{runs[k]['waf'].wrk[conns]['rps']:.0f}" for k in ("GET", "JSON")])
        row(
            f"added p50 ms, {conns} conn",
            [f"{runs[k]['waf'].wrk[conns]['p50'] - runs[k]['direct'][conns]['p50']:.2f}" for k in ("GET", "JSON")],
        )
    row("WAF CPU ms per request", [f"{runs[k]['waf'].waf_cpu_ms:.3f}" for k in ("GET", "JSON")])
    row("engine alone, CPU ms", [f"{engine[k]:.3f}" for k in ("GET", "JSON")])
    row("service in-process (gRPC, no TCP)", [f"{engine['server']:.3f}", ""])
    row("  WAF / engine", [f"{runs[k]['waf'].waf_cpu_ms / engine[k]:.2f}x" for k in ("GET", "JSON")])
    row("WAF RSS MiB after", [f"{runs[k]['waf'].rss:.0f}" for k in ("GET", "JSON")])
    ratio = max(runs[k]["waf"].waf_cpu_ms / engine[k] for k in ("GET", "JSON"))
    get16 = runs["GET"]["waf"].wrk[16]["rps"]
    json_cpu = runs["JSON"]["waf"].waf_cpu_ms
    targets = [
        ("WAF CPU per request <= 1.25 x engine alone", ratio <= 1.25, f"{ratio:.2f}x"),
        ("GET req/s at 16 conn >= 2.5 x 887 (the Python service's)", get16 >= 2.5 * 887, f"{get16:.0f}"),
        ("16 KiB JSON <= 8 ms WAF CPU", json_cpu <= 8, f"{json_cpu:.1f} ms"),
    ]
    print("\nTargets:")
    for name, met, value in targets:
        print(f"  [{'met' if met else 'MISSED'}] {name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
