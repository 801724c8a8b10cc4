"""Documentation only: polycrate_blocks.envoy.lease_decision runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: lease_decision
short_description: Find the controller's leader lease a stopped controller still holds
description:
  - Takes the plan the envoy_config role built (O(plan)), reads the controller's leader Lease and its pods in
    one C(polycrate_blocks.envoy.k8s_list) run, and returns what the pure C(lifecycle.stale_lease) decided.
  - Envoy Gateway does not give its lease back when it stops; after an upgrade the new replicas would wait out
    the stopped leader's leaseDuration (15 s) before one of them leads and rolls the proxies.
  - With O(free), deletes a stale Lease on the resourceVersion read (a 409 Conflict, a new leader took it
    meanwhile, is no fault).
version_added: "0.22.0"
options:
  free:
    description: Delete the Lease when its holder is gone.
    type: bool
    default: false
  waits:
    description:
      - C(polycrate_blocks.envoy.k8s_list) queries run first, in the same module run, before the Lease is read
        (install passes C(lifecycle.controller_waits), the controller helm rolled ready and no pod of the previous
        one terminating).
    type: list
    elements: dict
    default: []
  wait_timeout:
    description: Seconds each of O(waits) may wait.
    type: int
    default: 120
extends_documentation_fragment:
  - polycrate_blocks.envoy.decision
  - kubernetes.core.k8s_auth_options
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Decide whether a stopped controller holds the lease
  polycrate_blocks.envoy.lease_decision:
    plan: "{{ envoy_config_plan }}"
  register: __lease
"""

RETURN = r"""
stale:
  description: Whether the Lease's holder is a pod that no longer exists.
  returned: success
  type: bool
holder:
  description: The holder identity (<pod name>_<uuid>) when C(stale).
  returned: success
  type: str
resource_version:
  description: The Lease's resourceVersion as read, the precondition of its deletion, when C(stale).
  returned: success
  type: str
freed:
  description: Whether O(free) deleted the stale Lease (false when a new leader took it first).
  returned: when O(free) and C(stale)
  type: bool
"""
