"""Pure-Python core of the envoy Polycrate block: config -> validation -> ordered manifest plan.

No Ansible imports here: the filter plugins in ../../filter are thin adapters around this package.
"""

from __future__ import annotations

ENVOY_GATEWAY_VERSION = "v1.9.1"
GATEWAY_API_VERSION = "v1.6.1"
