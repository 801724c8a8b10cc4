"""The WAF's own judgement of its settings at render: `envoy-waf --check` loads the rendered settings and
builds the engine from them (the CRS and waf.extra_directives, as the service does when it starts), so a
render that passes is a WAF that starts. Run when the binary is at hand (waf/bin/envoy-waf from `make
waf-build`, or envoy-waf beside the Python that runs the block); otherwise seclang.py's structural check is
all there is (docs/waf.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from .model import Problem
from .paths import BLOCK_ROOT

TIMEOUT = 120  # seconds: the CRS compiles in a few
CONFIG_FILE = "waf.yaml"  # components/waf.CONFIG_FILE (components are not imported here: arrows point down)


def binary() -> Path | None:
    """The envoy-waf binary to ask: $ENVOY_WAF_BINARY, waf/bin/envoy-waf, or one beside the Python, or None."""
    candidates = [os.environ.get("ENVOY_WAF_BINARY", ""), str(BLOCK_ROOT / "waf/bin/envoy-waf")]
    candidates.append(str(Path(sys.executable).parent / "envoy-waf"))
    found = shutil.which("envoy-waf")
    if found:
        candidates.append(found)
    for candidate in candidates:
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


def crs() -> Path | None:
    """The CRS the image ships, where the machine has it ($ENVOY_WAF_CRS, or ../shared/crs beside the block)."""
    for candidate in (os.environ.get("ENVOY_WAF_CRS", ""), str(BLOCK_ROOT.parent / "shared/crs/v4.28.0")):
        if candidate and (Path(candidate) / "rules" / "REQUEST-901-INITIALIZATION.conf").is_file():
            return Path(candidate)
    return None


def problems(settings_yaml: str, path: str = "config.waf", tool: Path | None = None) -> list[Problem]:
    """What `envoy-waf --check` says of the settings file (with crs_dir pointed at a local CRS, else at an
    empty stand-in: then only extra_directives and the settings are compiled). [] when it accepts them or no
    binary is at hand."""
    tool = tool or binary()
    if tool is None:
        return []
    settings: dict[str, Any] = yaml.safe_load(settings_yaml)
    with tempfile.TemporaryDirectory(prefix="envoy-waf-check-") as temp:
        rules = crs()
        if rules is None:
            rules = Path(temp) / "crs"
            (rules / "rules").mkdir(parents=True)
            (rules / "rules" / "REQUEST-901-INITIALIZATION.conf").write_text("", encoding="utf-8")
        file = Path(temp) / "waf.yaml"
        file.write_text(yaml.safe_dump({**settings, "crs_dir": str(rules)}), encoding="utf-8")
        try:
            done = subprocess.run(
                [str(tool), "--check", "--config", str(file)],
                capture_output=True,
                text=True,
                check=False,
                timeout=TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return [Problem(path, f"envoy-waf --check did not finish in {TIMEOUT} s; simplify waf.extra_directives")]
    if done.returncode == 0:
        return []
    said = " ".join(done.stderr.replace(str(file), "waf.yaml").split())[:400] or f"exit {done.returncode}"
    return [Problem(path, f"the WAF refuses these settings ({said}); it would not start: fix the key it names")]


def plan_problems(steps: Any) -> list[Problem]:
    """The binary's verdict on the WAF settings a plan renders (its steps), when they carry extra directives
    (the structural check already ran in validation): what render and install ask before writing or applying."""
    for step in steps:
        data = step.obj.get("data") or {}
        if step.kind == "ConfigMap" and CONFIG_FILE in data:
            settings = yaml.safe_load(data[CONFIG_FILE])
            if isinstance(settings, dict) and settings.get("extra_directives"):
                return problems(data[CONFIG_FILE], "config.waf.extra_directives")
    return []
