"""The option the deciding actions take: the plan the envoy_config role built once for the run."""

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
"""
