"""`python tools/jobs.py "TARGET..." ... [--after "TARGET..." "TARGET..." ...]`: run make jobs side by side.

Each argument is one job: `make -k` of its targets, one after another, its output kept in a file of its own
(so parallel jobs never interleave) and printed whole when the job ends, headed by its exit code and time.
The jobs before `--after` start at once. The argument after `--after` is a gate, a job that starts at once
too; the jobs after it start when it succeeded (when it fails they are reported as not started). The exit
code is 0 only if every job's is; the last lines list each job's result. `make test` runs its cluster
scenarios and its side tasks this way: they mostly wait on pods, so side by side they take the time of the
longest instead of the sum; and the checks that need no image run while the images are built (a build uses
one core), the jobs that need them after. Since the jobs are bound by the machine's CPU, each job's line says
the CPU its processes used (make and everything it started and waited for: the tests, Ansible, the control
planes; not the pods, whose processes containerd's shims parent) and the last lines how busy the machine's
cores were meanwhile: what a cut must come from.
"""

from __future__ import annotations

import os
import shutil
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
    cpu: float = 0.0  # user + system seconds of the job's process tree, as reaped (os.wait4)

    @property
    def name(self) -> str:
        return " ".join(self.targets)


def _start(targets: list[str], log: Path, make: str) -> Job:
    with log.open("wb") as out:
        proc = subprocess.Popen([make, "--no-print-directory", "-k", *targets], stdout=out, stderr=subprocess.STDOUT)
    print(f"jobs: started make {' '.join(targets)}", flush=True)
    return Job(targets, log, proc, time.monotonic())


def _poll(job: Job) -> int | None:
    """The job's exit code once it ended, else None; os.wait4 (not Popen.poll) to get its tree's CPU time."""
    pid, status, usage = os.wait4(job.proc.pid, os.WNOHANG)
    if pid == 0:
        return None
    job.proc.returncode = os.waitstatus_to_exitcode(status)
    job.cpu = usage.ru_utime + usage.ru_stime
    return job.proc.returncode


def _finish(job: Job, code: int) -> None:
    job.code, job.seconds = code, time.monotonic() - job.started
    print(f"---- make {job.name}: exit {code} after {job.seconds:.0f} s, CPU {job.cpu:.0f} s ----", flush=True)
    sys.stdout.write(job.log.read_text(encoding="utf-8", errors="replace"))
    sys.stdout.flush()
    job.log.unlink()


@dataclass
class DiskWatch:
    """The least free disk seen under each folder's file system while the jobs ran: when a job stops with
    `no space left on device`, the last lines say how close the others came (CI's machines differ in disk)."""

    folders: list[Path]
    least: dict[Path, int] | None = None

    def sample(self) -> None:
        free = {folder: shutil.disk_usage(folder).free for folder in self.folders}
        self.least = free if self.least is None else {f: min(self.least[f], n) for f, n in free.items()}

    def report(self) -> str:
        seen = self.least or {}
        return ", ".join(f"{folder} {seen[folder] / 2**30:.1f} GiB" for folder in self.folders if folder in seen)


def busy_seconds(stat: str) -> tuple[float, float]:
    """(busy, total) core-seconds since boot from /proc/stat's first line (idle and iowait are not busy)."""
    fields = [int(n) for n in stat.splitlines()[0].split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    # user nice system idle iowait irq softirq steal [guest guest_nice, already counted in user and nice]
    total = sum(fields[:8])
    return (total - fields[3] - fields[4]) / tick, total / tick


def _machine() -> tuple[float, float]:
    return busy_seconds(Path("/proc/stat").read_text(encoding="ascii"))


def run(groups: list[list[str]], make: str = "make", gated: list[list[str]] | None = None) -> int:
    """`groups` start at once; with `gated`, its first group is the gate and the rest start once it succeeded."""
    folder = Path(tempfile.mkdtemp(prefix="make-jobs-"))
    later = list(gated or [])
    gate = later.pop(0) if later else None
    immediate = [*groups, *([gate] if gate else [])]
    jobs = [_start(targets, folder / f"{index}.log", make) for index, targets in enumerate(immediate)]
    gate_job = jobs[-1] if gate else None
    pending = list(jobs)
    not_started: list[list[str]] = []
    disk = DiskWatch(sorted({Path.cwd(), Path(tempfile.gettempdir())}))
    busy_at_start, total_at_start = _machine()
    while pending:
        disk.sample()
        for job in list(pending):
            code = _poll(job)
            if code is None:
                continue
            pending.remove(job)
            _finish(job, code)
            if job is gate_job and later:
                if code == 0:
                    started = [_start(t, folder / f"{len(jobs) + i}.log", make) for i, t in enumerate(later)]
                    jobs += started
                    pending += started
                else:
                    not_started = later
                later = []
        time.sleep(0.5)
    folder.rmdir()
    busy, total = (now - then for now, then in zip(_machine(), (busy_at_start, total_at_start), strict=True))
    for job in jobs:
        verdict = "ok" if job.code == 0 else f"FAILED (exit {job.code})"
        print(f"jobs: make {job.name}: {verdict} in {job.seconds:.0f} s, CPU {job.cpu:.0f} s")
    for targets in not_started:
        print(f"jobs: make {' '.join(targets)}: NOT STARTED (make {' '.join(gate or [])} failed)")
    cores = os.cpu_count() or 1
    share = busy / max(total, 1)
    print(f"jobs: the machine's {cores} cores were busy {busy:.0f} of {total:.0f} core-seconds ({share:.0%}) meanwhile")
    print(f"jobs: least disk free while they ran: {disk.report()}")
    return 0 if all(job.code == 0 for job in jobs) and not not_started else 1


def main(argv: list[str]) -> int:
    cut = argv.index("--after") if "--after" in argv else len(argv)
    groups = [arg.split() for arg in argv[:cut] if arg.split()]
    gated = [arg.split() for arg in argv[cut + 1 :] if arg.split()]
    # --after needs its gate and at least one job to start after it.
    if (not groups and not gated) or (cut < len(argv) and len(gated) < 2):
        print(__doc__, file=sys.stderr)
        return 2
    return run(groups, os.environ.get("MAKE", "make"), gated)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
