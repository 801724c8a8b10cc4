"""`python tools/jobs.py "TARGET..." "TARGET..." ...`: run make jobs side by side, one per argument.

Each argument is one job: `make -k` of its targets, one after another, its output kept in a file of its own
(so parallel jobs never interleave) and printed whole when the job ends, headed by its exit code and time.
The exit code is 0 only if every job's is; the last lines list each job's result. `make test` runs its
cluster scenarios and its side tasks this way: they mostly wait on pods, so side by side they take the
time of the longest instead of the sum.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Job:
    targets: list[str]
    log: Path
    proc: subprocess.Popen[bytes]
    started: float
    code: int | None = None
    seconds: float = 0.0

    @property
    def name(self) -> str:
        return " ".join(self.targets)


def run(groups: list[list[str]], make: str = "make") -> int:
    folder = Path(tempfile.mkdtemp(prefix="make-jobs-"))
    jobs: list[Job] = []
    for index, targets in enumerate(groups):
        log = folder / f"{index}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [make, "--no-print-directory", "-k", *targets], stdout=out, stderr=subprocess.STDOUT
            )
        jobs.append(Job(targets, log, proc, time.monotonic()))
        print(f"jobs: started make {' '.join(targets)}", flush=True)
    pending = list(jobs)
    while pending:
        for job in list(pending):
            code = job.proc.poll()
            if code is None:
                continue
            job.code, job.seconds = code, time.monotonic() - job.started
            pending.remove(job)
            print(f"---- make {job.name}: exit {code} after {job.seconds:.0f} s ----", flush=True)
            sys.stdout.write(job.log.read_text(encoding="utf-8", errors="replace"))
            sys.stdout.flush()
            job.log.unlink()
        time.sleep(0.5)
    folder.rmdir()
    for job in jobs:
        print(f"jobs: make {job.name}: {'ok' if job.code == 0 else f'FAILED (exit {job.code})'} in {job.seconds:.0f} s")
    return 0 if all(job.code == 0 for job in jobs) else 1


def main(argv: list[str]) -> int:
    groups = [arg.split() for arg in argv if arg.split()]
    if not groups:
        print(__doc__, file=sys.stderr)
        return 2
    return run(groups, os.environ.get("MAKE", "make"))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
