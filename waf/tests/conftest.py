"""Real Envoy + the WAF + a backend on loopback. The CRS comes from ../shared/crs (never copied)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from envoy_waf.testbed import Backend, EnvoyProcess, WAFProcess

ROOT = Path(__file__).resolve().parents[2]
CRS = Path(os.environ.get("CRS_DIR", ROOT.parent / "shared" / "crs" / "v4.28.0"))


def crs_dir() -> str:
    if not (CRS / "rules").is_dir():
        pytest.fail(
            f"OWASP CRS v4.28.0 not found at {CRS}: check out the project's shared/ beside the repo "
            "or set CRS_DIR. The WAF tests cannot run without it."
        )
    return str(CRS)


@pytest.fixture(scope="session")
def crs() -> str:
    return crs_dir()


@pytest.fixture(scope="module")
def backend() -> Iterator[Backend]:
    b = Backend()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def waf() -> Iterator[WAFProcess]:
    w = WAFProcess(crs_dir())
    yield w
    w.stop()


@pytest.fixture(scope="module")
def envoy(backend: Backend, waf: WAFProcess) -> Iterator[EnvoyProcess]:
    e = EnvoyProcess(backend.port, waf.port)
    yield e
    e.stop()
