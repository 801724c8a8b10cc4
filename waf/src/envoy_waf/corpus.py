"""Replay the OWASP CRS regression corpus (go-ftw YAML) through a real Envoy + the WAF service (Coraza).

Each stage is judged on what the corpus checks in the log: the rule ids that must / must not fire and the
regexes the log must / must not match. Stages that only check a status (DetectionOnly never blocks) or
expect a client error are counted as `status-only` / `skipped`, never as passes. The requests are built as
go-ftw sends them: header values as UTF-8 bytes, go-ftw's `{{ "x" | repeat N }}` expanded, the body framed
by Content-Length or chunked encoding (none without either). The backend is albedo's (the corpus's):
`POST /reflect` answers with the response its JSON body describes, which is how the RESPONSE-* tests make
a response leak; every stage runs the response phases. The WAF's audit lines (by request id) say which
rules fired; regex checks on the engine's log cannot be judged that way (`regex-only`).

Known limitations come from CRS-CORPUS.md (one row per rule and test ids, with the run it applies to and
why): a listed stage that fails is `known-<kind>`, not `fail`; one that passes is reported as stale; every
other failure is `fail` and printed, so a new one is visible.

    python -m envoy_waf.corpus --crs DIR [--only REQUEST-942] [--floor 0.95]
"""

from __future__ import annotations

import argparse
import base64
import collections
import glob
import json
import re
import socket
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .testbed import Backend, EnvoyProcess, WAFProcess

# The engine settings the corpus README asks for, placed where it says (crs-setup.conf, before the CRS:
# 920400 reads tx.max_file_size in phase 1). DetectionOnly and paranoia level 4 come from the Settings.
CORPUS_SETUP = (
    'SecAction "id:900005,phase:1,nolog,pass,ctl:ruleEngine=DetectionOnly,ctl:ruleRemoveById=910000,'
    "setvar:tx.blocking_paranoia_level=4,setvar:tx.crs_validate_utf8_encoding=1,setvar:tx.arg_name_length=100,"
    "setvar:tx.arg_length=400,setvar:tx.total_arg_length=64000,setvar:tx.max_num_args=255,"
    'setvar:tx.max_file_size=64100,setvar:tx.combined_file_sizes=65535"'
)
# The corpus tests the CRS's own method list (911100 expects DELETE to be flagged), not the service's REST one.
CRS_METHODS = ("GET", "HEAD", "POST", "OPTIONS")
# ... and the CRS's own content types (920420 expects application/cloudevents+json to be flagged), not the
# service's default, which adds every +json type: read from the release's crs-setup.conf.example (900220).
_CRS_CONTENT_TYPES = re.compile(r"^#\s*setvar:'tx\.allowed_request_content_type=([^']*)'", re.MULTILINE)

KNOWN_FILE = Path(__file__).resolve().parents[2] / "CRS-CORPUS.md"
KNOWN_START, KNOWN_END = "<!-- known-limitations:start -->", "<!-- known-limitations:end -->"
KINDS = ("coraza", "http", "envoy")
_REPEAT = re.compile(r'\{\{\s*"([^"]*)"\s*\|\s*repeat\s+(\d+)\s*\}\}')


def crs_content_types(crs: Path) -> list[str]:
    """The CRS release's default allowed request content types, as its crs-setup.conf.example lists them."""
    found = _CRS_CONTENT_TYPES.search((crs / "crs-setup.conf.example").read_text(encoding="utf-8"))
    if not found:
        raise RuntimeError(f"{crs}/crs-setup.conf.example names no tx.allowed_request_content_type")
    return [t.strip("|") for t in found.group(1).split()]


def corpus_settings(crs: Path) -> dict[str, Any]:
    """The WAF settings of a corpus run."""
    return {
        "crs_dir": str(crs),
        "mode": "detect",
        "paranoia_level": 4,
        "allowed_methods": CRS_METHODS,
        "allowed_request_content_types": crs_content_types(crs),
        "setup_directives": CORPUS_SETUP,
        "body_limit": 1_048_576,
        "inspect_response": True,
        "response_body_limit": 1_048_576,
    }


