"""Documentation only: polycrate_blocks.envoy.render runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: render
short_description: Validate the envoy block config and write its plan to the artifacts folder
description:
  - Validates C(block.config) like M(polycrate_blocks.envoy.validate), builds the plan and writes every manifest,
    the helm values and release, and the plan summary in one step.
  - Writes only files whose content changed (atomically, mode 0644), and removes files the config no longer
    renders; it owns C(manifests/), C(helm/) and C(plan.yaml) in C(dest) and touches nothing else there.
  - On a bad config nothing is written, the previous render is removed so it cannot pass for current, and the
    task fails once with C(problems).
  - Credentials under C(chart.auth) are never written.
version_added: "0.5.0"
options:
  dest:
    description: Folder to render into; defaults to C(block.artifacts.path).
    type: path
extends_documentation_fragment:
  - polycrate_blocks.envoy.block
attributes:
  check_mode:
    support: full
    details: Reports what would be written or removed and changes nothing.
  diff_mode:
    support: full
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Render the plan into the artifacts folder
  polycrate_blocks.envoy.render:
    block: "{{ block }}"
"""

RETURN = r"""
dest:
  description: The folder rendered into.
  returned: success
  type: str
written:
  description: Files written (or, in check mode, that would be), relative to C(dest).
  returned: success
  type: list
  elements: str
  sample: [manifests/06-gateway-eg-shared.yaml]
removed:
  description: Files removed because the config no longer renders them, relative to C(dest).
  returned: success
  type: list
  elements: str
problems:
  description: Every config problem, one line each, the config path, then what to do (only when the config is invalid).
  returned: failure
  type: str
"""
