"""Derived files cannot drift: the config reference in docs/configuration.md, examples.poly and
examples/*/rendered are what tools/sync_docs.py generates from config.schema.json and examples/*/config.yml;
block metadata is well-formed; README.md stays a short entry page whose links, and the docs/ pages' links,
all lead somewhere."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 250


def test_generated_files_are_current() -> None:
    result = subprocess.run(
        [sys.executable, "tools/sync_docs.py", "--check"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_config_reference_names_every_schema_leaf() -> None:
    """Belt and braces for the generator: every key path of config.schema.json appears in the reference table
    of docs/configuration.md (the page tools/sync_docs.py writes it into)."""
    from envoy_block import config
    from tools import sync_docs

    assert sync_docs.REFERENCE_PAGE == DOCS / "configuration.md"
    page = sync_docs.REFERENCE_PAGE.read_text(encoding="utf-8")
    schema = config.load_schema()
    for path, *_ in sync_docs._rows(schema, schema, ""):
        assert f"| `{path}` |" in page, path


def _markdown_pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def _without_fences(text: str) -> str:
    """The text without fenced code blocks, where `#` starts a comment, not a heading."""
    return re.sub(r"^```.*?^```[^\n]*$", "", text, flags=re.MULTILINE | re.DOTALL)


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code spans, where brackets are not markdown."""
    return re.sub(r"`[^`]*`", "", _without_fences(text))


def _links(text: str) -> list[str]:
    """Targets of inline links and images, `[text](target)`, outside code."""
    return re.findall(r"\]\(([^)\s]+)\)", _prose(text))


def _is_url(target: str) -> bool:
    """https:, mailto: and other scheme links, which the link check leaves alone."""
    return re.match(r"[a-z][a-z0-9+.-]*:", target) is not None


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text (markup and link targets dropped), lower case, punctuation
    other than `-` and `_` removed, each space a `-`."""
    heading = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    heading = heading.replace("`", "").replace("*", "")
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file, numbered like GitHub's when a heading repeats."""
    seen: dict[str, int] = {}
    anchors = set()
    for line in _without_fences(path.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"(#{1,6})\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = _slug(match.group(2))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def test_readme_is_a_short_entry_page() -> None:
    """README.md is the block's entry page, read top to bottom: under 250 lines, the details live in docs/.
    Mutation check (done once): 40 blank lines appended to README.md turned this red."""
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < README_MAX_LINES, f"README.md has {lines} lines; move details into a docs/ page"


def test_relative_links_resolve() -> None:
    """Every relative link in README.md and docs/*.md names a file or folder that exists, and a `#anchor` on a
    markdown file names one of its headings (GitHub's slugs), so moving or renaming a section cannot leave a
    dead link. Mutation check (done once): a link to docs/nowhere.md and one to README.md#no-such-section
    each turned this red."""
    dead = []
    for page in _markdown_pages():
        for target in _links(page.read_text(encoding="utf-8")):
            if _is_url(target):
                continue
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            where = f"{page.relative_to(ROOT)}: {target}"
            if not dest.exists():
                dead.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                dead.append(f"{where} (no heading with that anchor)")
    assert not dead, "\n".join(dead)


def test_every_docs_page_is_linked_from_the_readme() -> None:
    """No docs/ page is an orphan: README.md links each one, so a reader of the entry page can reach it.
    Mutation check (done once): a new docs/orphan.md turned this red."""
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in _links(README.read_text(encoding="utf-8"))}
    orphans = [p.relative_to(ROOT) for p in sorted(DOCS.glob("*.md")) if p.resolve() not in linked]
    assert not orphans, f"not linked from README.md: {orphans}"


def test_block_package_holds_the_pages_the_readme_links() -> None:
    """The package `polycrate block push` ships (tools/block_package.py) holds README.md and every file it links,
    so the docs/ pages reach whoever pulls the block. Mutation check (done once): "docs" dropped from
    block_package.FOLDERS turned this red."""
    from tools import block_package

    packaged = set(block_package.package_files())
    files = [t.partition("#")[0] for t in _links(README.read_text(encoding="utf-8")) if not _is_url(t)]
    wanted = {Path("README.md"), *(Path(f) for f in files if f)}
    assert sorted(wanted - packaged) == []


