"""Documentation only: polycrate_blocks.envoy.chart_check runs as an action plugin on the controller."""

from __future__ import annotations

DOCUMENTATION = r"""
module: chart_check
short_description: Stop before the release is touched when the chart or its version is not there
description:
  - Runs C(helm show chart) for the plan's chart and chart.version and fails once, naming what is wrong, when
    helm cannot find them (an OCI or https repository) or a local chart is of another version (C(helm show
    chart) ignores C(--version) for a local chart).
version_added: "0.25.9"
extends_documentation_fragment:
  - polycrate_blocks.envoy.decision
author: envoy block maintainers
"""

EXAMPLES = r"""
- name: Check that the chart and its version exist
  polycrate_blocks.envoy.chart_check:
    plan: "{{ envoy_config_plan }}"
"""

RETURN = r"""
chart:
  description: The chart reference checked.
  returned: success
  type: str
version:
  description: The version found there.
  returned: success
  type: str
"""
