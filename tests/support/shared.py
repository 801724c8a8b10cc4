"""Where the project's shared/ folder is (the pinned charts, CRDs, CRS and Polycrate's source), without
importing anything heavier: the unit suite's second pass runs in Polycrate's image Python, which lacks the
gate's validators."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class SharedDirMissing(RuntimeError):
    pass


def shared_dir() -> Path:
    path = Path(os.environ.get("ENVOY_SHARED_DIR", ROOT.parent / "shared"))
    if not (path / "crds").is_dir():
        raise SharedDirMissing(
            f"upstream CRDs not found at {path}/crds: the gate cannot run. Check out the project's shared/ folder "
            "beside the repo or set ENVOY_SHARED_DIR."
        )
    return path
