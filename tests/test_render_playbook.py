"""The real `render` action: ansible-playbook + the collection's render action + the role, as Polycrate runs it.

Guards: the playbook writes exactly what the pure core renders (no second copy of manifest logic); a second
render changes nothing, and a render rewrites only the files whose content changed; check mode writes nothing
and --diff shows the change; bad config exits non-zero, names each problem exactly once in the output (through
the `make render` path: tools/snapshot.py, then ansible-playbook), writes nothing and removes a previous render;
files render does not own are never touched; the actions' other errors (no `block`, an unwritable folder) are
one plain message too; chart credentials never reach artifacts or -vvv output.

Mutation checks (done once): not removing the previous render in the render action on a bad config turned
test_invalid_config_writes_nothing_and_removes_stale red; putting the problems back into `msg` (which Ansible
prints twice) turned test_make_render_path_reports_each_problem_once red; writing every file regardless of its
content turned test_only_changed_files_are_rewritten red; ignoring check mode in artifacts.sync turned
test_check_mode_writes_nothing_and_diff_shows_the_change red; dropping BlockAction's `block` check or the
render action's OSError handler turned test_the_actions_other_errors_are_clean_too red.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from envoy_block import polycrate
from tests.conftest import ROOT
from tests.support.helpers import problems

# Polycrate's image Python (make unit-image) runs again only the tests of what its ansible-core 2.18 prints
# differently (each problem once, the other errors, credentials never shown); the others are not_in_image:
# tests/compat shows both Pythons render the same bytes.
pytestmark = pytest.mark.playbook
BIN = Path(sys.executable).parent
BLOCK_POLY = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
SECRET = "pw-Zq7-never-shown"


ENV = {
    **os.environ,
    "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
    "ANSIBLE_NOCOLOR": "1",
    "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
}


def playbook(snap_file: Path, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "ansible-playbook"), "-e", f"@{snap_file}", f"playbooks/{name}.yml", *extra],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        check=False,
    )


def run_render(tmp_path: Path, cfg: dict[str, Any], artifacts: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    snap = polycrate.snapshot(BLOCK_POLY, {"config": cfg}, str(artifacts))
    snap_file = tmp_path / "snapshot.yml"
    snap_file.write_text(yaml.safe_dump(snap), encoding="utf-8")
    return playbook(snap_file, "render", *extra)


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def recap(output: str) -> dict[str, int]:
    match = re.search(r"localhost\s+:\s+(.*)", output)
    assert match, output
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}


@pytest.mark.not_in_image
def test_render_matches_golden_and_is_idempotent(tmp_path: Path) -> None:
    """Golden: the playbook's output for the default config is byte-identical to examples/default/rendered."""
    artifacts = tmp_path / "artifacts"
    first = run_render(tmp_path, {}, artifacts)
    assert first.returncode == 0, first.stdout + first.stderr
    assert tree(artifacts) == tree(ROOT / "examples" / "default" / "rendered")
    second = run_render(tmp_path, {}, artifacts)
    assert second.returncode == 0
    assert recap(second.stdout)["changed"] == 0, second.stdout


