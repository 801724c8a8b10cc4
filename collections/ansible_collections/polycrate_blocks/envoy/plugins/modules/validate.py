"""Documentation only: polycrate_blocks.envoy.validate runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: validate
short_description: Validate the envoy block config
description:
  - Checks C(block.config) against config.schema.json, the value grammars and the cross-field rules, with Polycrate's
    merge already applied.
  - On a bad config the task fails once, cleanly; C(problems) lists every problem with its config path and fix.
  - Config warnings are shown as Ansible warnings.
  - Runs on the controller (an action plugin); values under C(chart.auth) are never echoed.
version_added: "0.5.0"
options:
  apply:
    description:
      - The config is about to be applied (install, plan). Then what renders but cannot run (an enabled WAF on
        the unpublished default image) fails here; otherwise it is a warning.
    type: bool
    default: false
extends_documentation_fragment:
  - polycrate_blocks.envoy.block
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Validate the block config
  polycrate_blocks.envoy.validate:
    block: "{{ block }}"
"""

RETURN = r"""
problems:
  description: Every problem, one line each, the config path, then what to do, sorted (only when the config is invalid).
  returned: failure
  type: str
  sample: |
    config.image.controller.tag: 'v1.9.0 latest' is not valid; use an image tag such as v1.9.0
    config.service.loadbalancer_ip: needs service.type LoadBalancer (is ClusterIP); remove loadbalancer_ip or ...
ansible_facts:
  description: >-
    C(envoy_config_plan), the plan without credentials, built and serialised once for the run: the roles after
    the config role (install, plan, uninstall, status) read it instead of building it again.
  returned: success
  type: dict
"""
