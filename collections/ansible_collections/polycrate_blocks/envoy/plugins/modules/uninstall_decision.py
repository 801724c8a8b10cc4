"""Documentation only: polycrate_blocks.envoy.uninstall_decision runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: uninstall_decision
short_description: Decide what uninstall removes, and in what order, from one read of the cluster
description:
  - Takes the plan the envoy_config role built (O(plan)), reads in one C(polycrate_blocks.envoy.k8s_list) run
    what this block instance owns, every Gateway, the controller's Deployment and the namespace, and returns
    what uninstall removes in order (see RETURN), decided by the pure C(lifecycle.decide_uninstall).
  - Fails once, cleanly, nothing removed, while a Gateway of another owner uses one of the block's
    GatewayClasses, or while waits are on, the block manages the controller and it has no ready pod (only a
    running controller removes a Gateway's proxies). A controller pod on its way is waited for, up to
    C(wait.timeout).
version_added: "0.13.0"
options:
  poll_delay:
    description: Seconds between two reads of the controller while a pod of it is on its way.
    type: int
    default: 2
extends_documentation_fragment:
  - polycrate_blocks.envoy.decision
  - kubernetes.core.k8s_auth_options
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Decide what uninstall removes
  polycrate_blocks.envoy.uninstall_decision:
    plan: "{{ envoy_config_plan }}"
  register: __removal
"""

RETURN = r"""
gateways:
  description: The block's Gateways, deleted first while the controller runs (C(kubernetes.core.k8s) definitions).
  returned: success
  type: list
proxy_services:
  description: >-
    C(polycrate_blocks.envoy.k8s_list) queries for the proxy Services the controller must remove once the
    Gateways are gone; empty when waits are off.
  returned: success
  type: list
proxies:
  description: >-
    C(polycrate_blocks.envoy.k8s_list) queries for every proxy object (removed when the controller left them).
  returned: success
  type: list
others:
  description: The other owned objects in the plan's delete order (C(kubernetes.core.k8s) definitions).
  returned: success
  type: list
uninstall_helm:
  description: Whether the block's gateway-helm release is uninstalled.
  returned: success
  type: bool
remove_crds:
  description: Whether the CRDs go too (C(uninstall.remove_crds)).
  returned: success
  type: bool
crd_settings:
  description: >-
    With C(uninstall.remove_crds), the CRD settings the CRDs to delete are read by: without the Gateway API
    CRDs when another owner marked one of them (C(lifecycle.crd_owners.removal)).
  returned: success
  type: dict
crds_kept:
  description: Which CRDs C(uninstall.remove_crds) keeps and why ("" when none).
  returned: success
  type: str
render_crd_chart:
  description: Whether to render gateway-crds-helm for the names of the CRDs to delete.
  returned: success
  type: bool
login:
  description: Whether to log in to the chart registry first (credentials configured and the chart rendered).
  returned: success
  type: bool
delete_namespace:
  description: Whether the namespace is removed (only one that carries the ownership labels, so the block created it).
  returned: success
  type: bool
"""
