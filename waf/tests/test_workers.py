"""Several worker processes on one port, with a real Envoy in front (failing closed, as the block
renders it): every worker takes traffic, a killed worker is replaced while traffic flows, health is
SERVING only once every worker serves, SIGTERM drains and leaves nothing, metrics are summed.

Envoy puts one ext_proc stream on each connection to the WAF (as the block configures it), so concurrent
requests use several connections, which the kernel spreads over the workers (SO_REUSEPORT).
"""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from envoy_waf.testbed import Backend, EnvoyProcess, WAFProcess, alive, free_port, request

SQLI = "/item?id=1%27%20OR%20%271%27%3D%271"
CLIENTS = 16  # concurrent clients: each has at most one request in flight


def _wait_for(what: str, check: Callable[[], bool], timeout: float = 30) -> None:
    """Poll until `check` holds; the deadline only keeps a broken run from hanging."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


def _events(waf: WAFProcess, event: str) -> list[dict[str, Any]]:
    return [e for e in waf.lifecycle() if e["event"] == event]


@pytest.fixture
def two(crs: str) -> Iterator[WAFProcess]:
    w = WAFProcess(crs, workers=2, metrics_port=free_port())
    yield w
    w.stop()


@pytest.fixture
def edge(backend: Backend, two: WAFProcess) -> Iterator[EnvoyProcess]:
    e = EnvoyProcess(backend.port, two.port)
    yield e
    e.stop()


def _burst(port: int, path: str, count: int) -> list[int]:
    with ThreadPoolExecutor(CLIENTS) as pool:
        return list(pool.map(lambda _: request(port, "GET", path)[0], range(count)))


def test_every_worker_takes_traffic(edge: EnvoyProcess, two: WAFProcess) -> None:
    """Blocked requests are logged with the pid of the worker that decided: both workers show up.

    Mutation: Envoy's default of one connection to the WAF (waf_streams_per_connection=None in the
    testbed) -> red (every stream on one connection, so one worker)."""
    statuses = _burst(edge.port, SQLI, 20 * CLIENTS)
    assert set(statuses) == {403}
    deciders = Counter(e["worker"] for e in two.events())
    assert set(deciders) == set(two.worker_pids()), deciders
    assert sum(deciders.values()) == len(statuses)


def test_metrics_are_summed_over_workers(edge: EnvoyProcess, two: WAFProcess) -> None:
    """The supervisor's /metrics counts every worker's requests, and keeps a dead worker's counts.

    Mutation: serving the supervisor's registry without MultiProcessCollector -> red (no
    waf_requests_total at all)."""
    statuses = _burst(edge.port, SQLI, 10 * CLIENTS)
    deciders = Counter(e["worker"] for e in two.events())
    assert len(deciders) == 2, deciders
    assert sum(deciders.values()) == len(statuses)

    def scrape() -> dict[str, float]:
        url = f"http://127.0.0.1:{_metrics_port(two)}/metrics"
        with urllib.request.urlopen(url, timeout=5) as resp:
            text = resp.read().decode()
        out = {}
        for line in text.splitlines():
            if line and not line.startswith("#"):
                name, _, value = line.rpartition(" ")
                out[name] = float(value)
        return out

    metrics = scrape()
    assert metrics["waf_requests_total"] == len(statuses)
    assert metrics['waf_decisions_total{action="block"}'] == len(statuses)
    assert metrics["waf_workers"] == 2

    victim = two.worker_pids()[0]
    os.kill(victim, signal.SIGKILL)
    _wait_for("the replacement serves", lambda: len(_events(two, "worker_ready")) == 3)
    metrics = scrape()
    assert metrics["waf_requests_total"] == len(statuses), "a dead worker's counts stay in the sum"
    assert metrics["waf_worker_restarts_total"] == 1


def _metrics_port(waf: WAFProcess) -> int:
    return int(yaml.safe_load((waf.dir / "waf.yaml").read_text(encoding="utf-8"))["metrics_port"])


class _Traffic:
    """CLIENTS threads sending benign requests back to back until stopped; every status is kept, and
    each client's failed requests with when they failed (time.monotonic)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.statuses: list[int] = []
        self.failures: Counter[int] = Counter()
        self.failed_at: list[float] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(n,), daemon=True) for n in range(CLIENTS)]
        for thread in self.threads:
            thread.start()

    def _run(self, client: int) -> None:
        while not self.stopping.is_set():
            try:
                status = request(self.port, "GET", "/?q=steady")[0]
            except OSError:
                status = 0
            with self.lock:
                self.statuses.append(status)
                if status != 200:
                    self.failures[client] += 1
                    self.failed_at.append(time.monotonic())

    def count(self) -> int:
        with self.lock:
            return len(self.statuses)

    def stop(self) -> Counter[int]:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)
        return Counter(self.statuses)


