"""The option every action of the block takes: Polycrate's `block` variable (one description, shared)."""

from __future__ import annotations


class ModuleDocFragment:
    DOCUMENTATION = r"""
options:
  block:
    description:
      - Polycrate's C(block) variable, whole (pass it as C(block) set to C({{ block }})).
      - The actions read C(name), C(version) and C(config) (validated against config.schema.json, every problem
        at once with its config path), C(artifacts.path) (render) and C(kubeconfig.path) (when set).
    type: dict
    required: true
"""
