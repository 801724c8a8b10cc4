"""The traffic tests bind Envoy Gateway's fixed proxy ports (19000, 19001, 19003, 10080, ...), so they run
in a network namespace of their own (`make traffic-test`: `unshare -n`), where nothing else listens."""

from __future__ import annotations

import socket

import pytest


@pytest.fixture(scope="session", autouse=True)
def private_network() -> None:
    interfaces = sorted(name for _, name in socket.if_nameindex())
    if interfaces != ["lo"]:
        pytest.fail(
            f"the traffic tests bind Envoy Gateway's fixed ports and must run in a network namespace of their "
            f"own (this one has {interfaces}): run `make traffic-test`"
        )
