"""Run Envoy Gateway's own translator: `egctl experimental translate` v1.9.1, built by `make tools`.

One call takes one multi-document YAML file and returns, as JSON, the Gateway API objects with the status
the translator computed (`--to gateway-api`) and one Envoy admin config dump per xDS IR key (`--to xds`).
Input kinds egctl does not know fail the whole run, so the caller filters (see TRANSLATOR_KINDS).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT

EGCTL = Path(os.environ.get("ENVOY_EGCTL", ROOT / ".tools/bin/egctl"))
VERSION = "v1.9.1"
# One translation takes 1-3 s on the 2-core CI machine (most of it egctl loading its CRD schemas).
TIMEOUT_SECONDS = 60.0

# A run allocates a few hundred MB and exits: without the garbage collector (bounded by a memory limit)
# it needs a third less CPU (measured: 1.3 s instead of 2.3 s user for the every-protocol input).
_ENV = {**os.environ, "GOGC": "off", "GOMEMLIMIT": "1GiB"}

# The kinds egctl's loader (internal/gatewayapi/resource/load.go) turns into translator input. Every other
# kind is either unknown to it (the run fails) or read and dropped (Deployment, EndpointSlice, ...).
TRANSLATOR_KINDS = frozenset(
    {
        "Namespace",
        "Service",
        "Secret",
        "ConfigMap",
        "GatewayClass",
        "Gateway",
        "HTTPRoute",
        "GRPCRoute",
        "TLSRoute",
        "TCPRoute",
        "UDPRoute",
        "ReferenceGrant",
        "BackendTLSPolicy",
        "EnvoyProxy",
        "ClientTrafficPolicy",
        "BackendTrafficPolicy",
        "SecurityPolicy",
        "EnvoyExtensionPolicy",
        "EnvoyPatchPolicy",
        "HTTPRouteFilter",
        "Backend",
    }
)


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml when present: inputs are dumped per run


class TranslatorUnavailableError(RuntimeError):
    """egctl is missing or not the pinned version: the gate cannot run (never a skip)."""


class TranslatorError(RuntimeError):
    """egctl refused the input (schema validation, unknown kind, ...) or did not finish in time."""


@cache
def egctl() -> Path:
    """The pinned egctl, or a clear error saying how to get it."""
    if not (EGCTL.is_file() and os.access(EGCTL, os.X_OK)):
        raise TranslatorUnavailableError(
            f"egctl not found at {EGCTL}: the translator gate needs Envoy Gateway's egctl {VERSION}. "
            "Run `make tools` (tools/build-go.sh builds it from the pinned Go module) or set ENVOY_EGCTL."
        )
    found = subprocess.run(
        [str(EGCTL), "version", "--remote=false"], capture_output=True, text=True, timeout=30, check=False
    ).stdout.strip()
    if found != VERSION:
        raise TranslatorUnavailableError(
            f"{EGCTL} reports version {found!r}, the gate is pinned to {VERSION}: run `make tools`."
        )
    return EGCTL


def translate(objects: Sequence[Mapping[str, Any]], timeout: float = TIMEOUT_SECONDS) -> dict[str, Any]:
    """Translate one set of objects; returns egctl's JSON (gatewayClass, gateways, ..., xds)."""
    binary = egctl()
    with tempfile.TemporaryDirectory(prefix="translator-gate-") as tmp:
        path = Path(tmp) / "input.yaml"
        documents = yaml.dump_all([dict(o) for o in objects], Dumper=_DUMPER, sort_keys=True)
        path.write_text(documents, encoding="utf-8")
        command = [str(binary), "x", "translate", "--from", "gateway-api", "--to", "gateway-api,xds"]
        command += ["--output", "json", "--file", str(path)]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False, env=_ENV)
        except subprocess.TimeoutExpired as exc:
            raise TranslatorError(f"egctl x translate did not finish within {timeout:.0f} s") from exc
    if done.returncode != 0:
        raise TranslatorError(f"egctl x translate refused the input: {(done.stderr or done.stdout).strip()}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def translate_all(inputs: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """Several independent translations, two at a time (the CI machine has two cores)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(translate, inputs))
