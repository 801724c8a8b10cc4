"""tools/jobs.py, the runner `make test` starts its side-by-side jobs with: each job's output whole and
never interleaved, every job's exit code counted (a failing one fails the run, and the others still finish)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

FAKE_MAKE = """#!/bin/sh
# A stand-in for make: each target prints two lines a moment apart; a target named fail-* exits 3.
shift 2  # --no-print-directory -k
code=0
for target in "$@"; do
  echo "$target: first"
  sleep 0.3
  echo "$target: second"
  case $target in fail-*) code=3 ;; esac
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
        env={"MAKE": str(make), "PATH": "/usr/bin:/bin"},
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
