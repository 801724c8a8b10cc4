"""Documentation only: polycrate_blocks.envoy.install_outcome runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: install_outcome
short_description: Wait for what install applied when needed, and summarise the run
description:
  - Takes the plan (O(plan)), install_state's decision (O(decision)) and what the apply tasks reported, and
    decides with the pure C(lifecycle.outcome) whether to wait (GatewayClasses Accepted, Gateways Programmed,
    the controller Available) or read the Gateways' addresses again, in one C(polycrate_blocks.envoy.k8s_list)
    run; then returns the summary lines.
  - It waits when waits are on and the state read did not find everything settled, and reads again after a
    real change; otherwise it shows the Gateways as read before.
version_added: "0.25.9"
options:
  decision:
    description: What C(polycrate_blocks.envoy.install_state) returned for this run.
    type: dict
    required: true
  crds_applied:
    description: How many CRDs this run applied.
    type: int
    default: 0
  applied:
    description: The registered results of this run's C(polycrate_blocks.envoy.k8s_apply) tasks (skipped ones too).
    type: list
    elements: dict
    default: []
extends_documentation_fragment:
  - polycrate_blocks.envoy.decision
  - kubernetes.core.k8s_auth_options
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Wait for the gateways and summarise the run
  polycrate_blocks.envoy.install_outcome:
    plan: "{{ envoy_config_plan }}"
    decision: "{{ __found }}"
    crds_applied: "{{ __crds.count | default(0) }}"
    applied: ["{{ __early }}", "{{ __late }}"]
  register: __outcome
"""

RETURN = r"""
waited:
  description: Whether it waited or read the Gateways again.
  returned: success
  type: bool
lines:
  description: The summary, a line each.
  returned: success
  type: list
"""