@pytest.mark.not_in_image
def test_render_prunes_files_a_config_no_longer_renders(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    assert run_render(tmp_path, {"metrics": {"vmpodscrape": {"enabled": True}}}, artifacts).returncode == 0
    assert any("vmpodscrape" in name for name in tree(artifacts))
    assert run_render(tmp_path, {}, artifacts).returncode == 0
    assert not any("vmpodscrape" in name for name in tree(artifacts))


@pytest.mark.not_in_image
def test_invalid_config_writes_nothing_and_removes_stale(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    assert run_render(tmp_path, {}, artifacts).returncode == 0
    bad = {"service": {"type": "ClusterIP", "loadbalancer_ip": "10.0.0.1"}, "namespcae": "x"}
    result = run_render(tmp_path, bad, artifacts)
    assert result.returncode != 0
    assert "config.service.loadbalancer_ip" in result.stdout
    assert "config.namespcae" in result.stdout
    assert tree(artifacts) == {}, "a previous render must not be left looking current"


@pytest.mark.not_in_image
def test_invalid_config_on_fresh_folder_writes_nothing(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    result = run_render(
        tmp_path, {"default_gateway": {"listeners": [{"name": "a", "protocol": "TLS", "port": 1}]}}, artifacts
    )
    assert result.returncode != 0
    assert not artifacts.exists() or tree(artifacts) == {}


def test_credentials_never_in_artifacts_or_output(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    cfg = {"chart": {"auth": {"username": "robot", "password": SECRET}}}
    result = run_render(tmp_path, cfg, artifacts, "-vvv")
    assert result.returncode == 0, result.stdout
    assert SECRET not in result.stdout + result.stderr
    assert all(SECRET.encode() not in content for content in tree(artifacts).values())
    assert b"auth_configured: true" in tree(artifacts)["helm/release.yaml"]


BAD = {
    "chart": {"repo": {"url": "not a url"}, "auth": {"username": "robot", "password": 987654321}},
    "image": {"controller": {"tag": "v1.9.0 latest"}},
    "client_traffic": {"enabled": True},
    "network_policy": {"extra_egress_to": [{"cidr": "10.0.0.1/8"}]},
}


def test_make_render_path_reports_each_problem_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`make render CONFIG=bad.yml`: one clean failure, every problem exactly once, no templating error
    chain, no secret, and nothing in artifacts."""
    override = tmp_path / "bad.yml"
    override.write_text(yaml.safe_dump({"config": BAD}), encoding="utf-8")
    snap_file, artifacts = tmp_path / "snapshot.yml", tmp_path / "artifacts"
    command = [sys.executable, "tools/snapshot.py", "--override", str(override), "--artifacts", str(artifacts)]
    subprocess.run([*command, "-o", str(snap_file)], cwd=ROOT, check=True)
    result = playbook(snap_file, "render")
    output = result.stdout + result.stderr
    monkeypatch.chdir(ROOT)  # a relative chart path is resolved where ansible-playbook runs
    expected = problems(yaml.safe_load(snap_file.read_text(encoding="utf-8"))["block"]["config"])
    assert len(expected) == 5, expected
    assert result.returncode != 0
    for problem in expected:
        assert output.count(problem) == 1, (problem, output)
    assert "Finalization of task args" not in output
    assert "filter plugin" not in output
    assert "987654321" not in output
    assert recap(result.stdout)["failed"] == 1
    assert not artifacts.exists() or tree(artifacts) == {}


def test_install_fails_on_bad_config_once_before_touching_anything(tmp_path: Path) -> None:
    """install validates first (the same action as render): one clean failure, each problem once, and no
    cluster is needed to find out."""
    snap = polycrate.snapshot(BLOCK_POLY, {"config": BAD}, str(tmp_path / "artifacts"), str(tmp_path / "none"))
    snap_file = tmp_path / "snapshot.yml"
    snap_file.write_text(yaml.safe_dump(snap), encoding="utf-8")
    result = playbook(snap_file, "install")
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert output.count("config.image.controller.tag: 'v1.9.0 latest' is not valid") == 1, output
    assert output.count("config.client_traffic.target_gateway_name: ") == 1, output
    assert "TASK [envoy_config : Validate the block config]" in output
    assert "envoy_apply" not in output
    assert recap(result.stdout)["failed"] == 1


@pytest.mark.not_in_image
def test_only_changed_files_are_rewritten(tmp_path: Path) -> None:
    """A changed config rewrites the files whose content changed and no other (same inode, same mtime)."""
    artifacts = tmp_path / "artifacts"
    assert run_render(tmp_path, {}, artifacts).returncode == 0
    before = {p: (artifacts / p).stat() for p in tree(artifacts)}
    result = run_render(tmp_path, {"data_plane": {"replicas": 3}}, artifacts)
    assert result.returncode == 0, result.stdout
    assert recap(result.stdout)["changed"] == 1
    rewritten = {
        p
        for p, st in before.items()
        if (artifacts / p).stat().st_ino != st.st_ino or (artifacts / p).stat().st_mtime_ns != st.st_mtime_ns
    }
    assert rewritten == {"manifests/06-envoyproxy-eg-shared.yaml", "manifests/07-envoyproxy-eg-dedicated.yaml"}


@pytest.mark.not_in_image
def test_check_mode_writes_nothing_and_diff_shows_the_change(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    assert run_render(tmp_path, {}, artifacts).returncode == 0
    rendered = tree(artifacts)
    result = run_render(tmp_path, {"data_plane": {"replicas": 3}}, artifacts, "--check", "--diff")
    assert result.returncode == 0, result.stdout
    assert recap(result.stdout)["changed"] == 1
    assert "-        replicas: 2\n+        replicas: 3" in result.stdout, result.stdout
    assert tree(artifacts) == rendered
    fresh = tmp_path / "fresh"
    assert run_render(tmp_path, {}, fresh, "--check").returncode == 0
    assert not fresh.exists()


@pytest.mark.not_in_image
def test_render_leaves_files_it_does_not_own(tmp_path: Path) -> None:
    """Polycrate keeps the block's kubeconfig and inventory in the same artifacts folder."""
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    (artifacts / "kubeconfig.yml").write_text("keep", encoding="utf-8")
    assert run_render(tmp_path, {}, artifacts).returncode == 0
    assert run_render(tmp_path, {"namespcae": "x"}, artifacts).returncode != 0
    assert tree(artifacts) == {"kubeconfig.yml": b"keep"}


def test_the_actions_other_errors_are_clean_too(tmp_path: Path) -> None:
    """A missing `block` argument and an unwritable artifacts folder fail with one plain message that says
    what to do, not a Python traceback or a templating chain."""
    play = tmp_path / "play.yml"
    dest = tmp_path / "a-file"
    dest.write_text("", encoding="utf-8")
    tasks = [
        {"name": "No block", "polycrate_blocks.envoy.validate": {}, "ignore_errors": True},
        {
            "name": "Render into a file",
            "polycrate_blocks.envoy.render": {"block": {"name": "envoy", "config": {}}, "dest": str(dest)},
            "ignore_errors": True,
        },
    ]
    play.write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]), encoding="utf-8")
    result = subprocess.run(
        [str(BIN / "ansible-playbook"), str(play)], cwd=ROOT, env=ENV, capture_output=True, text=True, check=False
    )
    output = result.stdout + result.stderr
    # ansible-core 2.18's YAML result format (Polycrate's image) folds long messages and doubles quotes.
    flat = " ".join(output.split()).replace("''", "'")
    assert 'polycrate_blocks.envoy.validate: pass Polycrate\'s block variable as `block: "{{ block }}"`' in flat
    assert f"render: cannot write {dest}/" in flat, output
    assert "must be a folder this user can write" in flat
    assert "Traceback" not in output
    assert "Finalization of task args" not in output
    assert recap(result.stdout)["ignored"] == 2


@pytest.mark.not_in_image
def test_values_json_cannot_hold_fail_by_path_and_remove_stale(tmp_path: Path) -> None:
    """An unquoted date, .inf and !!binary reach the action as Python values (Ansible tags the date): each is
    a problem at its config path, every other problem is still reported, and the previous render goes (they
    used to end in a bare "Task failed", the previous render left in place)."""
    artifacts = tmp_path / "artifacts"
    assert run_render(tmp_path, {}, artifacts).returncode == 0
    extra = tmp_path / "extra.yml"
    extra.write_text(
        "block:\n"
        f"  name: envoy\n  version: 0.0.0\n  artifacts: {{path: {artifacts}}}\n"
        "  config:\n"
        "    service: {type: ClusterIP, loadbalancer_ip: 192.0.2.1, annotations: {example.com/since: 2024-01-01,"
        " example.com/blob: !!binary AAEC}}\n"
        "    waf: {workers: .inf}\n",
        encoding="utf-8",
    )
    result = playbook(extra, "render")
    assert result.returncode != 0
    for path in (
        "config.service.annotations.example.com/since",
        "config.service.annotations.example.com/blob",
        "config.waf.workers",
        "config.service.loadbalancer_ip",
    ):
        assert f"{path}:" in result.stdout, result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert not (artifacts / "manifests").exists()
    assert not (artifacts / "plan.yaml").exists()


@pytest.mark.not_in_image
@pytest.mark.go_binary
def test_render_asks_the_waf_compiler_and_removes_stale(tmp_path: Path) -> None:
    """extra_directives only the WAF's compiler refuses (an unknown transformation): render asks envoy-waf
    --check (waf/bin/envoy-waf), fails at config.waf.extra_directives and removes the previous render."""
    if not (ROOT / "waf/bin/envoy-waf").is_file():
        pytest.fail("waf/bin/envoy-waf is missing: run `make waf-build`")
    artifacts = tmp_path / "artifacts"
    assert run_render(tmp_path, {}, artifacts).returncode == 0
    cfg = {
        "default_gateway": {"enabled": True, "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}]},
        "waf": {
            "enabled": True,
            "default_policy": {"enabled": True},
            "extra_directives": 'SecRule ARGS "@rx a" "id:10001,phase:2,deny,t:nosuchtransformation"',
        },
    }
    result = run_render(tmp_path, cfg, artifacts)
    assert result.returncode != 0
    assert "config.waf.extra_directives: the WAF refuses these settings" in result.stdout, result.stdout
    assert not (artifacts / "manifests").exists()


# --- Short, quiet output: what a user reads ----------------------------------------------------------------------

# The environment block.poly's actions set (Polycrate sets ANSIBLE_VARS_ENABLED=polycrate_vars for script actions).
ACTION_ENV = {
    "ANSIBLE_STDOUT_CALLBACK": "polycrate_blocks.envoy.abridged",
    "ANSIBLE_DISPLAY_OK_HOSTS": "false",
    "ANSIBLE_ACTION_WARNINGS": "true",
    "ANSIBLE_VARS_ENABLED": "polycrate_vars,host_group_vars,polycrate_blocks.envoy.quiet",
}


def make_render(artifacts: Path, config: Path | None = None) -> subprocess.CompletedProcess[str]:
    args = ["make", "--no-print-directory", "render", f"ARTIFACTS={artifacts}"]
    env = {k: v for k, v in ENV.items() if not k.startswith(("MAKE", "MFLAGS"))}
    return subprocess.run(
        [*args, *([f"CONFIG={config}"] if config else [])],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.not_in_image
def test_block_poly_actions_enable_the_quiet_vars_plugin() -> None:
    """ACTION_ENV is what block.poly's actions set (so the tests below judge the Polycrate action's output)."""
    block_poly = (ROOT / "block.poly").read_text(encoding="utf-8")
    actions = yaml.safe_load(block_poly)["actions"]
    for action in actions:
        line = " ".join(action["script"])
        assert "ANSIBLE_DISPLAY_OK_HOSTS=false" in line
        assert 'ANSIBLE_VARS_ENABLED="${ANSIBLE_VARS_ENABLED:+$ANSIBLE_VARS_ENABLED,}host_group_vars,' in line
        assert "polycrate_blocks.envoy.quiet" in line


@pytest.mark.not_in_image
def test_a_successful_make_render_prints_ten_lines_without_a_warning(tmp_path: Path) -> None:
    """A real `make render`: 10 lines or fewer, no warning (Polycrate's `block`/`action` are reserved names to
    Ansible: the block's vars plugin drops exactly that warning), and the same through the action's settings."""
    result = make_render(tmp_path / "artifacts")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert len(output.splitlines()) <= 10, output
    assert "WARNING" not in output
    assert "Rendered into" in output
    snap = polycrate.snapshot(BLOCK_POLY, {"config": {}}, str(tmp_path / "action"))
    snap_file = tmp_path / "snapshot.yml"
    snap_file.write_text(yaml.safe_dump(snap), encoding="utf-8")
    action = subprocess.run(
        [str(BIN / "ansible-playbook"), "-e", f"@{snap_file}", "playbooks/render.yml"],
        cwd=ROOT,
        env={**ENV, **ACTION_ENV},
        capture_output=True,
        text=True,
        check=False,
    )
    output = action.stdout + action.stderr
    assert action.returncode == 0, output
    assert len(output.splitlines()) <= 10, output
    assert "WARNING" not in output


@pytest.mark.not_in_image
def test_other_warnings_are_still_shown(tmp_path: Path) -> None:
    """The vars plugin drops exactly the reserved-name warning for `block` and `action`: another reserved name
    still warns."""
    snap = polycrate.snapshot(BLOCK_POLY, {"config": {}}, str(tmp_path / "artifacts"))
    snap_file = tmp_path / "snapshot.yml"
    snap_file.write_text(yaml.safe_dump({**snap, "environment": {}}), encoding="utf-8")
    output = "".join(playbook(snap_file, "render", "--check").__getattribute__(k) for k in ("stdout", "stderr"))
    assert "Found variable using reserved name 'environment'" in output
    assert "reserved name 'block'" not in output
    assert "reserved name 'action'" not in output


@pytest.mark.not_in_image
def test_a_failed_make_render_shows_its_problems_first_and_once(tmp_path: Path) -> None:
    """A real `make render CONFIG=bad.yml`: every problem within the first 10 lines of the output, each once."""
    bad = tmp_path / "bad.yml"
    bad.write_text('config:\n  data_plane:\n    replicas: "2"\n  namespace: Bad_NS\n', encoding="utf-8")
    result = make_render(tmp_path / "artifacts", bad)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    head = "\n".join(output.splitlines()[:10])
    for problem in (
        "config.data_plane.replicas: must be of type integer, got str '2'; write 2 without quotes",
        "config.namespace: 'Bad_NS' is not valid",
    ):
        assert problem in head, output
        assert output.count(problem) == 1, output
    assert "WARNING" not in output
    assert output.count("invalid envoy block config") == 1, output
