"""Replay the OWASP CRS regression corpus (go-ftw YAML) against the engine, or through Envoy + the WAF.

Each stage is judged on what the corpus checks: the rule ids that must / must not fire. Stages that
only check a status (DetectionOnly never blocks), the response, or an expected client error are counted
as `status-only` / `skipped`, never as passes. `nginx-overrides.yaml` lists where libmodsecurity3 is
known to differ: a stage that matches its override is a `known-deviation`.

    python -m envoy_waf.corpus --crs DIR [--envoy] [--only REQUEST-942] [--floor 0.95]
"""

from __future__ import annotations

import argparse
import base64
import collections
import glob
import json
import socket
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .engine import Engine
from .settings import Settings, directives

# The engine settings the corpus README asks for (DetectionOnly, blocking paranoia level 4, limits).
CORPUS_SETUP = (
    'SecAction "id:900005,phase:1,nolog,pass,ctl:ruleEngine=DetectionOnly,ctl:ruleRemoveById=910000,'
    "setvar:tx.blocking_paranoia_level=4,setvar:tx.crs_validate_utf8_encoding=1,setvar:tx.arg_name_length=100,"
    "setvar:tx.arg_length=400,setvar:tx.total_arg_length=64000,setvar:tx.max_num_args=255,"
    'setvar:tx.max_file_size=64100,setvar:tx.combined_file_sizes=65535"'
)


@dataclass(frozen=True)
class Stage:
    rule_id: int
    test_id: int
    index: int
    method: str
    uri: str
    version: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    expect_ids: tuple[int, ...]
    no_expect_ids: tuple[int, ...]
    kind: str  # log | status-only | skipped


def _ids(log: dict[str, Any], plural: str, singular: str) -> tuple[int, ...]:
    ids = list(log.get(plural) or [])
    if log.get(singular) is not None:
        ids.append(log[singular])
    return tuple(int(i) for i in ids)


def _parse_raw(raw: bytes) -> tuple[str, str, str, list[tuple[str, str]], bytes] | None:
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ")
    if len(parts) != 3:
        return None
    headers = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            return None
        headers.append((name.decode("latin-1").strip(), value.decode("latin-1").strip()))
    version = parts[2].decode("latin-1").removeprefix("HTTP/")
    return parts[0].decode("latin-1"), parts[1].decode("latin-1"), version, headers, body


def load(corpus_dir: Path, only: str = "") -> Iterator[Stage]:
    for path in sorted(glob.glob(str(corpus_dir / "tests" / "*" / "*.yaml"))):
        if only and only not in path:
            continue
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        rule_id = int(doc.get("rule_id") or Path(path).stem)
        for test in doc.get("tests", []):
            for index, stage in enumerate(test.get("stages", [])):
                inp = stage.get("input", {})
                out = stage.get("output", {})
                log = out.get("log") or {}
                expect, no_expect = _ids(log, "expect_ids", "expect_id"), _ids(log, "no_expect_ids", "no_expect_id")
                kind = "log" if expect or no_expect else "status-only"
                if out.get("expect_error") or out.get("response_contains"):
                    kind = "skipped"
                if inp.get("encoded_request"):
                    parsed = _parse_raw(base64.b64decode(inp["encoded_request"]))
                    if parsed is None:
                        kind = "skipped"
                        parsed = ("GET", "/", "1.1", [], b"")
                    method, uri, version, header_list, body = parsed
                else:
                    method = str(inp.get("method", "GET"))
                    uri = str(inp.get("uri", "/"))
                    version = str(inp.get("version", "HTTP/1.1")).removeprefix("HTTP/")
                    header_list = [(str(k), str(v)) for k, v in (inp.get("headers") or {}).items()]
                    data = inp.get("data", "")
                    body = ("".join(data) if isinstance(data, list) else str(data or "")).encode(
                        "utf-8", "surrogateescape"
                    )
                    if inp.get("autocomplete_headers", True):
                        names = {k.lower() for k, _ in header_list}
                        if body and "content-type" not in names:
                            header_list.append(("Content-Type", "application/x-www-form-urlencoded"))
                        if body and "content-length" not in names:
                            header_list.append(("Content-Length", str(len(body))))
                        if "connection" not in names:
                            header_list.append(("Connection", "close"))
                yield Stage(
                    rule_id,
                    int(test.get("test_id", 0)),
                    index,
                    method,
                    uri,
                    version,
                    tuple(header_list),
                    body,
                    expect,
                    no_expect,
                    kind,
                )


