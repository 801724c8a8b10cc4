"""A bounded slice of `make waf-efficacy`: the corpora are what their scripts make, and on about a hundred
requests of each corpus the tuned profile (paranoia level 2 with the block's curated exclusions, on the
settings the block renders) blocks what plain level 2 blocks and lets the benign requests through."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from envoy_waf import benign, efficacy
from envoy_waf.traffic import CORPORA, SPLITS, read, split_of, write

SLICE = 100  # requests of each corpus: about 330 in all, under a minute per configuration here


def test_benign_corpus_is_what_its_script_makes(tmp_path: Path) -> None:
    out = tmp_path / "benign.jsonl"
    write(out, benign.generate())
    committed = CORPORA / "benign-modern.jsonl"
    assert hashlib.sha256(out.read_bytes()).hexdigest() == hashlib.sha256(committed.read_bytes()).hexdigest(), (
        "waf/corpora/benign-modern.jsonl is not what envoy_waf.benign makes: run `make waf-corpora`"
    )


@pytest.mark.parametrize("name", ["benign-modern", "payloadsallthethings"])
def test_halves_come_from_the_ids(name: str) -> None:
    requests = list(read(CORPORA / f"{name}.jsonl", attack=name != "benign-modern"))
    assert all(r.split == split_of(name, r.id) for r in requests)
    counts = {s: sum(r.split == s for r in requests) for s in SPLITS}
    assert min(counts.values()) > 0.4 * len(requests), counts


@pytest.fixture(scope="module")
def outcomes(crs: str) -> dict[str, list[efficacy.Outcome]]:
    requests = efficacy.load_corpora(Path(crs), SLICE)
    assert 250 < len(requests) < 500, len(requests)
    return {name: efficacy.run(efficacy.CONFIGS[name], Path(crs), requests) for name in ("pl2", "profile-pl2")}


def test_profile_keeps_every_attack_its_level_blocks(outcomes: dict[str, list[efficacy.Outcome]]) -> None:
    for split in SPLITS:
        assert efficacy.lost_attacks(outcomes["pl2"], outcomes["profile-pl2"], split) == []


def test_profile_passes_modern_traffic(outcomes: dict[str, list[efficacy.Outcome]]) -> None:
    plain = efficacy.summarize("pl2", outcomes["pl2"]).totals(attack=False, split="heldout")
    tuned = efficacy.summarize("profile-pl2", outcomes["profile-pl2"]).totals(attack=False, split="heldout")
    assert plain.blocked > 10 * max(tuned.blocked, 1), (plain, tuned)  # the exclusions are what passes them
    assert tuned.rate(attack=False) >= 0.95, tuned
    attacks = efficacy.summarize("profile-pl2", outcomes["profile-pl2"]).totals(attack=True, split="heldout")
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
