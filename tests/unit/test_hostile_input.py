"""Invariant: a hostile or careless config is refused before anything is written or applied, with its config
path, all problems at once, cheaply, and without repeating a secret or a huge value (issue 29, one group per
class it found).

1. The WAF: whatever the block accepts, envoy-waf accepts (its limits in the schema, integers as integers,
   extra_directives checked structurally and by the binary's own compiler).
2. Kubernetes' limits: int32, ports, requests <= limits for every resources mapping, the length of every
   derived name and file name, a ConfigMap's 1 MiB.
3. All problems at once: a shape error in one section hides no rule of another (one test per pair).
4. No error without a path: YAML values JSON cannot hold (.inf, dates, !!binary), hostile YAML files.
5. Cost: alias bombs, huge lists and values are refused within bounds; messages cap repeated values.
6. Credentials in any URL are refused and never echoed.

Mutation checks (tools/mutate.py): hostile-int32-rule (config.bounded fills no int32 maximum), hostile-prune
(the values the shape refused stay in, so components trip and are skipped), hostile-url-credentials
(generic_problems skips URLs), hostile-yaml-bounds (the loader counts nothing), hostile-extra-directives (no
structural check) each turn their tests here red.
"""

from __future__ import annotations

import datetime
import itertools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import artifacts, builder, config, inputs, render, seclang, waf_check
from tests.conftest import ROOT
from tests.support.helpers import block

