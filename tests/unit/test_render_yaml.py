"""Invariant: no rendered file holds a YAML anchor or alias. Builders share one dict between objects (a selector,
a toleration list); PyYAML would write it once as `&id001` and then `*id001`, which GitOps diffs and some tools
mishandle. Every example's render and a render with every component on are read back event by event.

Mutation check (done once): removing render._Dumper.ignore_aliases turned both tests red (18 files with anchors
in the examples)."""

from __future__ import annotations

import pytest
import yaml

from envoy_block import render
from envoy_block.polycrate import merge_config
from tests.conftest import ROOT
from tests.support.helpers import plan, with_gateway
from tools import sync_docs

EVERYTHING = merge_config(
    with_gateway({"waf": {"enabled": True}}),
    {
        "client_traffic": {"enabled": True, "proxy_protocol": {"enabled": True}},
        "backend_traffic": {"enabled": True},
        "metrics": {"vmpodscrape": {"enabled": True}, "rules": {"enabled": True}, "dashboards": {"enabled": True}},
        "network_policy": {"provider": "cilium"},
    },
)


def anchored(text: str) -> list[str]:
    """Where a YAML text defines an anchor or uses an alias."""
    found = []
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent) or anchor:
            found.append(f"{event.start_mark}: {type(event).__name__} {anchor}")
    return found


def test_no_example_render_holds_an_anchor() -> None:
    outputs = sync_docs.example_outputs()
    assert len({path.relative_to(ROOT / "examples").parts[0] for path in outputs}) >= 8
    bad = {str(path): where for path, text in outputs.items() if (where := anchored(text))}
    assert not bad


def test_no_render_with_every_component_on_holds_an_anchor() -> None:
    files = render.files(plan(EVERYTHING))
    assert any("VMRule" in text for text in files.values())
    bad = {rel: where for rel, text in files.items() if (where := anchored(text))}
    assert not bad


@pytest.mark.parametrize("text", ["a: &x {b: 1}\nc: *x\n", "- &y 1\n- *y\n"])
def test_the_check_sees_anchors(text: str) -> None:
    assert anchored(text)
