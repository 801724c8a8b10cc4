"""Invariant: a render sync makes the owned part of the artifacts folder hold exactly the rendered files - it
writes only what changed (content or mode), removes stale owned files, never touches a file it does not own,
leaves no temp files, and in check mode changes nothing while reporting the same outcome.

Mutation checks (done once): dropping the mode comparison in artifacts.sync turned
test_a_mode_drift_is_fixed_without_a_diff red; removing every file under dest instead of the owned ones turned
test_stale_owned_files_go_and_others_stay red; ignoring `check` in artifacts.remove turned
test_remove_takes_the_owned_paths_only red.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envoy_block import artifacts

OWNED = ("manifests", "helm", "plan.yaml")
FILES = {"manifests/01-a.yaml": "a\n", "helm/values.yaml": "v\n", "plan.yaml": "p\n"}


def tree(path: Path) -> dict[str, str]:
    return {str(p.relative_to(path)): p.read_text(encoding="utf-8") for p in sorted(path.rglob("*")) if p.is_file()}


def test_first_sync_writes_everything_with_modes(tmp_path: Path) -> None:
    outcome = artifacts.sync(tmp_path / "out", FILES, OWNED)
    assert sorted(outcome.written) == sorted(FILES)
    assert tree(tmp_path / "out") == FILES
    assert {(tmp_path / "out" / rel).stat().st_mode & 0o777 for rel in FILES} == {0o644}
    assert (tmp_path / "out" / "manifests").stat().st_mode & 0o777 == 0o755


def test_unchanged_files_are_not_rewritten(tmp_path: Path) -> None:
    artifacts.sync(tmp_path, FILES, OWNED)
    inode = (tmp_path / "plan.yaml").stat().st_ino
    outcome = artifacts.sync(tmp_path, {**FILES, "plan.yaml": "p\n"}, OWNED)
    assert not outcome.changed
    assert (tmp_path / "plan.yaml").stat().st_ino == inode


def test_a_changed_file_is_rewritten_with_a_diff(tmp_path: Path) -> None:
    artifacts.sync(tmp_path, FILES, OWNED)
    outcome = artifacts.sync(tmp_path, {**FILES, "helm/values.yaml": "w\n"}, OWNED)
    assert outcome.written == ["helm/values.yaml"]
    assert outcome.diffs == [
        {"before_header": "helm/values.yaml", "after_header": "helm/values.yaml", "before": "v\n", "after": "w\n"}
    ]
    assert not list(tmp_path.rglob(".*")), "no temp files are left behind"


def test_a_mode_drift_is_fixed_without_a_diff(tmp_path: Path) -> None:
    artifacts.sync(tmp_path, FILES, OWNED)
    (tmp_path / "plan.yaml").chmod(0o600)
    outcome = artifacts.sync(tmp_path, FILES, OWNED)
    assert outcome.written == ["plan.yaml"]
    assert outcome.diffs == []
    assert (tmp_path / "plan.yaml").stat().st_mode & 0o777 == 0o644


def test_stale_owned_files_go_and_others_stay(tmp_path: Path) -> None:
    artifacts.sync(tmp_path, FILES, OWNED)
    (tmp_path / "manifests" / "99-old.yaml").write_text("old\n", encoding="utf-8")
    (tmp_path / "kubeconfig.yml").write_text("keep\n", encoding="utf-8")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "x.yaml").write_text("keep\n", encoding="utf-8")
    outcome = artifacts.sync(tmp_path, {k: v for k, v in FILES.items() if k != "plan.yaml"}, OWNED)
    assert outcome.removed == ["manifests/99-old.yaml", "plan.yaml"]
    assert tree(tmp_path) == {
        "helm/values.yaml": "v\n",
        "kubeconfig.yml": "keep\n",
        "manifests/01-a.yaml": "a\n",
        "notes/x.yaml": "keep\n",
    }


def test_check_mode_changes_nothing_and_reports_the_same(tmp_path: Path) -> None:
    artifacts.sync(tmp_path, FILES, OWNED)
    (tmp_path / "manifests" / "99-old.yaml").write_text("old\n", encoding="utf-8")
    before = tree(tmp_path)
    wanted = {**FILES, "helm/values.yaml": "w\n", "helm/release.yaml": "r\n"}
    dry = artifacts.sync(tmp_path, wanted, OWNED, check=True)
    assert tree(tmp_path) == before
    real = artifacts.sync(tmp_path, wanted, OWNED)
    assert (dry.written, dry.removed, dry.diffs) == (real.written, real.removed, real.diffs)
    assert tree(tmp_path) == wanted


def test_remove_takes_the_owned_paths_only(tmp_path: Path) -> None:
    artifacts.sync(tmp_path, FILES, OWNED)
    (tmp_path / "kubeconfig.yml").write_text("keep\n", encoding="utf-8")
    assert artifacts.remove(tmp_path, OWNED, check=True) == sorted(FILES)
    assert tree(tmp_path) == {**FILES, "kubeconfig.yml": "keep\n"}
    assert artifacts.remove(tmp_path, OWNED) == sorted(FILES)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kubeconfig.yml"]
    assert artifacts.remove(tmp_path / "missing", OWNED) == []


def test_a_failure_mid_render_leaves_no_half_render(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Render is swapped in whole: a write that fails (the filesystem's own error) leaves neither a mix of
    old and new files nor the temporary folder, and the previous render is gone (it cannot pass for current)."""
    dest = tmp_path / "artifacts"
    artifacts.sync(dest, {"manifests/a.yaml": "a\n", "manifests/b.yaml": "b\n", "plan.yaml": "p\n"}, OWNED)
    (dest / "kubeconfig").write_text("mine\n", encoding="utf-8")
    real, calls = artifacts._write, []

    def failing(path: Path, content: str) -> None:
        calls.append(path)
        if len(calls) == 2:
            raise OSError(36, "File name too long", str(path))
        real(path, content)

    monkeypatch.setattr(artifacts, "_write", failing)
    with pytest.raises(OSError, match="too long"):
        artifacts.sync(dest, {"manifests/a.yaml": "A\n", "manifests/b.yaml": "B\n", "plan.yaml": "P\n"}, OWNED)
    assert sorted(p.name for p in dest.iterdir()) == ["kubeconfig"]
