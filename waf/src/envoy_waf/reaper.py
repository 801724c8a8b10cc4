"""Run a command that dies with the process that started it: `python -m envoy_waf.reaper PARENT_PID CMD...`.

The testbed's Envoy sits in its own session (so a terminal's Ctrl-C reaches only the demo, which stops
it in order), and neither it nor the WAF process would notice their parent being killed hard (SIGKILL):
they would keep running, holding their ports. Here the child asks Linux for SIGKILL when its parent
dies (PR_SET_PDEATHSIG, kept across exec), checks the parent is still there (it may have died before
the request), then execs the command in place. The signal follows the parent *thread* that started the
child: start these processes from a thread that lives as long as they should.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def command(argv: list[str]) -> list[str]:
    """`argv` wrapped so that it dies with this process."""
    return [sys.executable, "-m", "envoy_waf.reaper", str(os.getpid()), *argv]


def main(args: list[str]) -> int:
    parent, argv = int(args[0]), args[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        return 1  # the parent died before the request took effect: do not start an orphan
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
