"""Thin adapters from Ansible to the pure envoy_block package: the plan and what install, uninstall and status
read from it. Validation and render are actions (polycrate_blocks.envoy.validate / .render), so that a bad
config fails once, cleanly, instead of inside a templating error chain."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ansible.errors import AnsibleFilterError
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import (
    builder,
    config,
    crds,
    inputs,
    lifecycle,
)

DOCUMENTATION = r"""
name: envoy
short_description: Build the envoy block's manifest plan
description:
  - C(plan) returns the ordered plan (objects with phase, apply and delete rank, wait condition, file name),
    the helm release without credentials, the CRD settings and the ownership labels.
  - C(helm_release) returns the helm release including chart credentials; use it only in tasks with C(no_log).
  - C(owned_kinds) lists the apiVersion/kind pairs the block can own (install prunes, uninstall removes them).
  - C(leftovers) takes the C(results) of a looped k8s_info over C(owned_kinds) and the plan (or C(none)) and
    returns the owned objects the plan does not render, in delete order.
  - C(tenant_gateways) takes Gateways as read, C(leftovers)' rows and the ownership labels and returns
    C(namespace/name) of each Gateway on one of those GatewayClasses that is not the block's own.
  - C(third_party_kinds) lists the plan's kinds whose CRDs other components provide (VictoriaMetrics, Cilium,
    Calico), with what provides them.
  - C(install_lookups) lists everything install reads before it writes (namespace, CRDs, owned objects,
    third-party kinds, helm's release record, the controller) as C(polycrate_blocks.envoy.k8s_list)
    queries (the C(polycrate_blocks.envoy.install_state) action decides from their results what install
    must do); C(gateway_address) formats a Gateway and its addresses for the summary; C(wait_queries)
    lists the plan's GatewayClasses and
    Gateways (and, with its second argument, the controller's Deployment), with their wait condition when
    its first argument is true.
  - C(status_report) turns looked-up objects into a health table (C(lines)) and an overall C(healthy) flag.
  - C(crd_manifests) takes the plan (and the rendered text of gateway-crds-helm when C(crds.directory) is
    empty) and returns C(crds) (the CustomResourceDefinition documents of the block's API groups and
    Gateway API channel, from any *.yaml/*.yml below the folder or from the chart) and their C(names); it
    fails listing the CRDs the config needs that are missing.
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


def owned_kinds(plan: Mapping[str, Any]) -> list[dict[str, str]]:
    return lifecycle.owned_kinds()


def leftovers(
    results: list[Mapping[str, Any]], plan: Mapping[str, Any] | None, ownership_labels: Mapping[str, str]
) -> list[dict[str, Any]]:
    found = [obj for result in results for obj in result.get("resources", [])]
    plain = json.loads(json.dumps({"found": found, "plan": plan, "labels": dict(ownership_labels)}))
    return lifecycle.leftovers(plain["found"], plain["plan"], plain["labels"])


def tenant_gateways(
    gateways: list[Mapping[str, Any]], owned: list[Mapping[str, Any]], ownership_labels: Mapping[str, str]
) -> list[str]:
    plain = json.loads(json.dumps({"gateways": gateways, "owned": owned, "labels": dict(ownership_labels)}))
    return lifecycle.tenant_gateways(plain["gateways"], plain["owned"], plain["labels"])


def crd_manifests(plan: Mapping[str, Any], rendered: str | None = None, origin: str = "") -> dict[str, Any]:
    """The CRDs from crds.directory, or from the chart's rendered text; stamped with `origin` (install's
    source digest) when given."""
    settings = json.loads(json.dumps(plan["crds"]))
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


def status_report(
    results: list[Mapping[str, Any]], plan: Mapping[str, Any], deployment: Mapping[str, Any] | None
) -> dict[str, Any]:
    plain = json.loads(
        json.dumps(
            {
                "found": [obj for result in results for obj in result.get("resources", [])],
                "plan": plan,
                "deployment": deployment,
            }
        )
    )
    rows = lifecycle.status_rows(plain["plan"], plain["found"], plain["deployment"])
    return {"lines": lifecycle.status_table(rows), "healthy": all(r["ok"] for r in rows), "rows": rows}


def proxy_queries(owned: list[Mapping[str, Any]], services_only: bool = False) -> list[dict[str, Any]]:
    return lifecycle.proxy_queries(json.loads(json.dumps(owned)), services_only)


def status_queries(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    return lifecycle.status_queries(json.loads(json.dumps(plan)))


def third_party_kinds(plan: Mapping[str, Any]) -> list[dict[str, str]]:
    return lifecycle.third_party_kinds(json.loads(json.dumps(plan)))


def install_lookups(plan: Mapping[str, Any]) -> list[dict[str, Any]]:
    return lifecycle.install_lookups(json.loads(json.dumps(plan)))


def gateway_address(gateway: Mapping[str, Any]) -> str:
    return lifecycle.gateway_line(json.loads(json.dumps(gateway)))


def wait_queries(plan: Mapping[str, Any], wait: bool, controller: bool = False) -> list[dict[str, Any]]:
    return lifecycle.wait_queries(json.loads(json.dumps(plan)), bool(wait), bool(controller))


class FilterModule:
    def filters(self) -> dict[str, Callable[..., Any]]:
        guarded: dict[str, Callable[..., Any]] = {f.__name__: _guard(f) for f in (plan, helm_release)}
        return {
            **guarded,
            "owned_kinds": owned_kinds,
            "leftovers": leftovers,
            "tenant_gateways": tenant_gateways,
            "crd_manifests": crd_manifests,
            "stale_crds": stale_crds,
            "status_report": status_report,
            "status_queries": status_queries,
            "proxy_queries": proxy_queries,
            "third_party_kinds": third_party_kinds,
            "install_lookups": install_lookups,
            "gateway_address": gateway_address,
            "wait_queries": wait_queries,
        }
