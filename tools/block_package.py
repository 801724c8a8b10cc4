#!/usr/bin/env python3
"""Copy what a user of the block needs into a folder, for `polycrate block push` (and the Polycrate tests).

Polycrate v0.23.3 packs the whole block folder with a plain directory walk (cmd/oci.go layerFromDir, no ignore
file) and fails on a symlink; it also hashes the folder on every load. A working copy holds .venv, .tools,
artifacts and the tests, so the block is pushed from a folder this script fills: the block's runtime files,
README and the docs/ pages it links, changelog, examples' configs, the WAF image's build context (what the
waf-image action builds: waf/Dockerfile and the Go sources it compiles, no tests), nothing built.

    tools/block_package.py DEST    (DEST must not exist or be empty)
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("block.poly", "CHANGELOG.poly", "README.md", "examples.poly", "config.schema.json", "ansible.cfg")
FOLDERS = ("collections", "docs", "inventory", "playbooks", "roles", "templates")
SKIP_DIRS = frozenset({"__pycache__"})
# The WAF image's build context (waf/Dockerfile `COPY . .`, then `go build ./cmd/envoy-waf`): the Dockerfile and
# what it copies and compiles; not the tests, nor third_party/coraza, which coraza.sh lays out in the build.
WAF_FILES = ("waf/Dockerfile", "waf/.dockerignore", "waf/go.mod", "waf/go.sum", "waf/BUILD.md")
WAF_FOLDERS = ("waf/cmd", "waf/internal", "waf/third_party")


def _waf_source(rel: Path) -> bool:
    return (
        not rel.name.endswith("_test.go")
        and "testdata" not in rel.parts
        and rel.parts[:3]
        != (
            "waf",
            "third_party",
            "coraza",
        )
    )


def package_files(root: Path = ROOT) -> Iterator[Path]:
    """The files of the package, relative to `root`, in a stable order."""
    for name in FILES:
        yield Path(name)
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and not SKIP_DIRS & set(rel.parts) and path.suffix != ".pyc":
                yield rel
    # The examples' configs (examples.poly carries them too); their rendered output is documentation.
    yield from (p.relative_to(root) for p in sorted((root / "examples").glob("*/config.yml")))
    yield from (Path(name) for name in WAF_FILES)
    for folder in WAF_FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            rel = path.relative_to(root)
            if path.is_file() and _waf_source(rel) and not SKIP_DIRS & set(rel.parts):
                yield rel


def stage(dest: Path, root: Path = ROOT) -> list[Path]:
    if dest.exists() and any(dest.iterdir()):
        raise SystemExit(f"block_package: {dest} is not empty; give a new folder")
    copied = []
    for rel in package_files(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)  # copies a symlink's target: the package holds no links
        copied.append(rel)
    return copied


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dest", type=Path)
    args = parser.parse_args(argv)
    files = stage(args.dest)
    size = sum((args.dest / rel).stat().st_size for rel in files)
    print(f"{len(files)} files, {size // 1024} KB in {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
