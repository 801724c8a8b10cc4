"""What the deciding actions (install_state, uninstall_decision, status_report) share: the plan the envoy_config
role built once for the run, where they run, and the connection options from module_defaults."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  plan:
    description:
      - The plan as the C(polycrate_blocks.envoy.validate) action serialised it (the fact C(envoy_config_plan)
        the envoy_config role sets), without credentials.
    type: dict
    required: true
notes:
  - Runs on the controller (an action plugin) and reads the cluster once, in one
    C(polycrate_blocks.envoy.k8s_list) run; set the connection options for the play with C(module_defaults)
    C(group/polycrate_blocks.envoy.k8s).
attributes:
  check_mode:
    support: full
    details: It only reads.
  diff_mode:
    support: none
"""
