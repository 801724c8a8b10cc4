"""`make waf-efficacy`: what the WAF blocks and what it lets through, on the settings the block renders.

Every corpus goes through a real Envoy and the WAF for each paranoia level (PL1 to PL4, no curated
exclusions) and each shipped profile, the WAF started on the settings file the block renders for that
config (tools/waf_settings.py, the builder `make render` runs; only crs_dir, listen, metrics_port and
workers are set for the machine), Envoy sending headers and the buffered body as the block's policy asks.

Corpora (waf/corpora/README.md has their sources and licences), each split into a tuning half and a
held-out half by a hash of its ids (traffic.split_of):

- benign-modern: requests applications send today (envoy_waf.benign); a blocked one is a false positive. Its
  held-out half was read while the curated exclusions were tuned (2026-12-06), so the whole corpus counts as
  tuning data now (WHOLE);
- benign-fresh: a second benign corpus written after the exclusions were frozen (envoy_waf.fresh), from
  other texts and templates: held out until the third tuning round read it (2026-12-07), tuning data since;
- benign-third: a third benign corpus of other kinds of requests (envoy_waf.third: OAuth flows, API
  documents, infrastructure as code, CI, chat, bulk uploads, S3, JSON:API, kubectl patches, other
  webhooks, searches in many languages), written before the WAF parsed `+json` types: held out until the
  third tuning round read it, tuning data since;
- benign-fourth: a fourth benign corpus of other API styles, frameworks and scripts (envoy_waf.fourth: OData,
  JSON-RPC, SOQL, OpenTelemetry, FHIR, ActivityPub, Spring/ASP.NET Core/JSF/Phoenix forms, search DSLs,
  notebooks and dashboards, other webhooks), written and committed before anything was measured on it: held
  out until its false positives were read after the third round, tuning data since;
- benign-fifth: a fifth benign corpus (envoy_waf.fifth: carts and reviews, chat, CI/CD and infrastructure
  APIs, calendar and mail, translation payloads, log searches, helpdesk tickets with SQL and shell), written
  and committed before the fourth round changed any exclusion: the held-out benign set, whole;
- payloadsallthethings: a public payload collection (envoy_waf.payloads); a passed one is a miss;
- crs-regression: the CRS regression corpus's positive stages (those expecting a rule of REQUEST-9xx to
  fire), read from ../shared/crs, less the stages CRS-CORPUS.md lists as changed by Envoy.

A request is `blocked` when the WAF denied it (its audit line says block or refused, or the answer is the
block status), `passed` when the backend answered, and `other` when Envoy answered itself (400, 413, ...:
never judged by the WAF, left out of the rates). The report prints, per configuration, corpus and half,
attacks blocked and benign passed, per family, and the rules behind each false positive; `--docs` writes the
table into docs/waf.md between its markers.

    python -m envoy_waf.efficacy --crs DIR [--configs pl1,pl2,profile-pl2] [--corpora a,b] [--sample N] [--docs FILE]
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import dataclasses
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import corpus as crs_corpus
from .testbed import Backend, EnvoyProcess, WAFProcess
from .traffic import CORPORA, Request, read, split_of

REPO = Path(__file__).resolve().parents[3]
BENIGN = ("benign-modern", "benign-fresh", "benign-third", "benign-fourth", "benign-fifth")
# Corpora measured whole as one half: benign-modern, benign-fresh, benign-third and benign-fourth were read while
# tuning (the first to fourth rounds; benign-fourth's false positives were read after the third), benign-fifth
# is held out.
WHOLE = {
    "benign-modern": "tuning",
    "benign-fresh": "tuning",
    "benign-third": "tuning",
    "benign-fourth": "tuning",
    "benign-fifth": "heldout",
}
ATTACKS = ("payloadsallthethings",)
CRS_NAME = "crs-regression"
# Rules that only add up or report the score: never the reason a request matched.
SCORING = frozenset({949110, 949111, 959100, 980170, 980099})
TOP = 20  # false positives' rules listed per configuration
DOCS_START, DOCS_END = "<!-- waf-efficacy:start -->", "<!-- waf-efficacy:end -->"


@dataclass(frozen=True)
class Config:
    """A configuration measured: a name and the block config keys it sets (tools/waf_settings.py --set)."""

    name: str
    sets: tuple[str, ...]
    level: int
    override: str | None = None  # a config file, as `make render CONFIG=` takes


LEVELS = tuple(
    Config(f"pl{n}", ("waf.enabled=true", f"waf.paranoia_level={n}", "waf.curated_exclusions=false"), n)
    for n in (1, 2, 3, 4)
)
# The shipped profiles: a paranoia level with the block's curated exclusions (the default).
PROFILES = tuple(Config(f"profile-pl{n}", ("waf.enabled=true", f"waf.paranoia_level={n}"), n) for n in (2, 3))
CONFIGS = {c.name: c for c in LEVELS + PROFILES}


def block_python() -> str:
    return os.environ.get("BLOCK_PYTHON") or str(REPO / ".venv" / "bin" / "python")


def rendered_settings(config: Config) -> dict[str, Any]:
    """The settings file the block renders for `config`, as a mapping."""
    cmd = [block_python(), str(REPO / "tools" / "waf_settings.py")]
    if config.override:
        cmd += ["--override", config.override]
    for s in config.sets:
        cmd += ["--set", s]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"rendering the WAF settings of {config.name} failed: {done.stderr.strip()}")
    settings = yaml.safe_load(done.stdout)
    if not isinstance(settings, dict):
        raise RuntimeError(f"{config.name}: the rendered settings are not a mapping")
    return settings


def crs_requests(crs: Path) -> list[Request]:
    """The CRS regression corpus's positive request stages as requests (attacks), less those Envoy changes."""
    known = crs_corpus.known_limitations()
    out = []
    for stage in crs_corpus.load(crs / "tests" / "regression"):
        if stage.kind != "log" or not stage.expect_ids or (stage.rule_id, stage.test_id) in known:
            continue
        if not 911000 <= stage.rule_id < 950000:  # request rules only (RESPONSE-95x need a leaking backend)
            continue
        rid = f"{stage.rule_id}-{stage.test_id}-{stage.index}"
        family = _crs_family(stage.rule_id)
        headers = tuple((k, v) for k, v in stage.headers if k.lower() != "x-request-id")
        req = Request(
            CRS_NAME, rid, family, split_of(CRS_NAME, rid), stage.method, stage.uri, headers, stage.wire_body, True
        )
        out.append(req if stage.version == "1.1" else _with_version(req, stage.version))
    return out


