"""The default worker count is the CPUs the container may use: its CPU quota (cgroup v2 or v1, on its
own cgroup or any above it) rounded up, never more than the CPUs it may run on, at least 1. And the
`workers` setting takes only a sensible integer.

Mutation: ignoring the ancestors in cpus.quota (own cgroup only) -> red [v2-parent-limit].
Mutation: rounding the quota down -> red [v2-one-and-a-half].
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from envoy_waf import cpus
from envoy_waf.settings import MAX_WORKERS, Settings

VISIBLE = len(os.sched_getaffinity(0))


def _v2(tmp_path: Path, own: str, limits: dict[str, str]) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpu memory\n")
    for relative, value in limits.items():
        directory = root / relative
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "cpu.max").write_text(value + "\n")
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(f"0::{own}\n")
    return root, proc


def _v1(tmp_path: Path, own: str, quota: int, period: int) -> tuple[Path, Path]:
    root = tmp_path / "cgroup"
    directory = root / "cpu,cpuacct" / own.strip("/")
    directory.mkdir(parents=True)
    (directory / "cpu.cfs_quota_us").write_text(f"{quota}\n")
    (directory / "cpu.cfs_period_us").write_text(f"{period}\n")
    proc = tmp_path / "proc-self-cgroup"
    proc.write_text(f"5:memory:{own}\n4:cpu,cpuacct:{own}\n0::/\n")
    return root, proc


V2 = [
    ("v2-two", "/", {"": "200000 100000"}, 2),
    ("v2-one-and-a-half", "/", {"": "150000 100000"}, 2),
    ("v2-quarter", "/", {"": "25000 100000"}, 1),
    ("v2-unlimited", "/", {"": "max 100000"}, None),
    ("v2-parent-limit", "/kubepods/pod1/c1", {"kubepods/pod1": "100000 100000", "kubepods/pod1/c1": "max 100000"}, 1),
    ("v2-own-tighter", "/a/b", {"a": "400000 100000", "a/b": "100000 100000"}, 1),
]


@pytest.mark.parametrize(("own", "limits", "expected"), [c[1:] for c in V2], ids=[c[0] for c in V2])
def test_cgroup_v2_quota(tmp_path: Path, own: str, limits: dict[str, str], expected: int | None) -> None:
    root, proc = _v2(tmp_path, own, limits)
    want = VISIBLE if expected is None else min(VISIBLE, expected)
    assert cpus.available(root, proc) == want


@pytest.mark.parametrize(
    ("quota", "period", "expected"),
    [(100000, 100000, 1), (-1, 100000, None), (50000, 100000, 1)],
    ids=["v1-one", "v1-unlimited", "v1-half"],
)
def test_cgroup_v1_quota(tmp_path: Path, quota: int, period: int, expected: int | None) -> None:
    root, proc = _v1(tmp_path, "/docker/abc", quota, period)
    want = VISIBLE if expected is None else min(VISIBLE, expected)
    assert cpus.available(root, proc) == want


def test_no_cgroup_is_the_cpus_this_process_may_run_on(tmp_path: Path) -> None:
    assert cpus.available(tmp_path / "none", tmp_path / "none") == VISIBLE


def _settings(tmp_path: Path, crs: str, **values: object) -> Settings:
    path = tmp_path / "waf.yaml"
    path.write_text(yaml.safe_dump({"crs_dir": crs, **values}), encoding="utf-8")
    return Settings.load(path)


def test_workers_default_to_the_cpus(tmp_path: Path, crs: str) -> None:
    assert _settings(tmp_path, crs).worker_count() == cpus.available()
    assert _settings(tmp_path, crs, workers=3).worker_count() == 3


@pytest.mark.parametrize("workers", [0, -1, MAX_WORKERS + 1, True, "2", 1.5])
def test_workers_must_be_a_sensible_integer(tmp_path: Path, crs: str, workers: object) -> None:
    with pytest.raises(ValueError, match="workers must be an integer from 1 to"):
        _settings(tmp_path, crs, workers=workers)
