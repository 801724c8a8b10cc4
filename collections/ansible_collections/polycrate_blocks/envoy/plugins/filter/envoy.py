"""Thin adapters from Ansible to the pure envoy_block package: the credentials the no_log tasks hand on (the
plan itself is the validate action's fact). Every decision is an action (polycrate_blocks.envoy.install_state,
.crd_selection, .chart_check, .install_outcome, .uninstall_decision, .status_report); validation and render are
actions too (.validate, .render), so that a bad config fails once, cleanly, instead of inside a templating error
chain."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import (
    builder,
    config,
    inputs,
)

DOCUMENTATION = r"""
name: envoy
short_description: The credentials the envoy block's no_log tasks pass on
description:
  - C(helm_release) returns the helm release including chart credentials; use it only in tasks with C(no_log).
  - C(waf_image_auth) returns the credentials the waf-image action logs in with (C(waf.image_build.auth)); use
    it only in tasks with C(no_log).
  - None of them decides anything; the decisions are actions (install_state, crd_selection, chart_check,
    install_outcome, uninstall_decision, status_report, waf_image), which return what the roles carry out.
  - They raise one error listing every config problem with its config path; validate first with the
    C(polycrate_blocks.envoy.validate) action, which reports them cleanly.
options:
  _input:
    description: Polycrate's C(block) variable (C(name), C(version), C(config)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Log in to the chart registry
  kubernetes.core.helm_registry_auth:
    host: "{{ __helm.registry_host }}"
    username: "{{ __helm.auth.username }}"
    password: "{{ __helm.auth.password }}"
  vars:
    __helm: "{{ block | polycrate_blocks.envoy.helm_release }}"
  no_log: true
"""

RETURN = r"""
_value:
  description: The helm release with its credentials (helm_release), or the WAF image registry's (waf_image_auth).
  type: raw
"""


def _guard(func: Callable[[Mapping[str, Any]], Any]) -> Callable[[Any], Any]:
    def wrapper(block: Any) -> Any:
        if not isinstance(block, Mapping):
            raise AnsibleFilterError(f"envoy: expected the Polycrate `block` mapping, got {type(block).__name__}")
        try:
            # Plain data for the pure core: Ansible hands over tagged str/dict subclasses.
            return func(inputs.untag(dict(block)))
        except config.ConfigError as exc:
            raise AnsibleFilterError(str(exc)) from None
        except builder.BuildError as exc:  # the last resort: still the section it was building
            raise AnsibleFilterError(
                f"config.{exc.section}: building the plan failed ({exc}); a bug: report it"
            ) from None

    wrapper.__name__ = func.__name__
    return wrapper


def helm_release(block: Mapping[str, Any]) -> dict[str, Any]:
    return dict(builder.plan_from_block(block).to_dict(include_secrets=True)["helm"])


def waf_image_auth(block: Mapping[str, Any]) -> dict[str, str]:
    return dict(config.load(block).values["waf"]["image_build"]["auth"])


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        guarded: dict[str, Callable[..., Any]] = {f.__name__: _guard(f) for f in (helm_release, waf_image_auth)}
        return guarded
