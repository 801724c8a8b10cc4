"""The seed README's own configurations, read verbatim from ../shared/seed/envoy-block-README.txt at test time.

The seed is plain text (no code fences): a YAML block is a paragraph (blank-line separated) whose lines are
all YAML-shaped (a lower-case top-level key, an indented line, or a comment) and that loads as a mapping.
Each block is keyed by the heading it stands under (a one-line paragraph without closing punctuation) and
its leading comment, if any ("# envoy (platform)"). The file is never copied into the repo.

Blocks are not all alike (SEED_ROLES, keyed by heading): most are envoy configs that must work alone; a
block for another Polycrate block (the k3s-server consumer) is checked against what that block expects of
this one; a block whose own comment names a requirement ("requires default_gateway.enabled") works with
the block that provides it, and fails alone with that requirement as the one problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from envoy_block.polycrate import merge_config
from tests.support.shared import shared_dir

SEED_FILE = "seed/envoy-block-README.txt"
_YAML_LINE = re.compile(r"^(\s+\S.*|#.*|[a-z_][a-z0-9_]*:(\s.*)?)$")
_TOP_KEY = re.compile(r"^[a-z_][a-z0-9_]*:")


@dataclass(frozen=True)
class SeedBlock:
    heading: str
    comment: str  # the block's leading comment line, "" if none
    text: str  # verbatim

    @property
    def key(self) -> str:
        return f"{self.heading} | {self.comment}" if self.comment else self.heading

    @property
    def data(self) -> dict[str, Any]:
        loaded = yaml.safe_load(self.text)
        assert isinstance(loaded, dict), self.key
        return loaded

    @property
    def config(self) -> dict[str, Any]:
        """The block config: a workspace-style `config:` entry is unwrapped, a bare mapping is the config."""
        data = self.data
        return dict(data["config"]) if set(data) == {"config"} else data


def _is_heading(paragraph: list[str]) -> bool:
    line = paragraph[0].strip()
    return len(paragraph) == 1 and len(line) <= 60 and not line.endswith((".", ":"))


def blocks(path: Path | None = None) -> list[SeedBlock]:
    """Every YAML block of the seed README, in file order."""
    text = (path or shared_dir() / SEED_FILE).read_text(encoding="utf-8")
    found: list[SeedBlock] = []
    heading = ""
    for chunk in re.split(r"\n\s*\n", text):
        paragraph = chunk.strip("\n").splitlines()
        if not paragraph:
            continue
        first_key = next((line for line in paragraph if not line.startswith("#")), "")
        if all(_YAML_LINE.match(line) for line in paragraph) and _TOP_KEY.match(first_key):
            try:
                loaded = yaml.safe_load(chunk)
            except yaml.YAMLError:
                loaded = None
            if isinstance(loaded, dict):
                comment = paragraph[0].lstrip("# ").strip() if paragraph[0].startswith("#") else ""
                found.append(SeedBlock(heading, comment, chunk.strip("\n") + "\n"))
                continue
        if _is_heading(paragraph):
            heading = paragraph[0].strip()
    return found


# What each block is, by key (heading, or "heading | leading comment"). "alone": an envoy config that must
# render, install and uninstall as it stands. ("with", key): it needs the named block merged under it.
# ("consumer", name): another Polycrate block's config, checked against what that block expects of envoy.
SHARED_VIP = "Shared VIP + default Gateway"
K3S_HEADING = "Consumer: Managed Controlplane (k3s-server)"
SEED_ROLES: dict[str, tuple[str, str]] = {
    SHARED_VIP: ("alone", ""),
    f"{K3S_HEADING} | envoy (platform)": ("alone", ""),
    f"{K3S_HEADING} | k3s-server (MCP)": ("consumer", "k3s-server"),
    "HTTP:80 / ACME": ("alone", ""),
    "Proxy Protocol": ("with", SHARED_VIP),  # its comment: "requires default_gateway.enabled or target_gateway_name"
    "WAF (Coraza via ext_proc)": ("alone", ""),
}


def by_key() -> dict[str, SeedBlock]:
    return {b.key: b for b in blocks()}


def envoy_configs() -> dict[str, dict[str, Any]]:
    """Every envoy config the seed shows, by "seed: <key>": blocks that stand alone as they are, and
    blocks with a stated requirement merged over the block that provides it (Polycrate's merge)."""
    found = by_key()
    configs: dict[str, dict[str, Any]] = {}
    for key, (role, other) in SEED_ROLES.items():
        if role == "alone":
            configs[f"seed: {key}"] = found[key].config
        elif role == "with":
            configs[f"seed: {key} (with {other})"] = dict(merge_config(found[other].config, found[key].config))
    return configs