@dataclass(frozen=True)
class Stage:
    rule_id: int
    test_id: int
    index: int
    method: str
    uri: str
    version: str
    headers: tuple[tuple[str, str], ...]  # str holding UTF-8 bytes (surrogateescape: raw bytes round-trip)
    wire_body: bytes  # the bytes after the header block that belong to this request
    body: bytes  # what a server hands the WAF: wire_body without chunked framing
    expect_ids: tuple[int, ...]
    no_expect_ids: tuple[int, ...]
    kind: str  # log | status-only | skipped
    match_regex: tuple[str, ...] = ()
    no_match_regex: tuple[str, ...] = ()

    def header_bytes(self) -> list[tuple[bytes, bytes]]:
        """As a server hands them over: names as sent (the log names REQUEST_HEADERS:Referer), UTF-8 values."""
        return [(k.encode(errors="surrogateescape"), v.encode(errors="surrogateescape")) for k, v in self.headers]


def _ids(log: dict[str, Any], plural: str, singular: str) -> tuple[int, ...]:
    ids = list(log.get(plural) or [])
    if log.get(singular) is not None:
        ids.append(log[singular])
    return tuple(int(i) for i in ids)


def _regexes(log: dict[str, Any], key: str) -> tuple[str, ...]:
    value = log.get(key)
    return () if not value else tuple(value) if isinstance(value, list) else (str(value),)


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
        headers.append((name.decode(errors="surrogateescape").strip(), value.decode(errors="surrogateescape").strip()))
    version = parts[2].decode(errors="surrogateescape").removeprefix("HTTP/")
    return parts[0].decode(errors="surrogateescape"), parts[1].decode(errors="surrogateescape"), version, headers, body


def _dechunk(data: bytes) -> bytes | None:
    out, rest = b"", data
    while True:
        size_line, sep, rest = rest.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            return None
        if not sep:
            return None
        if size == 0:
            return out
        out, rest = out + rest[:size], rest[size + 2 :]


def frame(headers: list[tuple[str, str]], data: bytes) -> tuple[bytes, bytes]:
    """(wire body, body) of a request: chunked encoding wins over Content-Length (RFC 9112 6.3); a server
    reads Content-Length bytes and no more; with neither there is no body."""
    values = {k.lower(): v for k, v in headers}
    if "chunked" in values.get("transfer-encoding", "").lower():
        decoded = _dechunk(data)
        return data, data if decoded is None else decoded
    length = values.get("content-length", "").strip()
    if length.isdigit():
        return data[: int(length)], data[: int(length)]
    return b"", b""


def load(corpus_dir: Path, only: str = "") -> Iterator[Stage]:
    for path in sorted(glob.glob(str(corpus_dir / "tests" / "*" / "*.yaml"))):
        if only and only not in path:
            continue
        doc = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        rule_id = int(doc.get("rule_id") or Path(path).stem)
        for test in doc.get("tests", []):
            for index, stage in enumerate(test.get("stages", [])):
                inp = stage.get("input") or {}
                out = stage.get("output") or {}
                log = out.get("log") or {}
                expect, no_expect = _ids(log, "expect_ids", "expect_id"), _ids(log, "no_expect_ids", "no_expect_id")
                match, no_match = _regexes(log, "match_regex"), _regexes(log, "no_match_regex")
                kind = "log" if expect or no_expect or match or no_match else "status-only"
                if out.get("expect_error"):
                    kind = "skipped"
                if inp.get("encoded_request"):
                    parsed = _parse_raw(base64.b64decode(inp["encoded_request"]))
                    if parsed is None:
                        kind = "skipped"
                        parsed = ("GET", "/", "1.1", [], b"")
                    method, uri, version, header_list, data = parsed
                else:
                    method = str(inp.get("method", "GET"))
                    uri = str(inp.get("uri", "/"))
                    version = str(inp.get("version", "HTTP/1.1")).removeprefix("HTTP/")
                    header_list = [(str(k), str(v)) for k, v in (inp.get("headers") or {}).items()]
                    raw = inp.get("data", "")
                    text = "".join(raw) if isinstance(raw, list) else str(raw or "")
                    # go-ftw renders data as a Go template; the corpus uses sprig's repeat only.
                    text = _REPEAT.sub(lambda m: m.group(1) * int(m.group(2)), text)
                    data = text.encode(errors="surrogateescape")
                    if inp.get("autocomplete_headers", True):
                        names = {k.lower() for k, _ in header_list}
                        if data and "content-type" not in names:
                            header_list.append(("Content-Type", "application/x-www-form-urlencoded"))
                        if data and "content-length" not in names and "transfer-encoding" not in names:
                            header_list.append(("Content-Length", str(len(data))))
                        if "connection" not in names:
                            header_list.append(("Connection", "close"))
                wire_body, body = frame(header_list, data)
                yield Stage(
                    rule_id,
                    int(test.get("test_id", 0)),
                    index,
                    method,
                    uri,
                    version,
                    tuple(header_list),
                    wire_body,
                    body,
                    expect,
                    no_expect,
                    kind,
                    match,
                    no_match,
                )