def test_a_killed_worker_is_replaced_while_traffic_flows(edge: EnvoyProcess, two: WAFProcess) -> None:
    """SIGKILL one worker under a steady stream: the supervisor logs it and starts a replacement, the only
    failed requests (500: Envoy fails closed) are those the kill itself cost, and none fails once the
    replacement serves. A client has one request in flight at a time, so it loses at most that one and, in
    the same moment, one more: a request Envoy sent on a pooled connection to the dead worker before it saw
    that connection close, or on a new one the kernel had already queued on the dead worker's listening
    socket (SO_REUSEPORT). Seen once in a CI-like run: one client of 16 lost two.

    Mutation: the supervisor not replacing a dead worker -> red (no replacement, no second worker).
    Mutation: replacing a dead worker by restarting every worker -> red (clients failing again and again
    while no worker serves)."""
    victim, survivor = two.worker_pids()
    traffic = _Traffic(edge.port)
    try:
        _wait_for("traffic flows", lambda: traffic.count() >= 200)
        os.kill(victim, signal.SIGKILL)
        _wait_for("a replacement serves", lambda: len(_events(two, "worker_ready")) == 3)
        replaced_at = time.monotonic()
        served = traffic.count()
        _wait_for("more traffic after the replacement", lambda: traffic.count() >= served + 300)
    finally:
        statuses = traffic.stop()
    assert set(statuses) <= {200, 500}, statuses
    assert all(n <= 2 for n in traffic.failures.values()), traffic.failures
    assert [t for t in traffic.failed_at if t > replaced_at] == [], "a request failed after the replacement served"
    (replaced,) = _events(two, "worker_replaced")
    assert replaced["worker"] == victim
    assert replaced["how"] == "signal 9"
    assert sorted(two.worker_pids()) == sorted([survivor, replaced["replacement"]])


def _health(port: int) -> str:
    """One Check on a new connection (so the kernel picks a worker anew): SERVING, NOT_SERVING, or
    "no answer" (a stopped worker never answers)."""
    options = [("grpc.use_local_subchannel_pool", 1)]
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=0.5)
        except grpc.RpcError:
            return "no answer"
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def test_health_is_not_serving_until_every_worker_serves(crs: str) -> None:
    """A worker frozen (SIGSTOP) before it is ready: the other worker, ready, still answers NOT_SERVING.
    Once the frozen one goes on, every answer is SERVING.

    Mutation: Health answering from the worker's own readiness only (not the supervisor's board) -> red."""
    for _attempt in range(3):
        waf = WAFProcess(crs, workers=2, wait=False)
        try:
            _wait_for("two workers started", lambda: len(_events(waf, "worker_started")) == 2)  # noqa: B023
            frozen = _events(waf, "worker_started")[0]["worker"]
            os.kill(frozen, signal.SIGSTOP)
            if any(e["worker"] == frozen for e in _events(waf, "worker_ready")):
                continue  # it was ready before the signal landed: try again
            _wait_for("the other worker serves", lambda: len(_events(waf, "worker_ready")) == 1)  # noqa: B023
            answers = [_health(waf.port) for _ in range(12)]
            assert "NOT_SERVING" in answers, answers
            assert "SERVING" not in answers, answers
            os.kill(frozen, signal.SIGCONT)
            waf.wait_ready()
            answers = [_health(waf.port) for _ in range(12)]
            assert set(answers) == {"SERVING"}, answers
            return
        finally:
            waf.stop()
    pytest.fail("the worker was ready before SIGSTOP landed, three times")


def test_sigterm_drains_every_worker_and_leaves_nothing(backend: Backend, crs: str) -> None:
    """A request whose headers reached a worker before SIGTERM still gets its verdict (the attack in its
    body is blocked, not failed); then the supervisor exits 0 with no worker left.

    Mutation: workers stopping with grace 0 -> red (500: the open stream is cut).
    Mutation: the supervisor exiting without forwarding SIGTERM -> red (no worker drains: they are killed)."""
    waf = WAFProcess(crs, workers=2)
    envoy = EnvoyProcess(backend.port, waf.port)
    pids = waf.worker_pids()
    try:
        body = b"user=admin'--&password=x' OR '1'='1"
        with socket.create_connection(("127.0.0.1", envoy.port), timeout=15) as sock:
            sock.sendall(
                b"POST /login HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            # Envoy has the WAF's answer to the headers: the stream is open on a worker.
            _wait_for("headers processed", lambda: _stat(envoy, "ext_proc.stream_msgs_received") >= 1)
            waf.process.send_signal(signal.SIGTERM)
            _wait_for("every worker drains", lambda: len(_events(waf, "worker_draining")) == 2)
            sock.sendall(body)
            reply = sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 403"), reply[:200]
        assert waf.process.wait(timeout=30) == 0
        assert not [pid for pid in pids if alive(pid)]
        assert request(envoy.port, "GET", "/")[0] == 500, "fail closed once the WAF is gone"
    finally:
        envoy.stop()
        waf.stop()


def _stat(envoy: EnvoyProcess, suffix: str) -> int:
    for line in envoy.stats().splitlines():
        name, _, value = line.partition(": ")
        if name.endswith(suffix) and value.isdigit():
            return int(value)
    return 0


def test_workers_die_with_a_killed_supervisor(crs: str) -> None:
    """SIGKILL to the supervisor (no cleanup possible) takes its workers with it.

    Mutation: starting workers without envoy_waf.reaper (no PR_SET_PDEATHSIG) -> red."""
    waf = WAFProcess(crs, workers=2)
    pids = waf.worker_pids()
    try:
        assert len(pids) == 2
        waf.process.kill()
        waf.process.wait(timeout=10)
        _wait_for("the workers are gone", lambda: not any(alive(p) for p in pids), timeout=10)
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        waf.stop()
