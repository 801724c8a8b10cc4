"""Documentation only: polycrate_blocks.envoy.status_report runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: status_report
short_description: Report the health of what the envoy block installed, from one read of the cluster
description:
  - Takes the plan the envoy_config role built (O(plan)), reads in one C(polycrate_blocks.envoy.k8s_list) run
    the planned GatewayClasses, Gateways, policies and monitoring objects, the proxies and the controller, and
    returns the health table decided by the pure C(lifecycle.status); see RETURN.
version_added: "0.13.0"
extends_documentation_fragment:
  - polycrate_blocks.envoy.decision
  - kubernetes.core.k8s_auth_options
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Evaluate the health
  polycrate_blocks.envoy.status_report:
    plan: "{{ envoy_config_plan }}"
  register: __health
"""

RETURN = r"""
rows:
  description: One row per object or component (C(what), C(name), C(ok), C(detail)).
  returned: success
  type: list
lines:
  description: The rows as a table, one line each, with a header.
  returned: success
  type: list
healthy:
  description: Whether every row is healthy.
  returned: success
  type: bool
"""
