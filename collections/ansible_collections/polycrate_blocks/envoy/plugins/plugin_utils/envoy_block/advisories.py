"""Known-vulnerable releases of what the block ships or deploys: one table, one comparison.

Each row names the product, the advisory (its identifier and what it does), the first version that fixes
it and, where the fix is one image variant's, that variant. A version is affected when it is older than the
first fixed one (a pre-release of the fixed version counts as older) and, when the row has `introduced`, not
older than that. Limit: a row knows one fixed version, so a later minor line is taken to carry the fix (true
of every row here; a backport-only fix needs its own row per line).

Used by the config checks (render, plan and install warn about a configured tag or version, naming the
advisory and the first fixed version) and by `status` (the images the controller and proxy pods run).
docs/security.md renders the table; moving a default past a row is what removes its warning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

ENVOY_GATEWAY = "Envoy Gateway"
ENVOY = "Envoy"
CORAZA = "Coraza"
CRS = "OWASP CRS"


@dataclass(frozen=True)
class Advisory:
    product: str
    advisory: str  # identifier, or the release notes that name the fix
    what: str
    fixed: str  # the first fixed version
    source: str
    introduced: str = ""  # the first affected version; empty: every older one
    variant: str = ""  # a tag prefix the row applies to only (an image variant); empty: every tag


# The rows the block acts on besides warning: the EnvoyProxy guard warns when switched off on a controller
# without these fixes (components/tenant_guards.py), and a controller with the patch fix gets its
# EnvoyProxyPatch runtime flag turned off (components/controller.py). Their first fixed version is the one
# place that says which releases have them (`fixes`).
ENVOY_PROXY_COLLISIONS = Advisory(
    ENVOY_GATEWAY,
    "EnvoyProxy collisions with the controller (v1.9.2 security fix)",
    "a tenant's EnvoyProxy in ControllerNamespace mode may reuse the controller's names (envoy-gateway, "
    "envoy-gateway-config), its or certgen's service account, and volumes or env references to its "
    "Secret and ConfigMap",
    "v1.9.2",
    "envoyproxy/gateway release-notes/v1.9.2.yaml",
)
ENVOY_PROXY_PATCH = Advisory(
    ENVOY_GATEWAY,
    "EnvoyProxy patch with the controller's privileges (v1.9.2 security fix)",
    "EnvoyProxy patch fields are applied with the controller's more privileged service account when "
    "tenants author EnvoyProxy (v1.9.2 adds the EnvoyProxyPatch runtime flag to turn them off)",
    "v1.9.2",
    "envoyproxy/gateway release-notes/v1.9.2.yaml",
)

# Listeners Envoy Gateway translates into filter chains Envoy rejects: the listener guard refuses them at
# admission and the bootstrap Gateway's check at render while the controller lacks these fixes
# (components/tenant_guards.py, components/gateway.py).
EMPTY_MATCH_ON_A_SHARED_PORT = Advisory(
    ENVOY_GATEWAY,
    "duplicate filter chain matcher on a shared port",
    "a TLS listener with no attached routes on a port an HTTPS listener shares makes Envoy reject every "
    "later xDS update of that listener",
    "v1.9.2",
    "envoyproxy/gateway release-notes/v1.9.2.yaml",
)
MERGED_HOSTNAME_CLASH = Advisory(
    ENVOY_GATEWAY,
    "merged HTTPS and TLS listeners on one port and hostname (envoyproxy/gateway#10013)",
    "HTTPS and TLS listeners of different merged Gateways on one port and hostname are accepted and "
    "Envoy rejects the listener (the rest: envoyproxy/gateway#10014)",
    "v1.9.2",
    "envoyproxy/gateway release-notes/v1.9.2.yaml",
)

TABLE: tuple[Advisory, ...] = (
    Advisory(
        ENVOY_GATEWAY,
        "GHSA-w42f-28h3-998w",
        "an EnvoyProxy's container securityContext replaced the hardened default instead of merging into it "
        "(a Pod Security escape in the controller's namespace)",
        "v1.9.1",
        "envoyproxy/gateway release-notes/v1.9.1.yaml",
    ),
    Advisory(
        ENVOY_GATEWAY,
        "CVE-2026-47775",
        "OIDC session cookies of SecurityPolicy",
        "v1.9.1",
        "envoyproxy/gateway release-notes/v1.9.1.yaml",
    ),
    ENVOY_PROXY_COLLISIONS,
    ENVOY_PROXY_PATCH,
    Advisory(
        ENVOY_GATEWAY,
        "TokenReview panic",
        "the controller panics on a TokenReview without the pod-name key",
        "v1.9.2",
        "envoyproxy/gateway release-notes/v1.9.2.yaml",
    ),
    EMPTY_MATCH_ON_A_SHARED_PORT,
    MERGED_HOSTNAME_CLASH,
    Advisory(
        ENVOY,
        "CVE-2026-35189",
        "BoringSSL spends excessive memory on certificates with nameRelativeToCRLIssuer CRL distribution "
        "points: a remote denial of service during TLS handshakes",
        "v1.39.2",
        "Envoy release notes v1.39.2 (Envoy Gateway v1.9.3 moves to it)",
    ),
    Advisory(
        ENVOY,
        "compromised CA certificates in the distroless image",
        "the distroless image trusts the CA certificates of a compromised authority (1.39.5's still did)",
        "v1.39.6",
        "Envoy release notes v1.39.6",
        variant="distroless-",
    ),
    Advisory(
        CORAZA,
        "Coraza v3.8.1 security release",
        "security fixes of the WAF engine (2026-10-02)",
        "v3.8.1",
        "corazawaf/coraza releases v3.8.1",
    ),
    Advisory(
        CRS,
        "out of the CRS support window",
        "only the two newest minor releases (4.29, 4.30) and the 4.25 LTS get security fixes",
        "v4.29.0",
        "coreruleset SECURITY.md",
        introduced="v4.26.0",
    ),
    Advisory(
        CRS,
        "out of the CRS support window",
        "only the two newest minor releases (4.29, 4.30) and the 4.25 LTS get security fixes",
        "v4.25.0",
        "coreruleset SECURITY.md",
    ),
)

_VERSION = re.compile(r"(?:^|[^0-9.])v?(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$")


def version(tag: str) -> tuple[int, int, int, bool] | None:
    """(major, minor, patch, pre-release) of a tag or version such as v1.9.1, 1.39.6, distroless-v1.39.6 or
    v1.39.2-rc.1 (a digest after '@' is ignored); None when the tag names no version (latest, a digest)."""
    match = _VERSION.search(tag.split("@", 1)[0])
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3)), match.group(4) is not None


def _older(found: tuple[int, int, int, bool], than: str) -> bool:
    other = version(than)
    if other is None:
        raise ValueError(f"not a version in the advisory table: {than!r}")
    return found[:3] < other[:3] or (found[:3] == other[:3] and found[3])


def fixes(row: Advisory, tag: str) -> bool | None:
    """Whether `tag` carries `row`'s fix (is not affected by it); None when the tag names no version."""
    if version(tag) is None:
        return None
    return not affecting(row.product, tag, (row,))


def affecting(product: str, tag: str, table: Iterable[Advisory] = TABLE) -> list[Advisory]:
    """The rows of `product` whose fix `tag` lacks, in table order; none when the tag names no version."""
    found = version(tag)
    if found is None:
        return []
    bare = tag.split("@", 1)[0]
    return [
        row
        for row in table
        if row.product == product
        and (not row.variant or bare.startswith(row.variant))
        and (not row.introduced or not _older(found, row.introduced))
        and _older(found, row.fixed)
    ]


def describe(product: str, tag: str, rows: Iterable[Advisory]) -> str:
    """One line naming every advisory and its first fixed version, and the release that fixes them all (what
    each advisory does is in docs/security.md: a render warns on every run, so it stays one short line)."""
    rows = list(rows)
    newest = max((row.fixed for row in rows), key=lambda fixed: version(fixed) or (0, 0, 0, False))
    items = "; ".join(f"{row.advisory} (first fixed in {row.fixed})" for row in rows)
    return f"{product} {tag} has known issues: {items}. {newest} or newer fixes all of them"


def findings(product: str, tag: str) -> str | None:
    """describe() for the rows `tag` is affected by, else None."""
    rows = affecting(product, tag)
    return describe(product, tag, rows) if rows else None
