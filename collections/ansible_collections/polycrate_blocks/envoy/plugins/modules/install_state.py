"""Documentation only: polycrate_blocks.envoy.install_state runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: install_state
short_description: Decide what an install must do from its one read of the cluster
description:
  - Takes the plan the envoy_config role built (O(plan)), reads everything install needs in one
    C(polycrate_blocks.envoy.k8s_list) run (the plan's C(install_lookups)) and returns what the install must
    do, decided by the pure C(lifecycle.decide_install) before anything is written; see RETURN.
  - Fails once, cleanly, when the API server cannot be reached, when a kind the plan uses is not served, when
    the namespace is missing and may not be created, or when another owner's Gateway API CRDs are older than
    the release needs (C(lifecycle.crd_owners)); nothing has been changed then.
version_added: "0.10.0"
options:
  field_manager:
    description:
      - The field manager install applies with; server-side apply managers other than it (and the API
        server's own) count as other owners of the Gateway API CRDs.
      - Default C(polycrate-<block name>).
    type: str
  namespace_waited:
    description:
      - This read follows install's wait for the namespace, being deleted, to be gone (the earlier read's
        RV(namespace_wait)); one still being deleted now stops install, nothing changed, naming what holds it.
    type: bool
    default: false
  check_mode:
    description:
      - A dry run (the plan playbook); nothing is sent into a namespace that does not exist yet, and nothing is
        waited for.
    type: bool
    default: false
extends_documentation_fragment:
  - polycrate_blocks.envoy.decision
  - kubernetes.core.k8s_auth_options
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Decide what this run must do
  polycrate_blocks.envoy.install_state:
    plan: "{{ envoy_config_plan }}"
  register: __found
"""

RETURN = r"""
problems:
  description: Why the install cannot start, one line each with what to do (only on failure).
  returned: failure
  type: str
namespace_exists:
  description: Whether the namespace exists.
  returned: success
  type: bool
namespace_apply:
  description: >-
    Whether the namespace must be created, or the block's own namespace lacks a planned label or
    annotation.
  returned: success
  type: bool
crds:
  description: The live CustomResourceDefinitions' metadata.
  returned: success
  type: list
crd_source:
  description: The digest of the configured CRD source (C(crds.source_digest)), stamped on the CRDs it gives.
  returned: success
  type: str
crds_current:
  description: >-
    Whether the cluster holds every CRD the configured source gave when last applied (then the source is
    not read).
  returned: success
  type: bool
crd_owners:
  description: >-
    Whose the Gateway API CRDs are and what install does with them: C(outcome) (apply, leave, refuse,
    take_over, not_managed), C(owners) (other owners as read), C(message) (what the summary reports).
  returned: success
  type: dict
crd_settings:
  description: >-
    The plan's CRD settings install reads, stamps and applies: without the Gateway API CRDs when another
    owner's are left alone.
  returned: success
  type: dict
helm_changes:
  description: Why the gateway-helm release differs from the plan's; empty when helm would change nothing.
  returned: success
  type: list
helm_needed:
  description: Whether the helm task must run.
  returned: success
  type: bool
controller_ready:
  description: Whether the controller's Deployment is Available (true when the block does not install it).
  returned: success
  type: bool
settled:
  description: >-
    The controller ready and every planned GatewayClass and Gateway holding its wait condition for its
    current generation.
  returned: success
  type: bool
apply_files:
  description: The plan objects (by file name) that are not as the block last applied them; only they are sent.
  returned: success
  type: list
leftovers:
  description: Owned objects the plan no longer renders, in delete order.
  returned: success
  type: list
gateways:
  description: The planned Gateways as read (their status carries the addresses).
  returned: success
  type: list
namespace_wait:
  description: >-
    The namespace is still being deleted (a recent uninstall's): the C(polycrate_blocks.envoy.k8s_list) queries
    to wait on until they find nothing, after which install reads and decides again with O(namespace_waited).
    Empty when install need not wait.
  returned: success
  type: list
prepare:
  description: Whether anything comes before the plan's objects (helm, the CRDs or the namespace).
  returned: success
  type: bool
login:
  description: Whether to log in to the chart registry (configured credentials, and this run pulls a chart).
  returned: success
  type: bool
render_crd_chart:
  description: Whether to render gateway-crds-helm (the CRDs come from it and the cluster lacks some).
  returned: success
  type: bool
apply_early:
  description: >-
    The objects to apply before helm (the network policies its pods need, when helm runs): C(definitions)
    and C(rollouts) in plan order, for one C(polycrate_blocks.envoy.k8s_apply) run.
  returned: success
  type: dict
apply_late:
  description: The objects to apply after helm (or all of them when helm has nothing to do), as C(apply_early).
  returned: success
  type: dict
wait_controller:
  description: Whether to wait for the controller helm rolled, for the previous one to stop and for its lease.
  returned: success
  type: bool
controller_waits:
  description:
    - The queries for the waits after helm (empty when not waiting), in order - the controller's Deployment
      rolled out, then no pod of the previous controller terminating - the C(waits) of
      C(polycrate_blocks.envoy.lease_decision).
  returned: success
  type: list
"""
