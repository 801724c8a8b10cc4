"""`envoy-waf --config FILE`: the supervisor. It starts `workers` worker processes (server.py) that all
listen on `listen` (SO_REUSEPORT: the kernel spreads connections over them), and:

- tells every worker, through a shared board, whether all of them are ready: a gRPC health check is
  SERVING, whichever worker answers it, only once every worker serves;
- replaces a worker that dies after it served (a log line says which and how); a worker that dies before
  it ever served (rules that do not load) stops the supervisor with status 1, which beats a restart loop;
- on SIGTERM/SIGINT forwards SIGTERM, so every worker drains (grace 5 s), kills what is left after that,
  and exits 0 with no process behind;
- serves the Prometheus metrics once, summed over every worker (prometheus_client multiprocess mode, in a
  private temp dir; dead workers' counts stay in the sums).

The workers die with the supervisor, even when it is SIGKILLed (envoy_waf.reaper's PR_SET_PDEATHSIG).
The supervisor loads no rules and speaks no gRPC: one engine per worker, in the worker.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType

from prometheus_client import CollectorRegistry, Counter, Gauge, multiprocess, start_http_server

from . import lines, reaper
from .board import Board
from .settings import Settings

STOP_TIMEOUT = 10.0  # after SIGTERM: the workers' 5 s grace, then their engine cleanup, then SIGKILL


def log(event: str, **fields: object) -> None:
    lines.event(event, **fields)


class Supervisor:
    def __init__(self, config: str, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.count = settings.worker_count()
        self.dir = Path(tempfile.mkdtemp(prefix="envoy-waf-"))  # private: mode 0700
        self.metrics_dir = self.dir / "metrics"
        self.metrics_dir.mkdir()
        self.board = Board(self.dir / "board", create=True)
        self.ready_read, self.ready_write = os.pipe()
        os.set_blocking(self.ready_read, False)
        self.wake_read, wake_write = os.pipe()
        os.set_blocking(self.wake_read, False)
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write)  # a signal (SIGCHLD, SIGTERM) ends the select below at once
        self.workers: list[subprocess.Popen[bytes]] = []
        self.ready: set[int] = set()
        self.port = 0
        self.stopping = False
        self.registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(self.registry, path=str(self.metrics_dir))  # type: ignore[no-untyped-call]
        self.live = Gauge("waf_workers", "Worker processes running", registry=self.registry)
        self.replaced = Counter("waf_worker_restarts_total", "Workers replaced after dying", registry=self.registry)

    def _spawn(self) -> subprocess.Popen[bytes]:
        argv = [sys.executable, "-m", "envoy_waf.server", "--config", self.config]
        argv += ["--board", str(self.dir / "board"), "--ready-fd", str(self.ready_write)]
        # Started from the main thread, which lives as long as the supervisor: PDEATHSIG follows the thread.
        process = subprocess.Popen(
            reaper.command(argv),
            pass_fds=(self.ready_write,),
            env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(self.metrics_dir)},
        )
        log("worker_started", worker=process.pid)
        return process

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if signum in (signal.SIGTERM, signal.SIGINT):
            self.stopping = True

    def _read_ready(self) -> None:
        with contextlib.suppress(BlockingIOError):
            data = os.read(self.ready_read, 65536)
            for line in data.decode().splitlines():
                pid, _, port = line.partition(" ")
                self.ready.add(int(pid))
                self.port = int(port or 0)

    def _reap(self) -> bool:
        """Replace workers that died after serving; False when one died before it ever served."""
        for slot, process in enumerate(self.workers):
            code = process.poll()
            if code is None:
                continue
            multiprocess.mark_process_dead(process.pid, str(self.metrics_dir))  # type: ignore[no-untyped-call]
            how = f"signal {-code}" if code < 0 else f"exit status {code}"
            if process.pid not in self.ready:
                log("worker_failed", worker=process.pid, how=how, detail="died before serving; stopping")
                return False
            self.ready.discard(process.pid)
            self.board.set_all_ready(False)
            self.workers[slot] = self._spawn()
            self.replaced.inc()
            log("worker_replaced", worker=process.pid, how=how, replacement=self.workers[slot].pid)
        return True

    def run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
            signal.signal(sig, self._on_signal)
        if self.settings.metrics_port:
            start_http_server(self.settings.metrics_port, registry=self.registry)
        log("workers", count=self.count, source="settings" if self.settings.workers else "cpus")
        self.workers = [self._spawn() for _ in range(self.count)]
        announced = False
        status = 0
        selector = selectors.DefaultSelector()
        selector.register(self.ready_read, selectors.EVENT_READ)
        selector.register(self.wake_read, selectors.EVENT_READ)
        try:
            while not self.stopping:
                selector.select(timeout=1.0)
                with contextlib.suppress(BlockingIOError):
                    os.read(self.wake_read, 4096)
                self._read_ready()
                if not self._reap():
                    status = 1
                    break
                all_ready = all(p.pid in self.ready for p in self.workers)
                self.board.set_all_ready(all_ready and not self.stopping)
                self.live.set(sum(1 for p in self.workers if p.poll() is None))
                if all_ready and not announced:
                    announced = True
                    pids = [p.pid for p in self.workers]
                    log("ready", port=self.port, mode=self.settings.mode, workers=pids)
        finally:
            self.board.set_all_ready(False)
            self._stop()
            selector.close()
        return status

    def _stop(self) -> None:
        """SIGTERM to every worker (each drains), SIGKILL for what is left after STOP_TIMEOUT."""
        log("draining", workers=[p.pid for p in self.workers if p.poll() is None])
        for process in self.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for process in self.workers:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.board.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        log("stopped")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="envoy-waf", description=__doc__)
    parser.add_argument("--config", required=True, help="settings YAML (mounted from a ConfigMap)")
    args = parser.parse_args(argv)
    settings = Settings.load(args.config)  # bad settings fail here, before any worker starts
    return Supervisor(args.config, settings).run()


if __name__ == "__main__":
    sys.exit(main())
