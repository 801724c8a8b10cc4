"""Documentation only: polycrate_blocks.envoy.kubeconfig runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: kubeconfig
short_description: Decide which kubeconfig the envoy block uses
description:
  - Takes C(block.kubeconfig.path) when Polycrate set it, else C(KUBECONFIG), else the pod's service account
    (in-cluster), else C(~/.kube/config).
  - Polycrate v0.23.3 exports C(KUBECONFIG) empty when it found no kubeconfig, which hides the user's own; the
    task then fails once, naming every place it looked and where to put the kubeconfig.
  - Sets the facts C(envoy_config_kubeconfig) (the file for the modules and helm, empty to let them read
    C(KUBECONFIG) or the in-cluster config) and C(envoy_config_kubeconfig_source) (for messages).
  - Runs on the controller (an action plugin).
version_added: "0.11.0"
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
- name: Find the kubeconfig
  polycrate_blocks.envoy.kubeconfig:
    block: "{{ block }}"
"""

RETURN = r"""
ansible_facts:
  description: C(envoy_config_kubeconfig) and C(envoy_config_kubeconfig_source).
  returned: success
  type: dict
"""