WAF_BINARY = ROOT / "waf/bin/envoy-waf"
GATEWAY = {"enabled": True, "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}
WAF_ON = {"enabled": True, "default_policy": {"enabled": True}}


def refused(cfg: dict[str, Any], name: str = "envoy") -> list[str]:
    """Every problem the block reports for `cfg` (validation and the plan's limits), as 'path: message'."""
    try:
        builder.plan_from_block(block(cfg, name=name) if name != "envoy" else block(cfg))
    except config.ConfigError as exc:
        return [str(problem) for problem in exc.problems]
    return []


def assert_refused(cfg: dict[str, Any], path: str, *words: str) -> list[str]:
    found = refused(cfg)
    hits = [p for p in found if p.startswith(f"{path}:") and all(w in p for w in words)]
    assert hits, found
    return found


# --- 1. The WAF: what the block accepts, envoy-waf accepts ---------------------------------------------------

WAF_LIMITS = [
    ("body-limit-above-1gib", {"body": {"limit": 2**30 + 1}}, "config.waf.body.limit"),
    (
        "response-limit-above-1gib",
        {"response_inspection": {"body_limit": 2**30 + 1}},
        "config.waf.response_inspection.body_limit",
    ),
    ("rule-id-beyond-int64", {"exclude_rule_ids": [2**63]}, "config.waf.exclude_rule_ids[0]"),
    ("threshold-beyond-int64", {"anomaly_threshold": 2**63}, "config.waf.anomaly_threshold"),
    ("paranoia-as-float", {"paranoia_level": 2.0}, "config.waf.paranoia_level"),
    ("workers-as-float", {"workers": 2.0}, "config.waf.workers"),
]


@pytest.mark.parametrize(("waf", "path"), [c[1:] for c in WAF_LIMITS], ids=[c[0] for c in WAF_LIMITS])
def test_waf_values_the_binary_refuses_are_refused(waf: dict[str, Any], path: str) -> None:
    assert_refused({"default_gateway": GATEWAY, "waf": {**WAF_ON, **waf}}, path)


DIRECTIVES = [
    ("regex-does-not-compile", 'SecRule ARGS "@rx (abc" "id:10001,phase:2,deny"', "does not compile"),
    ("look-behind", 'SecRule ARGS "@rx (?<=a)b" "id:10001,phase:2,deny"', "look-behind"),
    ("unknown-directive", "SecFrobnicate On", "not a directive"),
    ("duplicate-id", 'SecAction "id:10001,phase:1,pass"\nSecAction "id:10001,phase:1,pass"', "used twice"),
    ("crs-id", 'SecAction "id:942100,phase:1,pass"', "belongs to the CRS"),
    ("block-id", 'SecAction "id:200001,phase:1,pass"', "belongs to the CRS"),
    ("include-host-file", "Include /etc/passwd", "Include"),
    ("no-id", 'SecRule ARGS "@rx a" "phase:2,deny"', "needs an id"),
    ("open-quote", 'SecRule ARGS "@rx a "id:10001,phase:2,deny"', "not closed"),
    ("file-operator", 'SecRule ARGS "@pmFromFile words.txt" "id:10001,phase:2,deny"', "files"),
    # Coraza v3.8.1 loads both, then fails every request reaching them with 500 (a nil value in setvar).
    ("setvar-delete", 'SecAction "id:10001,phase:1,pass,setvar:!tx.seen"', "setvar:!tx.seen has no value"),
    (
        "setvar-no-value-chained",
        'SecRule ARGS "@rx a" "id:10001,phase:2,pass,chain"\n  SecRule ARGS "@rx b" "setvar:\'tx.hits\'"',
        "setvar:tx.hits has no value",
    ),
]


@pytest.mark.parametrize(("text", "word"), [c[1:] for c in DIRECTIVES], ids=[c[0] for c in DIRECTIVES])
def test_extra_directives_the_waf_refuses_are_refused(text: str, word: str) -> None:
    assert_refused(
        {"default_gateway": GATEWAY, "waf": {**WAF_ON, "extra_directives": text}}, "config.waf.extra_directives", word
    )


GOOD_DIRECTIVES = "\n".join(
    (
        "# a comment",
        'SecRule REQUEST_URI "@beginsWith /admin" "id:10001,phase:1,deny,status:403,chain"',
        '    SecRule REMOTE_ADDR "!@ipMatch 10.0.0.0/8" "t:none"',
        "SecRuleRemoveById 942100",
        "SecAction \"id:10003,phase:1,pass,nolog,setvar:'tx.seen=0',setvar:tx.hits=+1\"",
        'SecRule ARGS:q "@rx ^\\pL+$" \\',
        '    "id:10002,phase:2,pass,nolog"',
    )
)


@pytest.mark.go_binary
def test_good_extra_directives_pass_both_checks(tmp_path: Path) -> None:
    """The structural check refuses nothing the compiler takes (a chain, a continuation, an RE2 escape)."""
    assert seclang.problems(GOOD_DIRECTIVES) == []
    if not WAF_BINARY.is_file():
        pytest.fail(f"{WAF_BINARY} is missing: run `make waf-build`")
    settings = yaml.safe_dump({"extra_directives": GOOD_DIRECTIVES})
    assert waf_check.problems(settings, tool=WAF_BINARY) == []


@pytest.mark.go_binary
@pytest.mark.parametrize(
    "text",
    [
        'SecRule ARGS "@rx (?P<x>a)(?P=x)" "id:10001,phase:2,deny"',  # Python takes it, RE2 does not
        'SecRule ARGS "@rx a" "id:10001,phase:2,deny,t:nosuchtransformation"',
        'SecRule ARGS "@nosuchoperator a" "id:10001,phase:2,deny"',
    ],
    ids=["re2-named-backreference", "unknown-transformation", "unknown-operator"],
)
def test_the_binary_judges_what_the_structural_check_cannot(text: str) -> None:
    """envoy-waf --check builds the engine (waf/cmd/envoy-waf: the same server.New as startup), so it refuses
    what only the compiler sees; render asks it whenever extra_directives is set and the binary is at hand."""
    if not WAF_BINARY.is_file():
        pytest.fail(f"{WAF_BINARY} is missing: run `make waf-build`")
    found = waf_check.problems(yaml.safe_dump({"extra_directives": text}), "config.waf.extra_directives", WAF_BINARY)
    assert [p.path for p in found] == ["config.waf.extra_directives"], found
    assert "would not start" in found[0].message


# --- 2. Kubernetes' limits ------------------------------------------------------------------------------------

K8S = [
    ("data-plane-replicas-int32", {"data_plane": {"replicas": 2**31}}, "config.data_plane.replicas"),
    ("waf-replicas-int32", {"waf": {"replicas": 2**31}}, "config.waf.replicas"),
    ("wait-timeout-int32", {"wait": {"timeout": 2**31}}, "config.wait.timeout"),
    (
        "proxy-request-above-limit",
        {"data_plane": {"resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}},
        "config.data_plane.resources.requests.cpu",
    ),
    ("registry-port", {"image": {"proxy": {"registry": "registry.example.com:65536"}}}, "config.image.proxy.registry"),
    (
        "float-port",
        {"default_gateway": {"enabled": True, "listeners": [{"name": "http", "protocol": "HTTP", "port": 80.0}]}},
        "config.default_gateway.listeners[0].port",
    ),
    (
        "derived-name-too-long",
        {"default_gateway": {**GATEWAY, "name": "g" * 240}, "backend_traffic": {"enabled": True}},
        "config.default_gateway.name",
    ),
    (
        "configmap-above-1mib",
        {"default_gateway": GATEWAY, "waf": {**WAF_ON, "extra_directives": "#" * (2**20)}},
        "config.waf.extra_directives",
    ),
]


@pytest.mark.parametrize(("cfg", "path"), [c[1:] for c in K8S], ids=[c[0] for c in K8S])
def test_kubernetes_limits(cfg: dict[str, Any], path: str) -> None:
    assert_refused(cfg, path)


def test_every_derived_name_and_file_name_fits() -> None:
    """At the longest names the schema allows, what the plan derives still fits (or is refused, never written):
    every name within 253 (63 for Services), every file name within 255 bytes."""
    cfg = {"default_gateway": {**GATEWAY, "name": "g" * 200}, "backend_traffic": {"enabled": True}}
    found = refused(cfg)
    if found:
        assert all(p.startswith("config.default_gateway.name:") for p in found), found
        return
    plan = builder.plan_from_block(block(cfg))
    for step in plan.ordered():
        assert len(step.name) <= (63 if step.kind == "Service" else 253)
        assert artifacts.written_name_bytes(plan.file_name(step)) <= 255


def test_a_file_name_that_fits_but_not_while_written_is_a_config_problem(tmp_path: Path) -> None:
    """A Gateway name whose manifest file name fits 255 bytes but whose temporary name during the atomic write
    (.<name>.<8 random>) does not: refused as a config problem naming the Gateway's name, never an OSError
    mid-render blamed on block.artifacts.path."""
    cfg = {"default_gateway": {**GATEWAY, "name": "g" * 235}}
    found = refused(cfg)
    assert found, "accepted"
    assert all(p.startswith("config.default_gateway.name:") for p in found), found
    assert any("while it is written" in p for p in found), found
    # The name the check counts is the one the write uses: a name one byte under the limit writes.
    name = "n" * (255 - artifacts.written_name_bytes(""))
    assert artifacts.written_name_bytes(name) == 255
    artifacts.sync(tmp_path, {f"manifests/{name}": "x\n"}, ["manifests"])
    assert (tmp_path / "manifests" / name).read_text(encoding="utf-8") == "x\n"
    with pytest.raises(OSError, match="too long"):
        artifacts.sync(tmp_path, {f"manifests/{name}x": "x\n"}, ["manifests"])


def test_a_new_key_inherits_the_limits() -> None:
    """The limits are a rule over the schema (config.bounded), not per key: a key without its own bound gets
    int32, a list 256 items, a string 4096 characters, a map 256 keys."""
    schema = config.bounded({"type": "object", "properties": {"n": {"type": "integer"}, "l": {"type": "array"}}})
    assert schema["properties"]["n"]["maximum"] == 2**31 - 1
    assert schema["properties"]["l"]["maxItems"] == config.MAX_ITEMS
    loaded = config.load_schema()

    def unbounded(node: Any, path: str) -> list[str]:
        out: list[str] = []
        if isinstance(node, dict):
            if node.get("type") == "integer" and "maximum" not in node:
                out.append(path)
            for key, value in node.items():
                out += unbounded(value, f"{path}/{key}")
        return out

    assert unbounded(loaded, "") == []


# --- 3. All problems at once: one test per pair of sections --------------------------------------------------

# Per section: a shape error (its path) and a rule problem that only a component check finds (its path).
SECTIONS: dict[str, tuple[dict[str, Any], str, dict[str, Any], str]] = {
    "waf": ({"waf": {"workers": "two"}}, "config.waf.workers", {"waf": {"enforce": True}}, "config.waf.enforce"),
    "service": (
        {"service": {"type": "Nodeport"}},
        "config.service.type",
        {"service": {"type": "ClusterIP", "loadbalancer_ip": "192.0.2.10"}},
        "config.service.loadbalancer_ip",
    ),
    "default_gateway": (
        {"default_gateway": {"enabled": True, "listeners": [{"name": "http", "protocol": "HTTP", "port": "80"}]}},
        "config.default_gateway.listeners[0].port",
        {"default_gateway": {"listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]}},
        "config.default_gateway.listeners",
    ),
    "data_plane": (
        {"data_plane": {"replicas": "two"}},
        "config.data_plane.replicas",
        {"data_plane": {"resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}}},
        "config.data_plane.resources.requests.memory",
    ),
    "chart": (
        {"chart": {"version": 5}},
        "config.chart.version",
        {"chart": {"auth": {"username": "robot"}}},
        "config.chart.auth",
    ),
    "gatewayclass": (
        {"gatewayclass": {"shared": {"name": "Bad Name"}}},
        "config.gatewayclass.shared.name",
        {"gatewayclass": {"shared": {"name": "same"}, "dedicated": {"name": "same"}}},
        "config.gatewayclass",
    ),
}


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key, value in b.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


@pytest.mark.parametrize(
    ("shape", "rule"),
    list(itertools.permutations(SECTIONS, 2)),
    ids=[f"{a}-hides-not-{b}" for a, b in itertools.permutations(SECTIONS, 2)],
)
def test_a_shape_error_hides_no_other_sections_problem(shape: str, rule: str) -> None:
    shape_cfg, shape_path, _, _ = SECTIONS[shape]
    _, _, rule_cfg, rule_path = SECTIONS[rule]
    found = refused(_merge(shape_cfg, rule_cfg))
    paths = {p.split(": ", 1)[0] for p in found}
    assert shape_path in paths, found
    assert any(p == rule_path or p.startswith(rule_path + ".") for p in paths), found


@pytest.mark.parametrize("section", SECTIONS)
def test_each_rule_example_is_a_rule_problem(section: str) -> None:
    """The pair test's rule examples are found by a component's check alone (not the schema)."""
    _, _, rule_cfg, rule_path = SECTIONS[section]
    found = refused(rule_cfg)
    assert any(p.split(": ", 1)[0].startswith(rule_path) for p in found), found
    assert config.shape_problems(rule_cfg, config.load_schema()) == []


# --- 4. No error without a path; hostile YAML ----------------------------------------------------------------

VALUES = [
    ("infinity", {"waf": {"workers": float("inf")}}, "config.waf.workers"),
    ("nan", {"data_plane": {"replicas": float("nan")}}, "config.data_plane.replicas"),
    (
        "date",
        {"service": {"annotations": {"example.com/since": datetime.date(2024, 1, 1)}}},
        "config.service.annotations.example.com/since",
    ),
    (
        "binary",
        {"service": {"annotations": {"example.com/blob": b"\x00\x01"}}},
        "config.service.annotations.example.com/blob",
    ),
]


@pytest.mark.parametrize(("cfg", "path"), [c[1:] for c in VALUES], ids=[c[0] for c in VALUES])
def test_values_json_cannot_hold_are_refused_by_path(cfg: dict[str, Any], path: str) -> None:
    """Ansible hands these over as Python values (dates tagged): they used to end in a bare "Task failed"."""
    found = assert_refused(
        {**cfg, "service": {**cfg.get("service", {}), "type": "ClusterIP", "loadbalancer_ip": "192.0.2.1"}}, path
    )
    assert any(p.startswith("config.service.loadbalancer_ip:") for p in found), found  # and the rest is still checked


def _bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(lines) + "\n"


HOSTILE_YAML = [
    ("alias-bomb", _bomb(), "aliases are expanded"),
    ("duplicate-key", "waf:\n  enabled: true\nwaf:\n  enabled: false\n", "defined twice"),
    ("python-tag", 'a: !!python/object/apply:os.system ["true"]\n', "is not read"),
    ("custom-tag", "a: !vault 1\n", "is not read"),
    ("tabs", "waf:\n\tenabled: true\n", "not valid YAML"),
    ("deep", "[" * 1000 + "]" * 1000 + "\n", "nested"),
    ("scalar", "just text\n", "must be a mapping"),
    ("too-big", "a: " + "x" * (inputs.MAX_BYTES + 1) + "\n", "bytes"),
]


@pytest.mark.parametrize(("text", "word"), [c[1:] for c in HOSTILE_YAML], ids=[c[0] for c in HOSTILE_YAML])
def test_hostile_yaml_is_refused_in_one_line(text: str, word: str) -> None:
    with pytest.raises(inputs.InputError) as caught:
        inputs.load_mapping(text, "override.yml")
    assert word in str(caught.value)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith("override.yml: ")


@pytest.mark.parametrize(("text", "word"), [c[1:] for c in HOSTILE_YAML[:6]], ids=[c[0] for c in HOSTILE_YAML[:6]])
def test_snapshot_prints_one_line(text: str, word: str, tmp_path: Path) -> None:
    override = tmp_path / "override.yml"
    override.write_text(text, encoding="utf-8")
    done = subprocess.run(
        [
            *(sys.executable, str(ROOT / "tools/snapshot.py"), "--override", str(override)),
            *("--artifacts", str(tmp_path / "artifacts"), "-o", str(tmp_path / "s.yml")),
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert word in done.stderr, done.stderr
    assert not (tmp_path / "s.yml").exists()


def test_build_failure_names_its_section(monkeypatch: pytest.MonkeyPatch) -> None:
    """The last resort: a component that fails on an accepted config names the section it was building."""
    from envoy_block.components import waf

    def broken(config: Any) -> Any:
        raise OverflowError("cannot convert float infinity to integer")

    monkeypatch.setattr(waf, "build", broken)
    with pytest.raises(builder.BuildError) as caught:
        builder.plan_from_block(block({}))
    assert caught.value.section == "waf"


# --- 5. Cost, and capped messages ----------------------------------------------------------------------------


def test_ten_thousand_listeners_are_refused_by_the_item_limit_alone() -> None:
    listeners = [{"name": f"l{i}", "protocol": "HTTP", "port": 1000 + i} for i in range(10_000)]
    found = refused({"default_gateway": {"enabled": True, "listeners": listeners}})
    assert len(found) == 1, [p[:200] for p in found]
    assert "at most 64 items" in found[0]


def test_messages_cap_repeated_values() -> None:
    huge = "10.0.0." + "1" * 1_000_000 + "/8"
    found = refused({"network_policy": {"api_server_cidrs": [huge]}, "namespace": "N" * 100_000})
    assert found
    assert all(len(p) < 600 for p in found), [len(p) for p in found]
    assert any("(1000009 characters)" in p for p in found)


# --- 6. Credentials in a URL ---------------------------------------------------------------------------------

SECRET = "hunter2-s3cret"
URLS = [
    ("https-userinfo", f"https://robot:{SECRET}@charts.example.com/gateway-helm-1.9.0.tgz"),
    ("https-token", f"https://charts.example.com/gateway-helm-1.9.0.tgz?token={SECRET}"),
    ("oci-userinfo", f"oci://robot:{SECRET}@registry.example.com/envoyproxy/gateway-helm"),
    ("crds-chart-url", f"https://charts.example.com/crds.tgz?access_token={SECRET}"),
]


@pytest.mark.parametrize("url", [c[1] for c in URLS], ids=[c[0] for c in URLS])
def test_credentials_in_urls_are_refused_and_never_echoed(url: str, tmp_path: Path) -> None:
    key = ("crds", "chart_url") if "crds" in url else ("chart", "repo", "url")
    cfg: dict[str, Any] = {key[0]: {key[1]: url} if len(key) == 2 else {key[1]: {key[2]: url}}}
    found = refused(cfg)
    assert any(p.startswith(f"config.{'.'.join(key)}:") for p in found), found
    assert SECRET not in "\n".join(found)


def test_a_render_never_holds_chart_auth() -> None:
    plan = builder.plan_from_block(block({"chart": {"auth": {"username": "robot", "password": SECRET}}}))
    assert SECRET not in "".join(render.files(plan).values())


def test_polycrates_own_block_metadata_is_not_judged() -> None:
    """Only config values are refused for their YAML type: a date elsewhere in Polycrate's block is made plain."""
    found = config.load({"name": "envoy", "version": "0.1.0", "created": datetime.date(2024, 1, 1), "config": {}})
    assert found.block_name == "envoy"


@pytest.mark.parametrize(
    ("cfg", "path"),
    [
        (
            {"data_plane": {"tolerations": [{"key": "edge\x00", "operator": "Exists", "effect": "NoSchedule"}]}},
            "config.data_plane.tolerations[0].key",
        ),
        ({"namespace": "edge\x00gw"}, "config.namespace"),
        ({"service": {"annotations": {"example.com/a": "x\x00"}}}, "config.service.annotations.example.com/a"),
        ({"service": {"annotations": {"example.com/\x00": "x"}}}, "config.service.annotations.example.com/\x00"),
    ],
    ids=["toleration", "namespace", "annotation-value", "annotation-key"],
)
def test_nul_character_refused_at_its_path(cfg: dict[str, Any], path: str) -> None:
    """A NUL in any string (seen in tolerations, which the schema takes as a pod spec has them) would be rendered
    into manifests Kubernetes refuses: refused at its config path, with the fix."""
    found = assert_refused(cfg, path, "NUL character", "remove it")
    assert len([p for p in found if "NUL" in p]) == 1, found
