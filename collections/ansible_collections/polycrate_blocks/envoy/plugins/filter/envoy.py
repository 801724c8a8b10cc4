"""Thin adapters from Ansible to the pure envoy_block package: the plan and what install reads and waits on.
Uninstall and status decide in their own actions (polycrate_blocks.envoy.uninstall_decision, .status_report);
validation and render are actions too (.validate, .render), so that a bad config fails once, cleanly, instead
of inside a templating error chain."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import fact_plan, plan_refusal
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import (
    builder,
    config,
    crds,
    inputs,
    lifecycle,
    waf_image,
)
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.components import controller
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.plan import Plan

DOCUMENTATION = r"""
name: envoy
short_description: Build the envoy block's manifest plan
description:
  - C(plan) returns the ordered plan (objects with phase, apply and delete rank, wait condition, file name),
    the helm release without credentials, the CRD settings and the ownership labels.
  - C(helm_release) returns the helm release including chart credentials; use it only in tasks with C(no_log).
  - C(chart_problem) takes the plan's helm release and the registered result of C(helm show chart) and
    returns why install must stop ("" when chart.version is there).
  - C(gateway_address) formats a Gateway and its addresses for the summary; C(wait_queries)
    lists the plan's GatewayClasses and
    Gateways (and, with its second argument, the controller's Deployment), with their wait condition when
    its first argument is true; C(previous_controller_query) looks up the controller's pods that are still
    terminating (install waits for none after helm changed the release).
  - C(crd_manifests) takes CRD settings (the plan's C(crds), or the C(crd_settings) install decided: without
    the Gateway API CRDs when another owner's are left alone) and the rendered text of gateway-crds-helm when
    C(crds.directory) is empty, and returns C(crds) (the CustomResourceDefinition documents of the block's API
    groups and Gateway API channel, from any *.yaml/*.yml below the folder or from the chart) and their C(names); it
    fails listing the CRDs the config needs that are missing.
  - C(waf_image_auth) returns the credentials the waf-image action logs in with (C(waf.image_build.auth)); use
    it only in tasks with C(no_log). C(waf_image_pushed) takes the config, what the push printed and the digest
    file's text, and returns what the action tells the user (the pushed digest and how to pin it).
  - The config-taking filters raise one error listing every config problem with its config path; validate
    first with the C(polycrate_blocks.envoy.validate) action, which reports them cleanly.
options:
  _input:
    description: Polycrate's C(block) variable (C(name), C(version), C(config)).
    type: dict
    required: true
"""

EXAMPLES = r"""
- name: Build the plan
  ansible.builtin.set_fact:
    __envoy_plan: "{{ block | polycrate_blocks.envoy.plan }}"
"""

RETURN = r"""
_value:
  description: The plan (plan), the helm release (helm_release), or what the other filters derive from it.
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


def plan(block: Mapping[str, Any]) -> dict[str, Any]:
    return builder.plan_from_block(block).to_dict(include_secrets=False)


def helm_release(block: Mapping[str, Any]) -> dict[str, Any]:
    return dict(builder.plan_from_block(block).to_dict(include_secrets=True)["helm"])


def waf_image_auth(block: Mapping[str, Any]) -> dict[str, str]:
    return dict(config.load(block).values["waf"]["image_build"]["auth"])


def waf_image_pushed(block: Any, push_output: Any, digest_text: Any = "") -> str:
    """What waf-image tells the user after the push (envoy_block.waf_image.pushed)."""
    values = _guard(lambda b: config.load(b).values)(block)
    return waf_image.pushed(values, str(push_output or ""), str(digest_text or ""))


def crd_manifests(crd_settings: Mapping[str, Any], rendered: str | None = None, origin: str = "") -> dict[str, Any]:
    """The CRDs from crds.directory, or from the chart's rendered text, as `crd_settings` (shaped like the
    plan's `crds`) select them; stamped with `origin` (install's source digest) when given."""
    settings = json.loads(json.dumps(crd_settings))
    try:
        if settings["directory"]:
            docs, source = crds.folder_documents(settings["directory"]), f"crds.directory {settings['directory']}"
        else:
            docs, source = crds.documents([("gateway-crds-helm", str(rendered or ""))]), settings["chart_url"]
        return crds.select(
            docs,
            settings["gateway_api"]["install"],
            settings["gateway_api"]["channel"],
            source,
            str(origin or ""),
            version=str(settings["envoy_gateway"]["version"]),
        )
    except crds.CrdError as exc:
        raise AnsibleFilterError(str(exc)) from None


def stale_crds(wanted: list[Mapping[str, Any]], live: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The CRDs to apply: those the cluster does not hold as the block last applied them (live metadata)."""
    return crds.stale(wanted, json.loads(json.dumps(live)))


def gateway_address(gateway: Mapping[str, Any]) -> str:
    return lifecycle.gateway_line(json.loads(json.dumps(gateway)))


def chart_problem(helm: Mapping[str, Any], shown: Mapping[str, Any]) -> str:
    """Why install must stop, from the registered result of `helm show chart`, or "" (components/controller)."""
    return controller.chart_problem(
        json.loads(json.dumps(helm)),
        int(shown.get("rc", 1)),
        str(shown.get("stdout", "")),
        str(shown.get("stderr", "")),
    )


def _typed(plan: Any) -> Plan:
    """The typed Plan from the `envoy_config_plan` fact (envoy_action.fact_plan), or the filter's error."""
    if not isinstance(plan, Mapping):
        raise AnsibleFilterError(f"envoy: expected the plan mapping (envoy_config_plan), got {type(plan).__name__}")
    try:
        return fact_plan(plan)
    except ValueError as exc:
        raise AnsibleFilterError(plan_refusal(exc)) from None


def wait_queries(plan: Mapping[str, Any], wait: bool, controller: bool = False) -> list[dict[str, Any]]:
    return lifecycle.wait_queries(_typed(plan), bool(wait), bool(controller))


def previous_controller_query(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    return lifecycle.previous_controller_query(_typed(plan))


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        guarded: dict[str, Callable[..., Any]] = {f.__name__: _guard(f) for f in (plan, helm_release, waf_image_auth)}
        return {
            **guarded,
            "waf_image_pushed": waf_image_pushed,
            "crd_manifests": crd_manifests,
            "stale_crds": stale_crds,
            "gateway_address": gateway_address,
            "wait_queries": wait_queries,
            "previous_controller_query": previous_controller_query,
            "chart_problem": chart_problem,
        }