def overrides(corpus_dir: Path) -> dict[tuple[int, int], dict[str, Any]]:
    path = corpus_dir / "nginx-overrides.yaml"
    out: dict[tuple[int, int], dict[str, Any]] = {}
    if path.is_file():
        for item in (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("test_overrides", []):
            for test_id in item.get("test_ids", [item.get("test_id")]):
                out[(int(item["rule_id"]), int(test_id))] = item.get("output") or {}
    return out


def judge(stage: Stage, fired: set[int], override: dict[str, Any] | None) -> str:
    if stage.kind != "log":
        return stage.kind
    ok = set(stage.expect_ids) <= fired and not (set(stage.no_expect_ids) & fired)
    if ok:
        return "pass"
    if override is not None:
        log = override.get("log") or {}
        exp, no = set(_ids(log, "expect_ids", "expect_id")), set(_ids(log, "no_expect_ids", "no_expect_id"))
        if (exp or no) and exp <= fired and not (no & fired):
            return "known-deviation"
        if not (exp or no):
            return "known-deviation"  # the override only changes the status: libmodsecurity3 differs there
    return "fail"


def replay_engine(crs: Path, corpus: Path, only: str = "") -> collections.Counter[str]:
    engine = Engine(
        directives(
            Settings(
                crs_dir=str(crs), mode="detect", paranoia_level=4, extra_directives=CORPUS_SETUP, body_limit=1_048_576
            )
        )
    )
    known = overrides(corpus)
    counts: collections.Counter[str] = collections.Counter()
    for stage in load(corpus, only):
        if stage.kind != "log":
            counts[stage.kind] += 1
            continue
        headers = [(k.lower().encode("latin-1"), v.encode("latin-1", "replace")) for k, v in stage.headers]
        verdict = engine.evaluate(
            method=stage.method,
            uri=stage.uri,
            http_version=stage.version,
            headers=headers,
            body=stage.body or None,
            client=("127.0.0.1", 40000),
            server=("127.0.0.1", 80),
        )
        counts[judge(stage, set(verdict.rule_ids), known.get((stage.rule_id, stage.test_id)))] += 1
    return counts


def _send(port: int, stage: Stage, request_id: str) -> int:
    lines = [f"{stage.method} {stage.uri} HTTP/{stage.version}"]
    lines += [f"{k}: {v}" for k, v in stage.headers if k.lower() not in ("x-request-id",)]
    lines.append(f"x-request-id: {request_id}")
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace") + stage.body
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(raw)
        data = b""
        try:
            while b"\r\n\r\n" not in data and (chunk := sock.recv(65536)):
                data += chunk
        except OSError:
            pass
    try:
        return int(data.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0


def replay_envoy(crs: Path, corpus: Path, only: str = "") -> collections.Counter[str]:
    from .testbed import Backend, EnvoyProcess, WAFProcess  # noqa: PLC0415 - only this mode needs them

    backend = Backend()
    waf = WAFProcess(str(crs), mode="detect", paranoia_level=4, extra_directives=CORPUS_SETUP, body_limit=1_048_576)
    envoy = EnvoyProcess(backend.port, waf.port, preserve_request_id=True)
    known = overrides(corpus)
    counts: collections.Counter[str] = collections.Counter()
    sent: list[tuple[Stage, str, int]] = []
    try:
        for stage in load(corpus, only):
            if stage.kind != "log":
                counts[stage.kind] += 1
                continue
            request_id = f"crs-{uuid.uuid4().hex}"
            sent.append((stage, request_id, _send(envoy.port, stage, request_id)))
        time.sleep(0.5)
        fired: dict[str, set[int]] = {}
        for event in waf.events():
            fired[event["request_id"]] = set(event["rule_ids"])
        seen = {
            line.split('"request_id": "')[1].split('"')[0]
            for line in waf.output().splitlines()
            if '"request_id": "crs-' in line
        }
        for stage, request_id, status in sent:
            verdict = judge(stage, fired.get(request_id, set()), known.get((stage.rule_id, stage.test_id)))
            if verdict == "fail" and request_id not in seen and status in (0, 400, 404, 413, 426, 431, 502, 503):
                verdict = "changed-by-envoy"  # Envoy answered itself or rejected the request before the WAF
            counts[verdict] += 1
    finally:
        envoy.stop()
        waf.stop()
        backend.stop()
    return counts


def pass_rate(counts: Mapping[str, int]) -> float:
    judged = counts.get("pass", 0) + counts.get("fail", 0)
    return counts.get("pass", 0) / judged if judged else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crs", type=Path, required=True, help="CRS release folder (rules/ and tests/)")
    parser.add_argument("--envoy", action="store_true", help="through a real Envoy + the WAF service")
    parser.add_argument("--only", default="", help="only corpus files whose path contains this")
    parser.add_argument("--floor", type=float, default=0.0, help="fail below this pass rate (pass / (pass+fail))")
    args = parser.parse_args()
    corpus = args.crs / "tests" / "regression"
    counts = (replay_envoy if args.envoy else replay_engine)(args.crs, corpus, args.only)
    rate = pass_rate(counts)
    print(
        json.dumps(
            {"mode": "envoy" if args.envoy else "engine", **dict(sorted(counts.items())), "pass_rate": round(rate, 4)}
        )
    )
    return 0 if rate >= args.floor else 1


if __name__ == "__main__":
    sys.exit(main())
