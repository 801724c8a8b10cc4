"""The block's one loader reads an override as Polycrate v0.23.3 reads workspace.poly: scalars typed as go-yaml v3
types them (gopkg.in/yaml.v3 resolve.go), the values as Ansible reads them back from go-yaml's snapshot (a float
as Go's strconv.FormatFloat 'g' writes it), keys lower-cased at every depth as viper does. The real CLI is the
judge in tests/polycrate/test_parity.py; these pin the cases one by one."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from envoy_block import inputs, polycrate

UTC = datetime.UTC


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("yes", "yes"),  # YAML 1.1 booleans are strings to go-yaml v3
        ("on", "on"),
        ("No", "No"),
        ("y", "y"),
        ("True", True),
        ("FALSE", False),
        ("~", None),
        ("Null", None),
        ("443", 443),
        ("0x1F", 31),
        ("0o17", 15),
        ("0755", 493),  # a leading 0 is octal to Go's ParseInt
        ("0b101", 5),
        ("1_000", 1000),
        ("+12", 12),
        ("08", 8),  # not octal, so a float, written back as 8
        ("2.0", 2),  # go-yaml writes the float 2 as `2`
        ("2.5", 2.5),
        ("1e6", "1e+06"),  # written 1e+06, which YAML 1.1 reads as a string
        (".5", 0.5),
        ("1:20", "1:20"),  # no sexagesimal numbers
        ("2024-01-31", datetime.datetime(2024, 1, 31, tzinfo=UTC)),
        ("v1.9.1", "v1.9.1"),
        ("'443'", "443"),
        ('"yes"', "yes"),
    ],
)
def test_scalars_are_typed_as_polycrate_types_them(text: str, value: Any) -> None:
    loaded = inputs.load_polycrate(f"key: {text}\n", "override.yml")["key"]
    assert loaded == value
    assert type(loaded) is type(value)


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (1000.0, "1000"),
        (123456.0, "123456"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (1e-4, "0.0001"),
        (1e-5, "1e-05"),
        (0.0001234, "0.0001234"),
        (12345678.5, "1.23456785e+07"),
        (-3.0, "-3"),
        (0.0, "0"),
        (float("inf"), ".inf"),
    ],
)
def test_floats_are_written_as_go_writes_them(value: float, written: str) -> None:
    """strconv.FormatFloat(value, 'g', -1, 64), the outputs taken from Go itself."""
    assert inputs._go_float_text(value) == written


def test_keys_are_folded_at_every_depth() -> None:
    data = {"Default_Gateway": {"Enabled": True}, "list": [{"Name": "X"}], "ann": {"a.io/Mixed-Case": "V"}}
    assert polycrate.fold_keys(data) == {
        "default_gateway": {"enabled": True},
        "list": [{"name": "X"}],
        "ann": {"a.io/mixed-case": "V"},
    }


def test_keys_that_fold_to_one_are_refused() -> None:
    with pytest.raises(ValueError, match=r"config.service: the keys 'Type' and 'type' are one key to Polycrate"):
        polycrate.fold_keys({"service": {"Type": "NodePort", "type": "ClusterIP"}})
