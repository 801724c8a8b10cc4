"""tools/jobs.py, the runner `make test` starts its side-by-side jobs with: each job's output whole and
never interleaved, every job's exit code counted (a failing one fails the run, and the others still finish)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT
from tools.jobs import busy_seconds

FAKE_MAKE = """#!/bin/sh
# A stand-in for make: each target prints two lines a moment apart; a target named fail-* exits 3.
shift 2  # --no-print-directory -k
code=0
for target in "$@"; do
  echo "$target: first"
  sleep 0.3
  echo "$target: second"
  case $target in fail-*) code=3 ;; burn-*) "$PYTHON" -c 'import time
while time.process_time() < 1.5: pass' ;; esac
done
exit $code
"""


def _run(tmp_path: Path, *groups: str) -> subprocess.CompletedProcess[str]:
    make = tmp_path / "make"
    make.write_text(FAKE_MAKE, encoding="utf-8")
    make.chmod(0o755)
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "jobs.py"), *groups],
        capture_output=True,
        text=True,
        check=False,
        env={"MAKE": str(make), "PATH": "/usr/bin:/bin", "PYTHON": sys.executable},
    )


def test_every_job_runs_and_its_output_stays_whole(tmp_path: Path) -> None:
    done = _run(tmp_path, "a b", "c")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    # Each job's lines come together, in its own order, though the jobs ran at the same time.
    first = lines.index("a: first")
    assert lines[first : first + 4] == ["a: first", "a: second", "b: first", "b: second"]
    c = lines.index("c: first")
    assert lines[c : c + 2] == ["c: first", "c: second"]
    assert "jobs: make a b: ok" in done.stdout
    assert "jobs: make c: ok" in done.stdout


def test_a_failing_job_fails_the_run_and_the_others_finish(tmp_path: Path) -> None:
    done = _run(tmp_path, "fail-x", "y")
    assert done.returncode == 1
    assert "jobs: make fail-x: FAILED (exit 3)" in done.stdout
    assert "jobs: make y: ok" in done.stdout
    assert "y: second" in done.stdout


def test_no_job_is_a_usage_error(tmp_path: Path) -> None:
    assert _run(tmp_path).returncode == 2


def test_jobs_after_the_gate_start_only_when_it_has_succeeded(tmp_path: Path) -> None:
    """The checks start beside the image build; the jobs needing images start after it, never before."""
    done = _run(tmp_path, "early", "--after", "gate", "late-a", "late-b")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    started = [line for line in lines if line.startswith("jobs: started make ")]
    assert started[:2] == ["jobs: started make early", "jobs: started make gate"]
    gate_done = next(i for i, line in enumerate(lines) if line.startswith("---- make gate: exit 0"))
    assert lines.index("jobs: started make late-a") > gate_done, "started before the gate was done"
    assert lines.index("jobs: started make late-b") > gate_done
    for name in ("early", "gate", "late-a", "late-b"):
        assert f"jobs: make {name}: ok" in done.stdout


def test_a_failed_gate_starts_nothing_after_it_and_fails_the_run(tmp_path: Path) -> None:
    done = _run(tmp_path, "early", "--after", "fail-gate", "late")
    assert done.returncode == 1
    assert "jobs: started make late" not in done.stdout
    assert "jobs: make late: NOT STARTED (make fail-gate failed)" in done.stdout
    assert "jobs: make early: ok" in done.stdout


def test_after_without_a_job_behind_the_gate_is_a_usage_error(tmp_path: Path) -> None:
    assert _run(tmp_path, "early", "--after", "gate").returncode == 2


def test_the_last_line_says_the_least_disk_free_while_the_jobs_ran(tmp_path: Path) -> None:
    done = _run(tmp_path, "a", "b")
    head = "jobs: least disk free while they ran: "
    last = done.stdout.splitlines()[-1]
    assert last.startswith(head), done.stdout
    # The checkout's and the temp folder's file systems, in GiB, each within its size.
    seen = dict(item.rsplit(" ", 2)[:2] for item in last.removeprefix(head).split(", "))
    assert str(Path.cwd()) in seen
    for folder, gib in seen.items():
        assert 0 < float(gib) <= shutil.disk_usage(folder).total / 2**30, last


def test_each_job_says_the_cpu_its_processes_used(tmp_path: Path) -> None:
    """The jobs are bound by the machine's CPU: each job's line counts what its process tree used (a child of
    make's child included), so a run says which job a cut must come from."""
    done = _run(tmp_path, "burn-a", "b")
    assert done.returncode == 0, done.stdout + done.stderr
    cpu = {m[1]: int(m[2]) for m in re.finditer(r"^jobs: make (\S+): ok in \d+ s, CPU (\d+) s$", done.stdout, re.M)}
    assert set(cpu) == {"burn-a", "b"}, done.stdout
    assert cpu["burn-a"] >= 1, done.stdout  # 1.5 s burnt by a grandchild of the job's make
    assert cpu["b"] == 0, done.stdout  # it only sleeps
    assert re.search(r"^---- make burn-a: exit 0 after \d+ s, CPU [12] s ----$", done.stdout, re.M), done.stdout
    machine = re.search(r"^jobs: the machine's \d+ cores were busy (\d+) of (\d+) core-seconds", done.stdout, re.M)
    assert machine, done.stdout
    assert 1 <= int(machine[1]) <= int(machine[2]), done.stdout


def test_busy_seconds_leave_out_idle_and_iowait() -> None:
    # user nice system idle iowait irq softirq steal guest guest_nice, in ticks (guest is already in user)
    stat = "cpu  100 20 30 400 50 6 4 0 7 0\ncpu0 1 2 3 4 5 6 7 8 9 0\n"
    tick = os.sysconf("SC_CLK_TCK")
    assert busy_seconds(stat) == (160 / tick, 610 / tick)
