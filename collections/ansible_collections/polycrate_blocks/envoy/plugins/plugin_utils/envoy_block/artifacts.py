"""Write a render into the artifacts folder in one pass: stale files removed, nothing touched when nothing
changed.

The folder is shared (Polycrate keeps the block's kubeconfig and inventory there), so only the paths
`render` owns are ever written or removed. A changed render is written whole into a temporary folder inside
the artifacts folder (the same filesystem, so the swap is a rename), then swapped in owned path by owned
path. A failure at any step (the filesystem's own included) leaves no render at all: the temporary folder
goes, and so does the previous render, which cannot pass for the current config. Nothing is touched in check mode, and
the outcome says the same either way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

FILE_MODE = 0o644
DIR_MODE = 0o755


@dataclass
class Outcome:
    """What a sync did (or, in check mode, would do); paths relative to the artifacts folder."""

    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    diffs: list[dict[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.written or self.removed)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


# A file is written under a temporary name beside it (.<name>.<8 random characters>), then renamed.
_RANDOM = 8


def written_name_bytes(name: str) -> int:
    """The bytes of the longest name a file called `name` has while it is written (its temporary name): the
    filesystem's limit on one path component applies to that, not only to `name` (limits.plan_problems)."""
    return len(f".{name}.".encode()) + _RANDOM


def _write(path: Path, content: str) -> None:
    for folder in reversed([p for p in path.parents if not p.exists()]):
        folder.mkdir()
        folder.chmod(DIR_MODE)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(content)
        os.chmod(temp, FILE_MODE)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def owned_files(dest: Path, owned: Iterable[str]) -> list[str]:
    """Files under `dest` that render owns (its folders, and its files at the top), relative and sorted."""
    found: set[str] = set()
    for name in owned:
        path = dest / name
        if path.is_file():
            found.add(name)
        elif path.is_dir():
            found.update(str(p.relative_to(dest)) for p in path.rglob("*") if p.is_file() or p.is_symlink())
    return sorted(found)


TEMP_PREFIX = ".render-"


def sync(dest: Path, files: Mapping[str, str], owned: Iterable[str], check: bool = False) -> Outcome:
    """Make the owned part of `dest` hold exactly `files` (relative path -> content)."""
    owned = list(owned)
    outcome = Outcome()
    for rel, content in files.items():
        path = dest / rel
        before = _read(path) if path.is_file() else None
        if before == content and (path.stat().st_mode & 0o777) == FILE_MODE:
            continue
        outcome.written.append(rel)
        if before != content:
            outcome.diffs.append({"before_header": rel, "after_header": rel, "before": before or "", "after": content})
    for rel in owned_files(dest, owned):
        if rel not in files:
            outcome.removed.append(rel)
            before = "" if (dest / rel).is_symlink() or not (dest / rel).is_file() else _read(dest / rel) or ""
            gone = {"before_header": rel, "after_header": f"{rel} (removed)", "before": before, "after": ""}
            outcome.diffs.append(gone)
    if outcome.changed and not check:
        _swap_in(dest, files, owned, set(files) - set(outcome.written))
    return outcome


def _swap_in(dest: Path, files: Mapping[str, str], owned: list[str], unchanged: set[str]) -> None:
    """Write `files` whole into a temporary folder in `dest`, then move each owned path into place. An
    unchanged file is hard-linked, not rewritten: it keeps its inode and mtime (tools watching it see no change)."""
    for folder in reversed([p for p in [dest, *dest.parents] if not p.exists()]):
        folder.mkdir()
        folder.chmod(DIR_MODE)
    for stale in dest.glob(f"{TEMP_PREFIX}*"):  # an earlier run killed mid-write
        shutil.rmtree(stale, ignore_errors=True)
    temp = Path(tempfile.mkdtemp(dir=dest, prefix=TEMP_PREFIX))
    try:
        for rel, content in files.items():
            if rel in unchanged:
                try:
                    for folder in reversed([p for p in (temp / rel).parents if not p.exists()]):
                        folder.mkdir()
                        folder.chmod(DIR_MODE)
                    os.link(dest / rel, temp / rel)
                    continue
                except OSError:
                    pass  # no hard links here: write it
            _write(temp / rel, content)
        for name in owned:
            old, new = dest / name, temp / name
            if old.is_dir() and not old.is_symlink():
                old.rename(temp / f"{name}.old")
            elif old.exists() or old.is_symlink():
                old.unlink()
            if new.exists():
                new.rename(old)
    except BaseException:
        # The owned paths may now be half old, half new: none of it may pass for a render.
        with contextlib.suppress(OSError):  # the original error says why; the caller removes what is left
            remove(dest, owned)
        raise
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def remove(dest: Path, owned: Iterable[str], check: bool = False) -> list[str]:
    """Remove a previous render (the owned folders and files), so it cannot pass for the current config."""
    owned = list(owned)
    gone = owned_files(dest, owned)
    if not check:
        for name in owned:
            path = dest / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
    return gone