@dataclass(frozen=True)
class Known:
    """One row of CRS-CORPUS.md's list: a stage that cannot pass in a run, and why."""

    kind: str  # coraza | http | envoy
    runs: frozenset[str]  # envoy
    reason: str


def known_limitations(path: Path = KNOWN_FILE) -> dict[tuple[int, int], Known]:
    """The table between the known-limitations markers: | rule | tests | runs | kind | reason |."""
    text = path.read_text(encoding="utf-8")
    start, end = text.index(KNOWN_START), text.index(KNOWN_END)
    out: dict[tuple[int, int], Known] = {}
    for line in text[start:end].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not cells[0].isdigit():
            continue  # the header, its rule, prose
        rule, tests, runs, kind, reason = cells
        run_set = frozenset(r.strip() for r in runs.split(","))
        if kind not in KINDS or not run_set <= {"envoy"}:
            raise ValueError(f"{path}: bad row {line!r}: kind is one of {KINDS}, runs is envoy")
        for test in tests.split(","):
            key = (int(rule), int(test))
            if key in out:
                raise ValueError(f"{path}: {rule} test {test} is listed twice")
            out[key] = Known(kind, run_set, reason)
    return out


@dataclass
class Report:
    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    unexpected: list[str] = field(default_factory=list)  # failures not in the list
    stale: list[str] = field(default_factory=list)  # listed, but passed
    changed: list[str] = field(default_factory=list)  # answered by Envoy itself, never seen by the WAF

    def add(self, stage: Stage, verdict: str, known: Known | None, detail: str = "") -> None:
        where = f"{stage.rule_id}/{stage.test_id}" + (f"#{stage.index}" if stage.index else "")
        if verdict == "fail" and known is not None:
            verdict = f"known-{known.kind}"
        elif verdict == "fail":
            self.unexpected.append(f"{where} {detail}".strip())
        elif verdict == "pass" and known is not None:
            self.stale.append(where)
        elif verdict == "changed-by-envoy":
            self.changed.append(f"{where} {detail}".strip())
        self.counts[verdict] += 1


def judge(stage: Stage, fired: set[int], log: str | None) -> tuple[str, str]:
    """(verdict, what went wrong) of a stage. `log` is the engine's log of the request, None where it is not
    at hand (through Envoy the WAF logs rule ids and messages, never the matched data the regexes look for):
    then only the rule ids are judged, and a stage that checks regexes alone is `regex-only`."""
    if stage.kind != "log":
        return stage.kind, ""
    if log is None and not (stage.expect_ids or stage.no_expect_ids):
        return "regex-only", ""
    problems = [f"missing {i}" for i in stage.expect_ids if i not in fired]
    problems += [f"unwanted {i}" for i in stage.no_expect_ids if i in fired]
    if log is not None:
        problems += [f"no match for {r!r}" for r in stage.match_regex if not re.search(r, log)]
        problems += [f"unwanted match for {r!r}" for r in stage.no_match_regex if re.search(r, log)]
    return ("fail", "; ".join(problems)) if problems else ("pass", "")


