"""Thin adapters from Ansible to the pure envoy_block package: validate, plan, render files."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import builder, config, render

DOCUMENTATION = r"""
name: envoy
short_description: Validate the envoy block config and build its manifest plan
description:
  - C(validate) checks C(block.config) against schema.json and the cross-field rules and returns the warnings.
  - C(plan) returns the ordered plan (objects with phase, apply and delete rank, wait condition, file name),
    the helm release without credentials, the CRD settings and the ownership labels.
  - C(helm_release) returns the helm release including chart credentials; use it only in tasks with C(no_log).
  - C(render_files) returns a mapping of relative file path to file content, as C(render) writes them.
  - All of them raise one error listing every config problem with its config path.
options:
  _input:
    description: Polycrate's C(block) variable (C(name), C(version), C(config)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Validate the config
  ansible.builtin.set_fact:
    __envoy_warnings: "{{ block | polycrate_blocks.envoy.validate }}"

- name: Build the plan
  ansible.builtin.set_fact:
    __envoy_plan: "{{ block | polycrate_blocks.envoy.plan }}"
"""

RETURN = r"""
_value:
  description: Warnings (validate), the plan (plan, helm_release) or path -> content (render_files).
  type: raw
"""


def _guard(func: Callable[[Mapping[str, Any]], Any]) -> Callable[[Any], Any]:
    def wrapper(block: Any) -> Any:
        if not isinstance(block, Mapping):
            raise AnsibleFilterError(f"envoy: expected the Polycrate `block` mapping, got {type(block).__name__}")
        try:
            # Plain data for the pure core: Ansible hands over tagged str/dict subclasses.
            return func(json.loads(json.dumps(dict(block))))
        except config.ConfigError as exc:
            raise AnsibleFilterError(str(exc)) from None

    wrapper.__name__ = func.__name__
    return wrapper


def validate(block: Mapping[str, Any]) -> list[str]:
    return list(config.load(block).warnings)


def plan(block: Mapping[str, Any]) -> dict[str, Any]:
    return builder.plan_from_block(block).to_dict(include_secrets=False)


def helm_release(block: Mapping[str, Any]) -> dict[str, Any]:
    return dict(builder.plan_from_block(block).to_dict(include_secrets=True)["helm"])


def render_files(block: Mapping[str, Any]) -> dict[str, str]:
    return render.files(builder.plan_from_block(block))


class FilterModule:
    def filters(self) -> dict[str, Callable[[Any], Any]]:
        return {f.__name__: _guard(f) for f in (validate, plan, helm_release, render_files)}
