"""A bounded slice of `make waf-efficacy`: the corpora are what their scripts make, and on about a hundred
requests of each corpus each tuned profile (paranoia level 2 or 3 with the block's curated exclusions, on the
settings the block renders) blocks what its plain level blocks, but for what docs/waf.md says it gives up, and
lets the benign requests it was tuned on through, and more of the held-out ones than its level; the search
exclusion holds only for plain text, in every value of q."""

from __future__ import annotations

import hashlib
import json
import re
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from envoy_waf import benign, efficacy, fifth, fourth, fresh, third
from envoy_waf.traffic import CORPORA, SPLITS, Request, make, read, split_of, write

SLICE = 100  # requests of each corpus: about 720 in all (seven corpora)


@pytest.mark.parametrize(
    ("name", "script"),
    [
        ("benign-modern", benign),
        ("benign-fresh", fresh),
        ("benign-third", third),
        ("benign-fourth", fourth),
        ("benign-fifth", fifth),
    ],
)
def test_benign_corpus_is_what_its_script_makes(tmp_path: Path, name: str, script: Any) -> None:
    out = tmp_path / "benign.jsonl"
    write(out, script.generate())
    committed = CORPORA / f"{name}.jsonl"
    assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256(committed.read_bytes()).hexdigest(), (
        f"waf/corpora/{name}.jsonl is not what {script.__name__} makes: run `make waf-corpora`"
    )


def test_fresh_corpus_is_whole_and_new() -> None:
    """benign-fresh was the held-out benign set (its lines say heldout) until the third tuning round read it:
    none of benign-modern's bodies or paths (but the home page `/`), the same families (Kubernetes objects of
    its own), at least 1,200 requests; the efficacy run counts it whole as tuning data now."""
    requests = list(read(CORPORA / "benign-fresh.jsonl", attack=False))
    tuned = list(read(CORPORA / "benign-modern.jsonl", attack=False))
    assert len(requests) >= 1200
    assert all(r.split == "heldout" for r in requests)
    seen = {r.body for r in tuned if r.body} | {r.path for r in tuned if r.path != "/"}  # every site has a home page
    assert not [r.id for r in requests if (r.body or r.path) in seen]
    families = {r.family for r in requests}
    assert {r.family for r in tuned} - {"k8s-render", "k8s-crd", "k8s-crd-example"} <= families
    # benign-modern's held-out half was read while tuning: the efficacy run counts it whole as tuning data.
    assert {efficacy._whole(r).split for r in tuned} == {"tuning"}
    assert {efficacy._whole(r).split for r in requests} == {"tuning"}


def test_third_corpus_is_whole_and_of_other_kinds() -> None:
    """benign-third was a second held-out benign set (tuning data since the third round): none of the other
    benign corpora's bodies or paths (but standard ones), families of its own kinds beside the shared ones, at
    least 1,000 requests, and the +json media types at the share APIs send them (a few percent), not
    inflated."""
    requests = list(read(CORPORA / "benign-third.jsonl", attack=False))
    others = [r for n in ("benign-modern", "benign-fresh") for r in read(CORPORA / f"{n}.jsonl", attack=False)]
    assert len(requests) >= 1000
    assert all(r.split == "heldout" for r in requests)
    assert {efficacy._whole(r).split for r in requests} == {"tuning"}
    # Every site has a home page, and every OpenID provider its discovery document at the same path.
    seen = {r.body for r in others if r.body} | {r.path for r in others if r.path != "/"}
    standard = {"/.well-known/openid-configuration"}
    assert not [r.id for r in requests if (r.body or r.path) in seen - standard]
    new_kinds = {"oauth", "openapi", "iac", "ci", "chat", "bulk", "s3", "jsonapi", "kubectl"}
    assert new_kinds <= {r.family for r in requests}
    assert not new_kinds & {r.family for r in others}
    media = [{k.lower(): v for k, v in r.headers}.get("content-type", "").split(";")[0] for r in requests]
    plus_json = sum(m.startswith("application/") and m.endswith("+json") for m in media)
    assert 0.03 * len(requests) <= plus_json <= 0.08 * len(requests), plus_json


