"""Polycrate lower-cases every config key it hands to the block (viper), so the block names the keys that
workspace.poly spells with capitals (an annotation such as example.com/MixedCase would reach the cluster as
example.com/mixedcase, silently). Mutation checks (done once): not descending below the config's top level, or
into lists, turned test_only_keys_with_capitals_are_named red."""

from __future__ import annotations

from envoy_block.polycrate import lowercased_keys

WORKSPACE = {
    "name": "ws",
    "blocks": [
        {
            "name": "envoy",
            "config": {
                "service": {"annotations": {"example.com/MixedCase": "x", "metallb.universe.tf/address-pool": "p"}},
                "default_gateway": {
                    "enabled": True,
                    "listeners": [{"name": "HTTP", "allowed_routes_selector": {"match_labels": {"Team": "a"}}}],
                },
                "x-1": "1",
            },
        },
        {"name": "other", "config": {"Foo": 1}},
    ],
}


def test_only_keys_with_capitals_are_named() -> None:
    annotation, label = lowercased_keys(WORKSPACE, "envoy")
    assert annotation.startswith("config.service.annotations.example.com/MixedCase: Polycrate lower-cases")
    assert "'example.com/mixedcase'" in annotation
    assert label.startswith("config.default_gateway.listeners[0].allowed_routes_selector.match_labels.Team:")


def test_other_blocks_and_no_blocks_are_ignored() -> None:
    assert lowercased_keys(WORKSPACE, "absent") == []
    assert lowercased_keys({"name": "ws"}, "envoy") == []
