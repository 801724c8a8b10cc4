"""A demo or test run killed hard (SIGKILL, no cleanup) leaves no process behind: its Envoy (in a
session of its own) and its WAF service die with it.

Mutation check (done once, restored): taking the prctl call out of envoy_waf.reaper turned
test_a_killed_run_leaves_no_process_behind red (Envoy and the WAF still running 10 s later).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from envoy_waf.testbed import alive, request

# What `make waf-demo` starts, in a process of its own that the test then kills with SIGKILL.
RUN = """
import json, sys, time
from envoy_waf.testbed import Backend, EnvoyProcess, WAFProcess
backend = Backend()
waf = WAFProcess(sys.argv[1])
envoy = EnvoyProcess(backend.port, waf.port)
pids = {"envoy": envoy.process.pid, "waf": waf.process.pid}
print(json.dumps({**pids, "port": envoy.port}), flush=True)
time.sleep(600)
"""


def test_a_killed_run_leaves_no_process_behind(crs: str) -> None:
    src = str(Path(__file__).resolve().parents[1] / "src")
    run = subprocess.Popen(
        [sys.executable, "-c", RUN, crs],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": src},
    )
    pids: dict[str, int] = {}
    try:
        assert run.stdout is not None
        started = json.loads(run.stdout.readline())
        pids = {"envoy": started["envoy"], "waf": started["waf"]}
        assert request(started["port"], "GET", "/")[0] == 200
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in pids.values()) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = {k: pid for k, pid in pids.items() if alive(pid)}
        assert not left, f"still running after their parent was killed: {left}"
    finally:
        for pid in pids.values():  # never leave them behind, even when the test fails
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if run.poll() is None:
            run.kill()
