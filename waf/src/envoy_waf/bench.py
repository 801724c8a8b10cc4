"""`make bench-waf`: one interleaved run on this machine, loopback only (in a network namespace of its own
when started by make), bounded duration; a report, not a gate.

The shapes are issue 26's (defined once, in waf/internal/server's Go benchmarks, and written out for this
run): an 11-header browser GET, a 16 KiB JSON array of 200 records {id, name, email, active} (800
arguments), the same 800 fields as a form, and one 128 KiB JSON field. For each shape, in one run and
interleaved (A-B-B-A by round), at 16 connections (wrk): Envoy direct (a second Envoy answers 200, never the
bottleneck), Envoy + this WAF with its ext_proc streams multiplexed over HTTP/2 (as the block configures it),
the same with one stream per connection (the transport the block had before 0.14.1), and, with
$BENCH_BASELINE naming another envoy-waf binary, that build on the block's settings, and the tuned profile
(paranoia level 2 with the block's curated exclusions, on the settings the block renders for it: its CPU per
request beside PL1's, issue 39); every WAF with the heap
soft limit of a default pod (GOMEMLIMIT). Reported: req/s, p50 and p99, the WAF's CPU per request, the engine
alone on the same bytes (Go benchmark, CPU time), and ratios between them. The engine's CPU profiles per
shape and the matcher comparison (RE2 for every input, shipped, against Go's regexp below 256 bytes, each
with and without the literal prefilter) are saved beside the report in waf/bench-results/<time>/
(gitignored). $BENCH_SHAPES (e.g. GET,JSON800) runs only those.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import efficacy, reaper
from .testbed import HCM_TYPE, ROUTER_TYPE, EnvoyProcess, WAFProcess, free_port

DURATION = os.environ.get("BENCH_DURATION", "5s")
PROFILE = "profile-pl2"  # the shipped tuned profile, measured beside PL1
# An 800-field body costs the engine a fifth of a second: at 16 connections a shorter run completes few.
BODY_DURATION = os.environ.get("BENCH_BODY_DURATION", "15s")
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "2"))
CONNECTIONS = 16
# The heap's soft limit a default WAF pod gets: 80% of its memory limit, 128Mi + 256Mi per worker, 2
# workers (components/waf.py); the service raises GOGC under it (internal/limits.GC).
POD_GOMEMLIMIT = "512MiB"
TICKS = os.sysconf("SC_CLK_TCK")
HOST = "bench.example.com"
URL = "http://127.0.0.1:"
WAF_DIR = Path(__file__).resolve().parents[2]
ALL_SHAPES = ("GET", "JSON800", "Form800", "Body128K")
# BENCH_SHAPES=GET,JSON800 runs only those (a quicker A-B run); the default is all four.
SHAPES = tuple(s for s in os.environ.get("BENCH_SHAPES", ",".join(ALL_SHAPES)).split(",") if s)
VARIANTS = ("shipped", "go-below-256", "shipped-no-prefilter", "go-below-256-no-prefilter")


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


@dataclass
class Shape:
    """One request of the benchmark, as the Go benchmarks wrote it (NAME.json and NAME.body)."""

    name: str
    method: str
    uri: str
    headers: list[tuple[str, str]]
    content_type: str
    body: Path

    def script(self, work: Path) -> Path:
        """wrk's Lua script sending this request."""
        lines = [f"wrk.method = {json.dumps(self.method)}", f"wrk.path = {json.dumps(self.uri)}"]
        for name, value in self.headers:
            lines.append(f"wrk.headers[{json.dumps(name)}] = {json.dumps(value)}")
        if self.content_type:
            lines.append(f'wrk.headers["Content-Type"] = {json.dumps(self.content_type)}')
            lines.append(f'local f = io.open({json.dumps(str(self.body))}, "rb")\nwrk.body = f:read("*a")\nf:close()')
        path = work / f"{self.name}.lua"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path


