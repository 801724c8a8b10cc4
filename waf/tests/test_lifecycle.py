"""The service's lifecycle from outside: gRPC health SERVING once it can judge (the rules loaded), metrics
that count what it decided, SIGTERM drains (a request whose headers reached it still gets its verdict),
then it exits 0 and Envoy fails closed; bad rules stop it before it listens.

Mutation checks (done once each, restored): grpcServer.Stop instead of GracefulStop on SIGTERM
(cmd/envoy-waf) -> test_sigterm_drains red (500: the open stream is cut); setting health SERVING before
the rules load -> test_health_serving_only_when_it_can_judge red.
"""

from __future__ import annotations

import signal
import socket
import time
import urllib.request
from collections.abc import Callable

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from envoy_waf.testbed import Backend, EnvoyProcess, WAFProcess, free_port, refused_settings, request

SQLI = "/item?id=1%27%20OR%20%271%27%3D%271"


def _wait_for(what: str, check: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.02)


def _health(port: int, service: str = "") -> str:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=service), timeout=2)
        except grpc.RpcError as error:
            return f"no answer ({error.code().name})"
    return str(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))


def test_health_serving_only_when_it_can_judge(crs: str) -> None:
    """No answer while the rules load (nothing listens yet), SERVING once ready, for "" and the ext_proc
    service name."""
    waf = WAFProcess(crs, wait=False)
    try:
        assert _health(waf.port).startswith("no answer")  # the CRS takes a moment to load
        waf.wait_ready()
        assert _health(waf.port) == "SERVING"
        assert _health(waf.port, "envoy.service.ext_proc.v3.ExternalProcessor") == "SERVING"
    finally:
        waf.stop()


def test_metrics_count_decisions(backend: Backend, crs: str) -> None:
    port = free_port()
    waf = WAFProcess(crs, metrics_port=port)
    envoy = EnvoyProcess(backend.port, waf.port)
    try:
        statuses = [request(envoy.port, "GET", SQLI)[0] for _ in range(3)] + [request(envoy.port, "GET", "/")[0]]
        assert statuses == [403, 403, 403, 200]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        values = {
            name: float(value)
            for name, _, value in (line.rpartition(" ") for line in text.splitlines() if not line.startswith("#"))
        }
        assert values["waf_requests_total"] == 4
        assert values['waf_decisions_total{action="block"}'] == 3
        # The benign GET passes, allowed or flagged (a numeric Host scores a little: CRS 920350).
        assert values['waf_decisions_total{action="allow"}'] + values['waf_decisions_total{action="flag"}'] == 1
        assert values['waf_rule_matches_total{rule_id="942100"}'] == 3
    finally:
        envoy.stop()
        waf.stop()


def _stat(envoy: EnvoyProcess, suffix: str) -> int:
    for line in envoy.stats().splitlines():
        name, _, value = line.partition(": ")
        if name.endswith(suffix) and value.isdigit():
            return int(value)
    return 0


def test_sigterm_drains_and_leaves_nothing(backend: Backend, crs: str) -> None:
    """A request whose headers reached the WAF before SIGTERM still gets its verdict (the attack in its body
    is blocked, not failed); then the service exits 0 and Envoy fails closed."""
    waf = WAFProcess(crs)
    envoy = EnvoyProcess(backend.port, waf.port)
    try:
        body = b"user=admin'--&password=x' OR '1'='1"
        with socket.create_connection(("127.0.0.1", envoy.port), timeout=15) as sock:
            sock.sendall(
                b"POST /login HTTP/1.1\r\nHost: a\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + f"Content-Length: {len(body)}\r\n\r\n".encode()
            )
            _wait_for("headers processed", lambda: _stat(envoy, "ext_proc.stream_msgs_received") >= 1)
            waf.process.send_signal(signal.SIGTERM)
            _wait_for("draining", lambda: any(e["event"] == "draining" for e in waf.lifecycle()))
            assert _health(waf.port) != "SERVING"
            sock.sendall(body)
            reply = sock.recv(65536)
        assert reply.startswith(b"HTTP/1.1 403"), reply[:200]
        assert waf.process.wait(timeout=30) == 0
        assert [e["event"] for e in waf.lifecycle()][-1] == "stopped"
        assert request(envoy.port, "GET", "/")[0] == 500, "fail closed once the WAF is gone"
    finally:
        envoy.stop()
        waf.stop()


def test_rules_that_do_not_load_stop_it(crs: str) -> None:
    assert "loading the rules" in refused_settings(crs, extra_directives="SecRule ARGS @nosuchoperator")


def test_collector_target_follows_the_soft_limit(crs: str) -> None:
    """Under a heap soft limit (a pod's memory limit, or GOMEMLIMIT) the service sets GOGC to 400, the
    setting make bench-waf measured (waf/BUILD.md); GOGC from the environment always wins. Judged by the
    runtime itself (Go's go_gc_gogc_percent metric), and the ready line says the same."""

    def started(env: dict[str, str]) -> tuple[dict[str, object], float]:
        port = free_port()
        waf = WAFProcess(crs, env=env, metrics_port=port)
        try:
            ready = next(e for e in waf.lifecycle() if e["event"] == "ready")
            text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
            gogc = next(line for line in text.splitlines() if line.startswith("go_gc_gogc_percent "))
            return ready, float(gogc.split()[1])
        finally:
            waf.stop()

    ready, runtime_gogc = started({"GOMEMLIMIT": "512MiB"})
    assert (ready["gogc"], ready["gomemlimit"], runtime_gogc) == ("400", 512 << 20, 400)
    ready, runtime_gogc = started({"GOMEMLIMIT": "512MiB", "GOGC": "150"})
    assert (ready["gogc"], runtime_gogc) == ("150", 150)