def test_readme_sections_named_by_the_code_exist() -> None:
    """Messages and comments of the block say where to read on ("README: Running under Polycrate"); each
    README section they name is a heading of README.md. Mutation check (done once): renaming README's
    "Running under Polycrate" heading turned this red."""
    named = set()
    for path in sorted((ROOT / "collections").rglob("*.py")):
        named.update(re.findall(r"README: ([A-Z][^).\"]*)", path.read_text(encoding="utf-8")))
    assert named, "no code names a README section any more: drop this test"
    headings = _anchors(README)
    missing = sorted(name for name in named if _slug(name) not in headings)
    assert not missing, f"README.md has no such section: {missing}"


def test_block_poly_actions_run_their_playbook_from_the_block_folder() -> None:
    """Script actions that change into the block's folder: Polycrate v0.23.3 runs a `playbook:` action in the
    workspace root in --local mode, where the playbook and ansible.cfg are not found."""
    block = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    assert block["name"] == "envoy"
    assert block["kind"] == "k8sapp"
    names = {a["name"] for a in block["actions"]}
    assert names == {"install", "uninstall", "render", "status", "plan", "waf-image"}
    for action in block["actions"]:
        assert "playbook" not in action, action
        # One line: Polycrate runs every script line in the background (`line &`), so a `cd` of its own
        # would not carry over to the next line.
        [line] = action["script"]
        assert line.startswith('cd "{{ .Block.Workdir.Path }}" && '), line
        playbook = f"playbooks/{action['name']}.yml"
        assert line.endswith(f'ansible-playbook -e "@$POLYCRATE_WORKSPACE_SNAPSHOT_YAML" {playbook}'), line
        assert (ROOT / playbook).is_file(), action


def test_no_schema_json_for_polycrate_to_load() -> None:
    """Polycrate v0.23.3 stops before any action when a block has a schema.json (its gojsonschema loader
    cannot marshal the YAML config): the block's schema lives under another name."""
    assert not (ROOT / "schema.json").exists()
    assert (ROOT / "config.schema.json").is_file()


def test_changelog_is_a_polycrate_list() -> None:
    entries = yaml.safe_load((ROOT / "CHANGELOG.poly").read_text(encoding="utf-8"))
    block = yaml.safe_load((ROOT / "block.poly").read_text(encoding="utf-8"))
    assert isinstance(entries, list)
    assert entries
    for entry in entries:
        assert {"version", "date", "type"} <= entry.keys()
    assert block["version"] in {e["version"] for e in entries}


def test_make_help_names_every_phony_target() -> None:
    """`make help` is the map of the Makefile and mk/*.mk: every .PHONY target has its one line, and no line names
    a target that is gone."""
    makefile = "\n".join(p.read_text() for p in [ROOT / "Makefile", *sorted((ROOT / "mk").glob("*.mk"))])
    phony = {target for line in re.findall(r"^\.PHONY: (.*)$", makefile, re.M) for target in line.split()}
    described = set(re.findall(r"^## ([a-z-]+): \S", makefile, re.M))
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    assert phony - described == set(), "add a `## target: what it does` line above these targets"
    assert described - targets == set(), "these help lines name no target"
    shown = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert {line.split()[0] for line in shown.splitlines()} == described


def test_make_alone_prints_help_even_without_shared() -> None:
    """Plain `make` lists the targets (it used to build the .venv), also in a clone without ../shared beside it
    (`cat:` errors were printed before the help)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    help_text = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    for command in (["make", "-s"], ["make", "-s", "IMAGE_LOCK=/nonexistent/shared/polycrate/lock"]):
        shown = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
        assert shown.stdout == help_text
        assert shown.stderr == ""