def _run_known(known: Mapping[tuple[int, int], Known], run: str, stage: Stage) -> Known | None:
    item = known.get((stage.rule_id, stage.test_id))
    return item if item is not None and run in item.runs else None


def _send(port: int, stage: Stage, request_id: str) -> int:
    lines = [f"{stage.method} {stage.uri} HTTP/{stage.version}"]
    lines += [f"{k}: {v}" for k, v in stage.headers if k.lower() not in ("x-request-id",)]
    lines.append(f"x-request-id: {request_id}")
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode(errors="surrogateescape") + stage.wire_body
    # Requests Envoy holds open (CONNECT) end at the timeout; large bodies may take the engine seconds.
    timeout = 5 if len(stage.wire_body) < 16384 else 30
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
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


def replay_envoy(crs: Path, corpus: Path, only: str = "") -> Report:
    settings = corpus_settings(crs)
    backend = Backend()
    waf = WAFProcess(settings.pop("crs_dir"), **{**settings, "allowed_methods": list(CRS_METHODS)})
    # A rules test, not a latency one: 920390's 64 KB argument takes the engine seconds at paranoia level 4.
    envoy = EnvoyProcess(
        backend.port, waf.port, preserve_request_id=True, response_body="BUFFERED", message_timeout="30s"
    )
    known = known_limitations()
    report = Report()
    sent: list[tuple[Stage, str, int]] = []
    try:
        for stage in load(corpus, only):
            if stage.kind != "log":
                report.counts[stage.kind] += 1
                continue
            request_id = f"crs-{uuid.uuid4().hex}"
            sent.append((stage, request_id, _send(envoy.port, stage, request_id)))
        time.sleep(0.5)
        fired: dict[str, set[int]] = collections.defaultdict(set)
        for event in waf.events():  # one for the request, one more for the response when rules matched there
            fired[event["request_id"]] |= set(event["rule_ids"])
        seen = {
            line.split('"request_id":"')[1].split('"')[0]
            for line in waf.output().splitlines()
            if '"request_id":"crs-' in line
        }
        for stage, request_id, status in sent:
            verdict, detail = judge(stage, fired[request_id], None)
            item = _run_known(known, "envoy", stage)
            if (
                verdict == "fail"
                and item is None
                and request_id not in seen
                and status in (0, 400, 404, 413, 426, 431, 502, 503)
            ):
                verdict = "changed-by-envoy"  # Envoy answered itself or rejected the request before the WAF
            report.add(stage, verdict, item, f"{detail} (status {status})")
    finally:
        envoy.stop()
        waf.stop()
        backend.stop()
    return report


def pass_rate(counts: Mapping[str, int]) -> float:
    judged = counts.get("pass", 0) + counts.get("fail", 0)
    return counts.get("pass", 0) / judged if judged else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crs", type=Path, required=True, help="CRS release folder (rules/ and tests/)")
    parser.add_argument("--only", default="", help="only corpus files whose path contains this")
    parser.add_argument("--floor", type=float, default=0.0, help="fail below this pass rate (pass / (pass+fail))")
    args = parser.parse_args()
    corpus = args.crs / "tests" / "regression"
    report = replay_envoy(args.crs, corpus, args.only)
    rate = pass_rate(report.counts)
    for line in report.unexpected:
        print(f"FAIL (not a known limitation) {line}", file=sys.stderr)
    for line in report.stale:
        print(f"STALE (listed in CRS-CORPUS.md, but passed) {line}", file=sys.stderr)
    for line in report.changed:
        print(f"CHANGED BY ENVOY (answered before the WAF) {line}", file=sys.stderr)
    print(json.dumps({"mode": "envoy", **dict(sorted(report.counts.items())), "pass_rate": round(rate, 4)}))
    return 0 if rate >= args.floor else 1


if __name__ == "__main__":
    sys.exit(main())