_VERSIONS: dict[str, str] = {}


def _with_version(req: Request, version: str) -> Request:
    _VERSIONS[req.id] = version
    return req


CRS_FAMILIES = {
    911: "method",
    913: "scanner",
    920: "protocol",
    921: "protocol-attack",
    922: "multipart",
    930: "lfi",
    931: "rfi",
    932: "rce",
    933: "php",
    934: "generic",
    941: "xss",
    942: "sqli",
    943: "session-fixation",
    944: "java",
}


def _crs_family(rule_id: int) -> str:
    return CRS_FAMILIES.get(rule_id // 1000, str(rule_id // 1000))


ALL_CORPORA = (*BENIGN, *ATTACKS, CRS_NAME)


def load_corpora(crs: Path, sample: int = 0, corpora: Sequence[str] = ALL_CORPORA) -> list[Request]:
    """Every corpus (or those named); with `sample`, every k-th request of each so that about `sample` of each
    remain."""
    unknown = set(corpora) - set(ALL_CORPORA)
    if unknown:
        raise ValueError(f"unknown corpora: {', '.join(sorted(unknown))} (of {', '.join(ALL_CORPORA)})")
    groups = [[_whole(r) for r in read(CORPORA / f"{n}.jsonl", attack=False)] for n in BENIGN if n in corpora]
    groups += [list(read(CORPORA / f"{n}.jsonl", attack=True)) for n in ATTACKS if n in corpora]
    if CRS_NAME in corpora:
        groups.append(crs_requests(crs))
    out: list[Request] = []
    for group in groups:
        step = max(1, len(group) // sample) if sample else 1
        out += group[::step]
    return out


def _whole(req: Request) -> Request:
    """A request of a corpus measured whole, in the half that corpus counts as (WHOLE)."""
    split = WHOLE.get(req.corpus)
    return dataclasses.replace(req, split=split) if split else req


def _send(port: int, req: Request, request_id: str) -> int:
    version = _VERSIONS.get(req.id, "1.1") if req.corpus == CRS_NAME else "1.1"
    lines = [f"{req.method} {req.path} HTTP/{version}"]
    lines += [f"{k}: {v}" for k, v in req.headers]
    if not any(k.lower() == "connection" for k, _ in req.headers):
        lines.append("Connection: close")
    lines.append(f"x-request-id: {request_id}")
    raw = ("\r\n".join(lines) + "\r\n\r\n").encode(errors="surrogateescape") + req.body
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(raw)
            data = b""
            while b"\r\n\r\n" not in data and (chunk := sock.recv(65536)):
                data += chunk
    except OSError:
        return 0
    try:
        return int(data.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return 0


@dataclass(frozen=True)
class Outcome:
    request: Request
    verdict: str  # blocked | passed | other
    status: int
    rules: tuple[int, ...]
    matched: tuple[str, ...] = ()  # "<rule id> <VARIABLE:key>" from the audit line


def run(config: Config, crs: Path, requests: Sequence[Request], parallel: int = 4) -> list[Outcome]:
    """Every request through Envoy and the WAF on the block's settings for `config`."""
    settings = rendered_settings(config)
    settings.update({"crs_dir": str(crs), "metrics_port": 0})
    settings.pop("listen", None)
    settings.setdefault("workers", 2)
    block_status = int(settings.get("block_status", 403))
    backend = Backend()
    waf = WAFProcess(settings.pop("crs_dir"), **settings)
    # A rules measurement, not a latency one: PL4 on a 100 KiB body takes the engine well over the block's
    # default message timeout on this shared machine.
    envoy = EnvoyProcess(backend.port, waf.port, preserve_request_id=True, message_timeout="30s")
    ids = {r.corpus + "/" + r.id: f"eff-{uuid.uuid4().hex}" for r in requests}
    try:
        with concurrent.futures.ThreadPoolExecutor(parallel) as pool:
            statuses = list(pool.map(lambda r: _send(envoy.port, r, ids[r.corpus + "/" + r.id]), requests))
        time.sleep(0.5)
        fired: dict[str, set[int]] = collections.defaultdict(set)
        where: dict[str, set[str]] = collections.defaultdict(set)
        denied: set[str] = set()
        for event in waf.events():
            fired[event["request_id"]] |= set(event.get("rule_ids") or [])
            where[event["request_id"]] |= set(event.get("matched") or [])
            if event.get("action") in ("block", "refused"):
                denied.add(event["request_id"])
    finally:
        envoy.stop()
        waf.stop()
        backend.stop()
    out = []
    for req, status in zip(requests, statuses, strict=True):
        rid = ids[req.corpus + "/" + req.id]
        if rid in denied or status == block_status:
            verdict = "blocked"
        elif 200 <= status < 300:
            verdict = "passed"
        else:
            verdict = "other"
        out.append(Outcome(req, verdict, status, tuple(sorted(fired[rid])), tuple(sorted(where[rid]))))
    return out


@dataclass
class Tally:
    blocked: int = 0
    passed: int = 0
    other: int = 0

    def add(self, verdict: str) -> None:
        setattr(self, verdict, getattr(self, verdict) + 1)

    @property
    def judged(self) -> int:
        return self.blocked + self.passed

    def rate(self, attack: bool) -> float:
        if not self.judged:
            return 0.0
        return (self.blocked if attack else self.passed) / self.judged

    def cell(self, attack: bool) -> str:
        if not self.judged and not self.other:
            return "-"
        good = self.blocked if attack else self.passed
        text = f"{good}/{self.judged} ({100 * self.rate(attack):.1f}%)"
        return text + (f" +{self.other} Envoy" if self.other else "")


@dataclass
class Summary:
    config: str
    corpus: dict[tuple[str, str], Tally] = field(default_factory=dict)  # (corpus, split)
    family: dict[tuple[str, str, str], Tally] = field(default_factory=dict)  # (corpus, family, split)
    fp_rules: collections.Counter[int] = field(default_factory=collections.Counter)
    fp_rule_families: dict[int, set[str]] = field(default_factory=lambda: collections.defaultdict(set))
    # Held-out benign only, per corpus (each held-out benign set read apart).
    fp_heldout: dict[str, collections.Counter[int]] = field(
        default_factory=lambda: collections.defaultdict(collections.Counter)
    )
    fp_heldout_families: dict[tuple[str, int], set[str]] = field(default_factory=lambda: collections.defaultdict(set))
    attack: dict[str, bool] = field(default_factory=dict)

    def totals(self, attack: bool, split: str) -> Tally:
        t = Tally()
        for (name, s), tally in self.corpus.items():
            if s == split and self.attack[name] == attack:
                t.blocked += tally.blocked
                t.passed += tally.passed
                t.other += tally.other
        return t


def summarize(config: str, outcomes: Iterable[Outcome]) -> Summary:
    s = Summary(config)
    for o in outcomes:
        r = o.request
        s.attack[r.corpus] = r.attack
        s.corpus.setdefault((r.corpus, r.split), Tally()).add(o.verdict)
        s.family.setdefault((r.corpus, r.family, r.split), Tally()).add(o.verdict)
        if not r.attack and o.verdict == "blocked":
            for rule in set(o.rules) - SCORING:
                s.fp_rules[rule] += 1
                s.fp_rule_families[rule].add(r.family)
                if r.split == "heldout":
                    s.fp_heldout[r.corpus][rule] += 1
                    s.fp_heldout_families[r.corpus, rule].add(r.family)
    return s


def lost_attacks(base: list[Outcome], profile: list[Outcome], split: str) -> list[str]:
    """Attacks of `split` that `base` blocks and `profile` lets through (an exclusion's cost)."""
    blocked = {(o.request.corpus, o.request.id) for o in base if o.request.attack and o.verdict == "blocked"}
    return sorted(
        f"{o.request.corpus}/{o.request.id} ({o.request.family})"
        for o in profile
        if o.request.attack
        and o.request.split == split
        and o.verdict == "passed"
        and (o.request.corpus, o.request.id) in blocked
    )


def report(summaries: Sequence[Summary]) -> str:
    """Markdown: the overview (held-out and tuning halves), families, and the false positives' rules."""
    names = sorted({n for s in summaries for n, _ in s.corpus}, key=lambda n: (summaries[0].attack.get(n, False), n))
    # The halves each corpus has (a corpus measured whole has one: WHOLE), held-out first.
    columns = [(n, h) for n in names for h in ("heldout", "tuning") if any((n, h) in s.corpus for s in summaries)]
    label = {"heldout": "held-out", "tuning": "tuning"}
    lines = [
        "| configuration | "
        + " | ".join(
            f"{n} {'blocked' if summaries[0].attack[n] else 'passed'} ({label[h]}{', whole' if n in WHOLE else ''})"
            for n, h in columns
        )
        + " |",
        "|---|" + "---|" * len(columns),
    ]
    for s in summaries:
        cells = [s.corpus.get(column, Tally()).cell(s.attack[column[0]]) for column in columns]
        lines.append(f"| {s.config} | " + " | ".join(cells) + " |")
    lines += ["", "Held-out sets, per family (attacks: blocked; benign: passed):", ""]
    fams = sorted(
        {(c, f) for s in summaries for c, f, h in s.family if h == "heldout"},
        key=lambda cf: (summaries[0].attack[cf[0]], cf),
    )
    lines.append("| corpus | family | " + " | ".join(s.config for s in summaries) + " |")
    lines.append("|---|---|" + "---|" * len(summaries))
    for c, f in fams:
        cells = [s.family.get((c, f, "heldout"), Tally()).cell(s.attack[c]) for s in summaries]
        lines.append(f"| {c} | {f} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "Rules behind the false positives (benign requests blocked, every benign corpus; a request counts once "
        "per rule that matched it):",
        "",
    ]
    for s in summaries:
        ranked = sorted(s.fp_rules.items(), key=lambda kv: (-kv[1], kv[0]))
        top = ", ".join(f"{rule} x{n} ({'/'.join(sorted(s.fp_rule_families[rule]))})" for rule, n in ranked[:TOP])
        more = f", and {len(ranked) - TOP} more rules" if len(ranked) > TOP else ""
        lines.append(f"- {s.config}: {top or 'none'}{more}")
    for corpus in sorted({c for s in summaries for c in s.fp_heldout}):
        lines += ["", f"The same for the held-out benign corpus {corpus} only:", ""]
        for s in summaries:
            counts = s.fp_heldout.get(corpus, collections.Counter())
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            top = ", ".join(
                f"{rule} x{n} ({'/'.join(sorted(s.fp_heldout_families[corpus, rule]))})" for rule, n in ranked[:TOP]
            )
            more = f", and {len(ranked) - TOP} more rules" if len(ranked) > TOP else ""
            lines.append(f"- {s.config}: {top or 'none'}{more}")
    return "\n".join(lines) + "\n"


def write_docs(path: Path, table: str, note: str) -> None:
    text = path.read_text(encoding="utf-8")
    start, end = text.index(DOCS_START), text.index(DOCS_END)
    path.write_text(text[: start + len(DOCS_START)] + "\n" + note + "\n" + table + text[end:], encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crs", type=Path, required=True, help="CRS release folder (rules/ and tests/)")
    parser.add_argument("--configs", default=",".join(CONFIGS), help=f"of {', '.join(CONFIGS)}")
    parser.add_argument(
        "--corpora", default=",".join(ALL_CORPORA), help="of these (default all; tuning runs leave the held-out out)"
    )
    parser.add_argument("--sample", type=int, default=0, help="about this many requests of each corpus")
    parser.add_argument("--docs", type=Path, help="write the table into this file between its markers")
    parser.add_argument("--json", type=Path, help="write every outcome here (for tuning)")
    args = parser.parse_args()
    configs = [CONFIGS[n] for n in args.configs.split(",")]
    requests = load_corpora(args.crs, args.sample, args.corpora.split(","))
    print(f"{len(requests)} requests per configuration", flush=True)
    results: dict[str, list[Outcome]] = {}
    for config in configs:
        started = time.monotonic()
        results[config.name] = run(config, args.crs, requests)
        print(f"{config.name}: {time.monotonic() - started:.0f} s", flush=True)
    summaries = [summarize(n, o) for n, o in results.items()]
    table = report(summaries)
    print(table)
    status = 0
    for profile in (c for c in configs if c in PROFILES):
        base = f"pl{profile.level}"
        if base in results:
            lost = lost_attacks(results[base], results[profile.name], "heldout")
            print(f"{profile.name}: held-out attacks {base} blocks and the profile passes: {len(lost)}")
            for item in lost:
                print(f"  {item}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    n: [
                        {
                            "corpus": o.request.corpus,
                            "id": o.request.id,
                            "family": o.request.family,
                            "split": o.request.split,
                            "attack": o.request.attack,
                            "verdict": o.verdict,
                            "status": o.status,
                            "rules": list(o.rules),
                            "matched": list(o.matched),
                        }
                        for o in outs
                    ]
                    for n, outs in results.items()
                }
            ),
            encoding="utf-8",
        )
    if args.docs:
        note = (
            f"`make waf-efficacy`, {len(requests)} requests per configuration; attacks: blocked / judged, "
            "benign: passed / judged (`+N Envoy`: answered by Envoy itself, not judged).\n"
        )
        write_docs(args.docs, table, note)
    return status


if __name__ == "__main__":
    sys.exit(main())