def load_shapes(work: Path) -> dict[str, Shape]:
    subprocess.run(
        ["go", "test", "-tags", "re2_cgo", "-run", "^TestWriteShapes$", "-count", "1", "./internal/server"],
        cwd=WAF_DIR,
        env={**os.environ, "WAF_BENCH_SHAPES": str(work)},
        capture_output=True,
        check=True,
    )
    shapes = {}
    for name in SHAPES:
        meta = json.loads((work / f"{name}.json").read_text(encoding="utf-8"))
        shapes[name] = Shape(
            name,
            meta["method"],
            meta["uri"],
            [(h[0], h[1]) for h in meta["headers"]],
            meta["content_type"],
            work / f"{name}.body",
        )
    return shapes


def wrk(port: int, script: Path, duration: str = DURATION, connections: int = CONNECTIONS) -> dict[str, float]:
    command = ["wrk", "-t1", f"-c{connections}", f"-d{duration}", "--latency", "--timeout", "30s"]
    # A host name, as real clients send: a numeric Host scores (CRS 920350) and every request would be logged.
    command += ["-H", f"Host: {HOST}", "-s", str(script), f"{URL}{port}/"]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if non2xx:
        raise RuntimeError(f"benchmark traffic was not all 200: {non2xx.group(1)} errors\n{out}")
    return {"rps": rps, "p50": _percentile(out, 50), "p99": _percentile(out, 99), "requests": total}


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Target:
    """One way of serving the shapes: Envoy, with or without a WAF in front of the backend."""

    name: str
    envoy: EnvoyProcess
    waf: WAFProcess | None
    results: dict[str, list[dict[str, float]]] = field(default_factory=dict)

    def measure(self, shape: Shape, script: Path) -> None:
        """req/s, p50 and p99 at 16 connections; then the WAF's CPU per request from a run at one connection
        (at 16, the requests still in flight when wrk stops, up to 16 bodies of a fifth of a second each,
        would be charged to the few that completed). Each run starts and ends with the WAF idle, so no work
        left from one run is charged to the next."""
        duration = DURATION if shape.name == "GET" else BODY_DURATION
        self.idle()
        result = wrk(self.envoy.port, script, duration)
        if self.waf:
            self.idle()
            before = cpu_seconds(self.waf.process.pid)
            single = wrk(self.envoy.port, script, duration, connections=1)
            self.idle()
            result["cpu_ms"] = (cpu_seconds(self.waf.process.pid) - before) / max(single["requests"], 1) * 1000
            result["rss"] = rss_mib(self.waf.process.pid)
        self.results.setdefault(shape.name, []).append(result)

    def idle(self, limit: float = 60.0) -> None:
        """Until the WAF uses under 5% of a CPU over a quarter second (at most `limit` seconds)."""
        if self.waf is None:
            return
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            before = cpu_seconds(self.waf.process.pid)
            time.sleep(0.25)
            if cpu_seconds(self.waf.process.pid) - before < 0.0125:
                return

    def median(self, shape: str, key: str) -> float:
        return float(statistics.median(r[key] for r in self.results[shape]))


GO_TEST = ("go", "test", "-tags", "re2_cgo", "-run", "^$", "-count", "1")
BENCH_LINE = r"BenchmarkShapes/(\w+)/([\w-]+?)(?:-\d+)?\s+\d+\s+\d+ ns/op\s+([\d.]+) cpu-ms/op"