def _own_kinds(name: str, before: tuple[str, ...], at_least: int, counted_as: str, kinds: set[str]) -> list[Request]:
    """A later benign corpus: at least `at_least` requests, each held out in its own lines and counted as
    `counted_as` by the efficacy run, none of the earlier corpora's bodies or paths (but a home page), and
    families of its own kinds that no earlier corpus has."""
    requests = list(read(CORPORA / f"{name}.jsonl", attack=False))
    others = [r for n in before for r in read(CORPORA / f"{n}.jsonl", attack=False)]
    assert len(requests) >= at_least
    assert all(r.split == "heldout" for r in requests)
    assert {efficacy._whole(r).split for r in requests} == {counted_as}
    seen = {r.body for r in others if r.body} | {r.path for r in others if r.path != "/"}
    assert not [r.id for r in requests if (r.body or r.path) in seen]
    assert kinds <= {r.family for r in requests}
    assert not kinds & {r.family for r in others}
    return requests


def test_fourth_corpus_is_whole_and_of_other_kinds() -> None:
    """benign-fourth was the held-out benign set of the third tuning round (its lines say heldout) until its
    false positives were read; the efficacy run counts it whole as tuning data now."""
    kinds = {"odata", "jsonrpc", "salesforce", "telemetry", "fhir", "fediverse", "payments", "notebook"}
    _own_kinds("benign-fourth", ("benign-modern", "benign-fresh", "benign-third"), 1000, "tuning", kinds)


def test_fifth_corpus_is_held_out_whole_and_of_other_kinds() -> None:
    """benign-fifth is the held-out benign set of the fourth tuning round, committed before that round changed
    an exclusion, most of its requests JSON bodies as today's APIs send them."""
    kinds = {"cart", "review", "cicd", "calendar-mail", "i18n", "logsearch", "support", "account"}
    before = ("benign-modern", "benign-fresh", "benign-third", "benign-fourth")
    requests = _own_kinds("benign-fifth", before, 800, "heldout", kinds)
    media = [{k.lower(): v for k, v in r.headers}.get("content-type", "").split(";")[0] for r in requests]
    json_bodies = sum(
        bool(r.body) and (m == "application/json" or m.endswith("+json")) for r, m in zip(requests, media, strict=True)
    )
    assert json_bodies > len(requests) / 2, json_bodies


@pytest.mark.parametrize("name", ["benign-modern", "payloadsallthethings"])
def test_halves_come_from_the_ids(name: str) -> None:
    requests = list(read(CORPORA / f"{name}.jsonl", attack=name != "benign-modern"))
    assert all(r.split == split_of(name, r.id) for r in requests)
    counts = {s: sum(r.split == s for r in requests) for s in SPLITS}
    assert min(counts.values()) > 0.4 * len(requests), counts


# Each shipped profile beside the level it tunes.
PAIRS = (("pl2", "profile-pl2"), ("pl3", "profile-pl3"))


@pytest.fixture(scope="module")
def outcomes(crs: str) -> dict[str, list[efficacy.Outcome]]:
    requests = efficacy.load_corpora(Path(crs), SLICE)
    assert 600 < len(requests) < 800, len(requests)
    names = [name for pair in PAIRS for name in pair]
    return {name: efficacy.run(efficacy.CONFIGS[name], Path(crs), requests) for name in names}


# What a value needs to leave the context a search query is put in (a quoted SQL string, a shell argument,
# HTML text): the search exclusion never applies to a q holding one of these (waf_exclusions.PLAIN_SEARCH).
BREAKOUT = re.compile(r"['\"`;|&$\\%#{}\[\]\n]|--|/\*|//|<[^ 0-9=]")


def _query(req: Request) -> str | None:
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(req.path).query).get("q")
    return values[0] if values else None


