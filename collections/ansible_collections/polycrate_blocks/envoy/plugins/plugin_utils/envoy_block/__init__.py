"""Pure-Python core of the envoy Polycrate block: config -> validation -> ordered manifest plan.

No Ansible imports here: the filter plugins in ../../filter are thin adapters around this package.
"""

from __future__ import annotations

# The Envoy Gateway release the block is built and tested for: Python reads it from here; the files that cannot
# (config.schema.json's defaults, block.poly, tools/build-go.sh) are checked equal to it by
# tests/unit/test_envoy_gateway_version.py.
ENVOY_GATEWAY_VERSION = "v1.9.1"
GATEWAY_API_VERSION = "v1.6.1"