def engine_alone(out: Path) -> tuple[dict[str, dict[str, float]], str]:
    """CPU ms per request of the engine alone (Coraza in-process, the service's settings, the same bytes):
    every matcher variant on every shape, then a CPU profile of the shipped variant per shape."""
    run = subprocess.run(
        [*GO_TEST, "-bench", "^BenchmarkShapes$", "-benchtime", "1s", "./internal/server"],
        cwd=WAF_DIR,
        env={**os.environ, "WAF_BENCH_VARIANTS": ",".join(VARIANTS)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (out / "engine-bench.txt").write_text(run, encoding="utf-8")
    found: dict[str, dict[str, float]] = {}
    for shape, variant, ms in re.findall(BENCH_LINE, run):
        found.setdefault(variant, {})[shape] = float(ms)
    tops = []
    for shape in SHAPES:
        profile = out / f"engine-{shape}.pprof"
        subprocess.run(
            [
                *GO_TEST,
                *(
                    "-bench",
                    f"^BenchmarkShapes$/^{shape}$/^shipped$",
                    "-benchtime",
                    # enough work that the profile is the requests, not the rules' compilation before them
                    "3000x" if shape == "GET" else "40x",
                ),
                *("-cpuprofile", str(profile), "-o", str(out / "server.test"), "./internal/server"),
            ],
            cwd=WAF_DIR,
            env={**os.environ, "WAF_BENCH_VARIANTS": "shipped"},
            capture_output=True,
            check=True,
        )
        top = subprocess.run(
            ["go", "tool", "pprof", "-top", "-nodecount", "25", str(out / "server.test"), str(profile)],
            cwd=WAF_DIR,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (out / f"engine-{shape}.top.txt").write_text(top, encoding="utf-8")
        tops.append(f"--- {shape}: engine CPU profile, top functions (flat) ---\n" + "\n".join(top.splitlines()[:16]))
    return found, "\n".join(tops)


def main() -> int:
    crs = os.environ.get("CRS_DIR", str(WAF_DIR.parent.parent / "shared" / "crs" / "v4.28.0"))
    unknown = sorted(set(SHAPES) - set(ALL_SHAPES))
    if unknown or not SHAPES:
        print(f"BENCH_SHAPES: unknown {unknown or 'empty'}; choose from {','.join(ALL_SHAPES)}", file=sys.stderr)
        return 2
    if not shutil.which("wrk"):
        print("wrk not found: apt-get install wrk (Debian)", file=sys.stderr)
        return 2
    out = WAF_DIR / "bench-results" / time.strftime("%Y%m%dT%H%M%S")
    out.mkdir(parents=True)
    work = Path(tempfile.mkdtemp(prefix="bench-waf-"))
    shapes = load_shapes(work)
    scripts = {name: shape.script(work) for name, shape in shapes.items()}
    load_before = os.getloadavg()
    backend = DirectResponseBackend()
    targets: list[Target] = []
    wafs: list[WAFProcess] = []
    try:
        targets.append(Target("Envoy direct", EnvoyProcess(backend.port, None), None))
        baseline = os.environ.get("BENCH_BASELINE", "")
        builds = [("ours", "")] + ([("baseline", baseline)] if baseline else [])
        for name, binary in builds:
            # GOMAXPROCS: the runtime's default, and the heap's soft limit of a default pod
            waf = WAFProcess(crs, workers=0, binary=binary or None, env={"GOMEMLIMIT": POD_GOMEMLIMIT})
            wafs.append(waf)
            targets.append(Target(name, EnvoyProcess(backend.port, waf.port, message_timeout="30s"), waf))
            if name == "ours":
                single = EnvoyProcess(backend.port, waf.port, message_timeout="30s", waf_streams_per_connection=1)
                targets.append(Target("ours, one stream per conn", single, waf))
        # The tuned profile (PL2 and the block's curated exclusions) on the settings the block renders for it,
        # beside ours (PL1): what the profile costs per request (issue 39).
        profile = efficacy.rendered_settings(efficacy.CONFIGS[PROFILE])
        for machine_key in ("crs_dir", "listen", "metrics_port"):
            profile.pop(machine_key, None)
        waf = WAFProcess(crs, **{**profile, "workers": 0}, env={"GOMEMLIMIT": POD_GOMEMLIMIT})
        wafs.append(waf)
        targets.append(Target(PROFILE, EnvoyProcess(backend.port, waf.port, message_timeout="30s"), waf))
        for name in SHAPES:  # warm-up: connections to the WAF opened, pools filled
            for t in targets:
                wrk(t.envoy.port, scripts[name], "1s")
        for rnd in range(ROUNDS):
            order = targets if rnd % 2 == 0 else list(reversed(targets))  # A-B-B-A
            for name in SHAPES:
                for t in order:
                    t.measure(shapes[name], scripts[name])
    finally:
        for t in targets:
            t.envoy.stop()
        for w in wafs:
            w.stop()
        backend.stop()
    raw = {t.name: t.results for t in targets}
    (out / "results.json").write_text(json.dumps(raw, indent=1), encoding="utf-8")
    engine, tops = engine_alone(out)
    shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()
    report = render(targets, engine, load_before, load_after) + "\n" + tops + "\n"
    (out / "report.txt").write_text(report, encoding="utf-8")
    print(report)
    print(f"Report and profiles: {out}")
    return 0


def render(
    targets: list[Target],
    engine: dict[str, dict[str, float]],
    load_before: tuple[float, ...],
    load_after: tuple[float, ...],
) -> str:
    lines = [
        f"WAF benchmark: loopback, {os.cpu_count()} CPUs, wrk -t1 -c{CONNECTIONS} -d{DURATION} (bodies "
        f"{BODY_DURATION}), {ROUNDS} rounds "
        f"interleaved A-B-B-A (medians), CRS PL1 blocking; 1-minute load average {load_before[0]:.2f} before, "
        f"{load_after[0]:.2f} after. The shapes: {', '.join(SHAPES)} (waf/internal/server/engine_bench_test.go).",
        "",
    ]

    def row(label: str, values: list[str]) -> None:
        lines.append(f"{label:44}" + "".join(f"{v:>12}" for v in values))

    row("", list(SHAPES))
    by = {t.name: t for t in targets}
    for t in targets:
        row(f"{t.name}: req/s", [f"{t.median(s, 'rps'):.1f}" for s in SHAPES])
        row(f"{t.name}: p50 / p99 ms", [f"{t.median(s, 'p50'):.0f}/{t.median(s, 'p99'):.0f}" for s in SHAPES])
        if t.waf is not None:
            row(f"{t.name}: WAF CPU ms per request (1 conn)", [f"{t.median(s, 'cpu_ms'):.2f}" for s in SHAPES])
            rss = [f"{t.median(s, 'rss'):.0f}" for s in SHAPES]
            row(f"{t.name}: WAF RSS MiB after (GOMEMLIMIT {POD_GOMEMLIMIT})", rss)
    shipped = engine.get("shipped", {})
    row("engine alone: CPU ms per request", [f"{shipped.get(s, 0):.2f}" for s in SHAPES])
    ours = by["ours"]
    lines.append("")
    lines.append("Ratios (same run):")

    def ratio(a: Target, b: Target, key: str) -> list[str]:
        return [f"{a.median(s, key) / b.median(s, key):.3f}x" if b.median(s, key) else "n/a" for s in SHAPES]

    row(
        "  ours CPU / engine alone",
        [f"{ours.median(s, 'cpu_ms') / shipped[s]:.2f}x" if shipped.get(s) else "" for s in SHAPES],
    )
    row("  ours req/s / Envoy direct", ratio(ours, by["Envoy direct"], "rps"))
    row(f"  {PROFILE} CPU / ours (PL1)", ratio(by[PROFILE], ours, "cpu_ms"))
    row("  h2 multiplexed req/s / one stream per conn", ratio(ours, by["ours, one stream per conn"], "rps"))
    row("  h2 multiplexed CPU / one stream per conn", ratio(ours, by["ours, one stream per conn"], "cpu_ms"))
    if "baseline" in by:
        row("  ours CPU / baseline CPU", ratio(ours, by["baseline"], "cpu_ms"))
        row("  ours req/s / baseline req/s", ratio(ours, by["baseline"], "rps"))
    lines.append("")
    lines.append("The engine alone by matcher (CPU ms per request; the shipped one is internal/rx's choice):")
    for variant in VARIANTS:
        if variant in engine:
            row(f"  {variant}", [f"{engine[variant].get(s, 0):.2f}" for s in SHAPES])
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
