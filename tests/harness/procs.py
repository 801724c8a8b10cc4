"""Child processes that never outlive the harness: each runs in its own process group (so a stop reaches
its children too) and gets SIGKILL from the kernel when the harness dies (PR_SET_PDEATHSIG)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent() -> None:
    os.setpgid(0, 0)
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class Proc:
    """One named child process with its log file."""

    def __init__(
        self, name: str, argv: Sequence[str], log: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None
    ) -> None:
        self.name = name
        self.log = log
        self._log = log.open("ab")
        # PR_SET_PDEATHSIG fires when the *thread* that forked exits: callers start processes from threads
        # that live as long as the harness.
        self.popen = subprocess.Popen(
            list(argv),
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - the only way to set the parent-death signal
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float = 10.0) -> int | None:
        """SIGTERM the whole group, SIGKILL what is left after `grace` seconds; returns the exit code."""
        if self.alive():
            self._signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=grace)
        self._signal(signal.SIGKILL)
        code = self.popen.wait(timeout=grace)
        self._log.close()
        return code

    def _signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)

    def tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""


def wait_until(check: object, timeout: float, what: str, interval: float = 0.2) -> None:
    """Poll `check()` until it returns truthy; raise TimeoutError naming `what`."""
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            if check():  # type: ignore[operator]
                return
        except Exception as exc:  # noqa: BLE001 - any failure means "not yet"
            last = exc
        time.sleep(interval)
    raise TimeoutError(f"{what} not ready after {timeout:.0f}s" + (f": {last}" if last else ""))
