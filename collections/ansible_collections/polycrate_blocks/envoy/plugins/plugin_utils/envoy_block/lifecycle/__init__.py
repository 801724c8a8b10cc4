"""The cluster decisions, split by job: what the block owns (ownership), what install does (install), what
uninstall must know (uninstall), what status reports (status), what install waits for (waits), and what it
does about its namespace still being deleted (terminating). Each is pure: the typed Plan (rebuilt once at the
plugin boundary by Plan.from_dict) and plain data the cluster reported in, plain data out."""

from __future__ import annotations

from .install import (
    STATUS_READ_KINDS,
    InstallDecision,
    InstallObserved,
    decide_install,
    install_lookups,
    install_state,
    unchanged,
)
from .ownership import (
    OWNED_KINDS,
    THIRD_PARTY,
    block_field_manager,
    leftovers,
    owned_kinds,
    owns,
    ref,
    third_party_kinds,
)
from .status import (
    MONITORING_KINDS,
    PROXY_SELECTOR,
    STATUS_KINDS,
    StatusReport,
    is_proxy,
    proxies_query,
    proxy_rows,
    rolled_out,
    rollout_lines,
    status,
    status_lookups,
    status_queries,
    status_rows,
    status_table,
)
from .uninstall import (
    EG_LABEL,
    PROXY_KINDS,
    UninstallDecision,
    UninstallObserved,
    decide_uninstall,
    proxy_queries,
    tenant_gateways,
    uninstall_lookups,
)
from .waits import controller_waits, gateway_line, lease_lookups, previous_controller_query, stale_lease, wait_queries

__all__ = [
    "EG_LABEL",
    "MONITORING_KINDS",
    "OWNED_KINDS",
    "PROXY_KINDS",
    "PROXY_SELECTOR",
    "STATUS_KINDS",
    "STATUS_READ_KINDS",
    "THIRD_PARTY",
    "InstallDecision",
    "InstallObserved",
    "StatusReport",
    "UninstallDecision",
    "UninstallObserved",
    "block_field_manager",
    "controller_waits",
    "decide_install",
    "decide_uninstall",
    "gateway_line",
    "install_lookups",
    "install_state",
    "is_proxy",
    "lease_lookups",
    "leftovers",
    "owned_kinds",
    "owns",
    "previous_controller_query",
    "proxies_query",
    "proxy_queries",
    "proxy_rows",
    "ref",
    "rolled_out",
    "rollout_lines",
    "stale_lease",
    "status",
    "status_lookups",
    "status_queries",
    "status_rows",
    "status_table",
    "tenant_gateways",
    "third_party_kinds",
    "unchanged",
    "uninstall_lookups",
    "wait_queries",
]
