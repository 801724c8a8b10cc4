"""Documentation only: polycrate_blocks.envoy.crd_selection runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: crd_selection
short_description: Select the CRDs the envoy block applies or removes from their source
description:
  - Reads the CustomResourceDefinitions of the block's API groups and Gateway API channel from O(settings)'s
    C(directory) (any *.yaml/*.yml below it), or from O(rendered) (gateway-crds-helm's output) when the
    directory is empty, and fails listing the CRDs the config needs that are missing.
  - With O(live), returns only those the cluster does not hold as the block last applied them.
version_added: "0.25.9"
options:
  settings:
    description: The CRD settings (the plan's C(crds), or the C(crd_settings) install or uninstall decided).
    type: dict
    required: true
  rendered:
    description: The rendered text of gateway-crds-helm, when C(settings.directory) is empty.
    type: str
    default: ""
  origin:
    description: The source digest install stamps on each CRD (install_state's C(crd_source)).
    type: str
    default: ""
  live:
    description: The cluster's CRDs' metadata as install_state read them (its C(crds)).
    type: list
    elements: dict
attributes:
  check_mode:
    support: full
    details: It only reads files and its arguments.
  diff_mode:
    support: none
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Select the CRDs the cluster lacks
  polycrate_blocks.envoy.crd_selection:
    settings: "{{ __found.crd_settings }}"
    rendered: "{{ __crd_chart.stdout | default('') }}"
    origin: "{{ __found.crd_source }}"
    live: "{{ __found.crds }}"
  register: __crds
"""

RETURN = r"""
definitions:
  description: The CRDs to apply (all of the source's, or with O(live) those the cluster lacks), digest-stamped.
  returned: success
  type: list
count:
  description: How many C(definitions).
  returned: success
  type: int
refs:
  description: A reference (apiVersion, kind, name) to each CRD of the source, for deleting them.
  returned: success
  type: list
"""