def test_profiles_keep_every_attack_their_level_blocks(outcomes: dict[str, list[efficacy.Outcome]]) -> None:
    """A profile blocks what its level blocks, but for plain-text search queries (a command or SQL words
    without a quote, separator, comment or tag) and, at level 3, requests only a protocol rule (REQUEST-920)
    caught there, such as 920272's byte range (docs/waf.md)."""
    for base, profile in PAIRS:
        judged = {(o.request.corpus, o.request.id): o for o in outcomes[base]}
        for split in SPLITS:
            for lost in efficacy.lost_attacks(outcomes[base], outcomes[profile], split):
                corpus, rid = lost.split(" ", 1)[0].split("/", 1)
                caught = judged[corpus, rid]
                q = _query(caught.request)
                protocol_only = all(rule // 1000 == 920 for rule in set(caught.rules) - efficacy.SCORING)
                assert (q is not None and not BREAKOUT.search(q)) or (base == "pl3" and protocol_only), (
                    profile,
                    lost,
                    caught.rules,
                )


def _search(rid: str, *queries: str, attack: bool) -> Request:
    query = "&".join("q=" + urllib.parse.quote(q, safe="") for q in queries)
    headers = [("Host", "app.example.com"), ("User-Agent", "Mozilla/5.0"), ("Accept", "text/html")]
    return make("probe", rid, "search", "GET", f"/search?{query}", headers, attack=attack)


def _graphql(rid: str, q: str, *, attack: bool) -> Request:
    body = json.dumps({"query": "query S($q: String!) { search(q: $q) { id } }", "variables": {"q": q}})
    headers = [("Host", "app.example.com"), ("Content-Type", "application/json")]
    return make("probe", rid, "graphql", "POST", "/graphql", headers, body.encode(), attack=attack)


# Searches the search exclusion passes, and the same words made into an injection (each blocked by plain
# level 2 only through rules the exclusion takes off a plain q, so only the guard keeps them blocked).
PLAIN = ("ls -la explained", "eval() in javascript", "SELECT COUNT(*) slow postgres", "price < 100 EUR")
INJECTED = ("a;id|", "eval('sleep 5');", "' SELECT COUNT(*) --", "<h1>price</h1>")


def test_search_exclusion_is_for_plain_text_only(crs: str) -> None:
    probes = [_search(f"plain-{i}", q, attack=False) for i, q in enumerate(PLAIN)]
    probes += [_graphql(f"gql-plain-{i}", q, attack=False) for i, q in enumerate(PLAIN)]
    probes += [_search(f"injected-{i}", q, attack=True) for i, q in enumerate(INJECTED)]
    probes += [_graphql(f"gql-injected-{i}", q, attack=True) for i, q in enumerate(INJECTED)]
    # A plain value beside an injected one: the exclusion must not ride on the plain one.
    probes += [_search(f"pair-{i}", p, q, attack=True) for i, (p, q) in enumerate(zip(PLAIN, INJECTED, strict=True))]
    verdicts = {
        name: {o.request.id: o.verdict for o in efficacy.run(efficacy.CONFIGS[name], Path(crs), probes)}
        for name in ("pl2", "profile-pl2")
    }
    for req in probes:
        expected = "blocked" if req.attack else "passed"
        assert verdicts["profile-pl2"][req.id] == expected, (req.id, req.path)
        assert verdicts["pl2"][req.id] == "blocked", (req.id, "plain level 2 blocks every probe")


# Attacks plain level 2 blocks in any argument, each placed under a name one of the JSON path exclusions
# (waf_exclusions: prose, code, password fields, Kubernetes objects) takes its rules off: `json.body` is what
# Coraza names a JSON body's field `body`, but a query string or a form can send an argument of that name too.
XSS = "<script>alert(document.cookie)</script>"
SQLI = "1' UNION SELECT username, password FROM users--"
CMD = ";cat /etc/passwd"
JSON_NAMED = (("json.body", XSS), ("JSON.Body", XSS), ("json.steps.0.command", CMD), ("json.user.password", SQLI))


def _json_body(rid: str, path: str, doc: dict[str, str], *, attack: bool) -> Request:
    headers = [("Host", "app.example.com"), ("Content-Type", "application/json")]
    return make("probe", rid, "json", "POST", path, headers, json.dumps(doc).encode(), attack=attack)


def test_json_path_exclusions_hold_for_json_bodies_only(crs: str) -> None:
    """An exclusion that names a JSON body's field (`ARGS:/^json\\.(?:.*\\.)?body$/`) matches an argument's
    name, wherever the argument came from: it holds only when Coraza parsed the body as JSON and no query
    string argument is named json.*, so the same attack in a query string or form argument named json.body,
    or in a JSON body sent beside a query argument json.x, keeps every rule. The first probe, the attack as a
    JSON body's `body`, is what the prose exclusion gives up (docs/waf.md): that it passes shows the
    exclusions are on, so that the others' verdicts count."""
    form = [("Host", "app.example.com"), ("Content-Type", "application/x-www-form-urlencoded")]
    probes = [_json_body("json-body", "/api/issues", {"title": "t", "body": XSS}, attack=False)]
    for i, (name, value) in enumerate(JSON_NAMED):
        arg = f"{urllib.parse.quote(name)}={urllib.parse.quote(value, safe='')}"
        probes += [
            make("probe", f"query-{i}", "json", "GET", f"/api/issues?{arg}", form[:1], attack=True),
            make("probe", f"form-{i}", "json", "POST", "/api/issues", form, arg.encode(), attack=True),
        ]
    probes += [
        _json_body("json-body-and-query", "/api/issues?json.x=1", {"title": "t", "body": XSS}, attack=True),
        # A Kubernetes API path's query string: the Kubernetes exclusion takes the families off json.* there.
        make(
            "probe",
            "k8s-query",
            "json",
            "GET",
            f"/api/v1/namespaces/default/configmaps?json.data.x={urllib.parse.quote(XSS, safe='')}",
            form[:1],
            attack=True,
        ),
    ]
    verdicts = {
        name: {o.request.id: o.verdict for o in efficacy.run(efficacy.CONFIGS[name], Path(crs), probes)}
        for name in ("pl2", "profile-pl2", "profile-pl3")
    }
    assert all(verdicts["pl2"][req.id] == "blocked" for req in probes), verdicts["pl2"]
    wrong = [
        (profile, req.id, req.path, verdicts[profile][req.id])
        for profile in ("profile-pl2", "profile-pl3")
        for req in probes
        if verdicts[profile][req.id] != ("blocked" if req.attack else "passed")
    ]
    assert not wrong, wrong


# The least share of each benign corpus each profile passes (the whole run, docs/waf.md, 2026-12-07, after the
# third round), less a slice's spread. Tuning data: benign-modern (98.9% and 98.9% at levels 2 and 3),
# benign-fresh (95.5%, 93.7%) and benign-third (85.2%, 80.9%), read while the exclusions were chosen. Held out:
# benign-fourth, measured once after they were frozen: 46.5% and 40.4%, far short of the goal (99%),
# and its plain level blocks more of it (759 and 1,013 of 1,120 against 599 and 667).
# benign-fourth's false positives were read after that, so it is tuning data now.
TUNING_FLOOR = {"benign-modern": 0.97, "benign-fresh": 0.88, "benign-third": 0.7, "benign-fourth": 0.3}
# benign-fifth, held out since the fourth round began (written before any exclusion changed): the profiles
# passed 57.2% and 47.0% of it (docs/waf.md), far short of the goal too.
HELD_OUT_FLOOR = {"benign-fifth": 0.4}


@pytest.mark.parametrize(("base", "profile"), PAIRS)
def test_profile_passes_modern_traffic(outcomes: dict[str, list[efficacy.Outcome]], base: str, profile: str) -> None:
    """On the traffic it was tuned on the profile passes nearly everything its level blocks; on the held-out
    benign set (benign-fifth: carts, chat, CI/CD, calendars, translations, log searches, tickets) it passes
    more than its level, and far less than the issue's goal (99%): what exclusions fitted to one set of
    conventions are worth on another's. These bounds guard what was measured."""
    plain, tuned = (efficacy.summarize(n, outcomes[n]) for n in (base, profile))
    # The corpora exclusions were fitted to: benign-fourth counts as tuning data since its false positives
    # were read, but no exclusion was fitted to it yet, so it is left out of this ratio and bounded below on
    # its own.
    fitted = [(n, "tuning") for n in ("benign-modern", "benign-fresh", "benign-third")]
    seen = [sum(s.corpus[c].blocked for c in fitted) for s in (plain, tuned)]
    assert seen[0] > 5 * max(seen[1], 1), seen  # the exclusions are what passes them
    for corpus, floor in TUNING_FLOOR.items():
        assert tuned.corpus[corpus, "tuning"].rate(attack=False) >= floor, (corpus, tuned.corpus[corpus, "tuning"])
    for corpus, floor in HELD_OUT_FLOOR.items():
        held = plain.corpus[corpus, "heldout"], tuned.corpus[corpus, "heldout"]
        assert held[0].blocked > held[1].blocked, (corpus, held)
        assert held[1].rate(attack=False) >= floor, (corpus, held)
    attacks = tuned.totals(attack=True, split="heldout")
    assert attacks.rate(attack=True) >= 0.85, attacks


def test_level_one_renders_no_exclusions() -> None:
    settings = efficacy.rendered_settings(efficacy.CONFIGS["pl1"])
    assert settings["extra_directives"] == ""
    assert "setup_directives" not in settings
    default = efficacy.rendered_settings(efficacy.Config("default", ("waf.enabled=true",), 1))
    assert default["paranoia_level"] == 1
    assert default["extra_directives"] == ""
    tuned = efficacy.rendered_settings(efficacy.CONFIGS["profile-pl2"])
    assert "SecRuleUpdateTargetById" in tuned["extra_directives"]
    assert "ctl:ruleRemoveTargetById" in tuned["setup_directives"]
