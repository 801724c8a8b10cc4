"""The Gateway API conformance report (upstream's ConformanceReport format) read and judged against Envoy
Gateway's own report for v1.9.0 (kubernetes-sigs/gateway-api conformance/reports/v1.6/envoy-gateway/
experimental-v1.9.0-default-report.yaml): the same profiles, the same supported features, at least the same
passes and none failed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

PROFILES = ("GATEWAY-HTTP", "GATEWAY-TLS", "GATEWAY-GRPC")
# What Envoy Gateway's v1.9.0 report passes (Gateway API v1.6.1, experimental channel, default mode), per
# profile: (core, extended). Its skipped and failed counts are all 0.
UPSTREAM_PASSED: dict[str, tuple[int, int]] = {
    "GATEWAY-HTTP": (37, 55),
    "GATEWAY-TLS": (20, 14),
    "GATEWAY-GRPC": (15, 9),
}
# The union of the supportedFeatures the upstream report lists under its three profiles; every other extended
# feature of these profiles it names unsupported (GatewayHTTPSListenerDetectMisdirectedRequests,
# GatewayInfrastructurePropagation) or leaves out of its run.
UPSTREAM_FEATURES = (
    "BackendTLSPolicy",
    "BackendTLSPolicySANValidation",
    "GatewayAddressEmpty",
    "GatewayBackendClientCertificate",
    "GatewayFrontendClientCertificateValidation",
    "GatewayFrontendClientCertificateValidationInsecureFallback",
    "GatewayHTTPListenerIsolation",
    "GatewayPort8080",
    "GatewayStaticAddresses",
    "HTTPRoute303RedirectStatusCode",
    "HTTPRoute307RedirectStatusCode",
    "HTTPRoute308RedirectStatusCode",
    "HTTPRouteBackendProtocolH2C",
    "HTTPRouteBackendProtocolWebSocket",
    "HTTPRouteBackendRequestHeaderModification",
    "HTTPRouteBackendTimeout",
    "HTTPRouteCORS",
    "HTTPRouteDestinationPortMatching",
    "HTTPRouteHostRewrite",
    "HTTPRouteMethodMatching",
    "HTTPRouteNamedRouteRule",
    "HTTPRouteParentRefPort",
    "HTTPRoutePathRedirect",
    "HTTPRoutePathRewrite",
    "HTTPRoutePortRedirect",
    "HTTPRouteQueryParamMatching",
    "HTTPRouteRequestMirror",
    "HTTPRouteRequestMultipleMirrors",
    "HTTPRouteRequestPercentageMirror",
    "HTTPRouteRequestTimeout",
    "HTTPRouteResponseHeaderModification",
    "HTTPRouteRetry",
    "HTTPRouteRetryBackendTimeout",
    "HTTPRouteRetryConnectionError",
    "HTTPRouteSchemeRedirect",
    "ListenerSet",
    "TLSRouteModeMixed",
    "TLSRouteModeTerminate",
    # Not in these profiles, but upstream's run supported them (it declares every feature but two): its report
    # names their tests among succeededProvisionalTests, which a run here must pass too.
    "GRPCRouteNamedRouteRule",
    "TCPRoute",
    "UDPRoute",
)
# The provisional tests upstream's report passed (its succeededProvisionalTests).
UPSTREAM_PROVISIONAL = (
    "GRPCRouteNamedRule",
    "GatewayOptionalAddressValue",
    "HTTPRoute303Redirect",
    "HTTPRoute307Redirect",
    "HTTPRoute308Redirect",
    "HTTPRouteNamedRule",
    "HTTPRouteRequestPercentageMirror",
    "TCPRouteInvalidBackendRefNonexistent",
    "TCPRouteInvalidCrossNamespaceBackendRef",
    "TCPRouteInvalidNonTCPListener",
    "TCPRouteParentRefAttachAll",
    "TCPRouteParentRefPortAndSectionName",
    "TCPRouteReferenceGrant",
    "TCPRouteWeightedRouting",
    "TLSRouteMixedTerminationSameNamespace",
    "TLSRouteTerminateSimpleSameNamespace",
    "UDPRoute",
    "UDPRouteInvalidBackendRefNonexistent",
    "UDPRouteInvalidCrossNamespaceBackendRef",
    "UDPRouteMultipleRoutesAttachment",
    "UDPRouteNotAllowedByListeners",
    "UDPRouteParentRefAttachAllListeners",
    "UDPRouteParentRefPortAndSectionName",
    "UDPRouteReferenceGrant",
    "UDPRouteWeightedRouting",
)

# The core-only run (make conformance-core): a core feature (so the suite infers nothing from the GatewayClass)
# and the two extended features that change what core tests expect: TLSRouteListenerTerminateNotSupported and
# TLSRouteListenerMixedTerminationNotSupported pass at once for an implementation that supports the mode, and
# otherwise wait for the listener to be refused, which Envoy Gateway (supporting both) never does.
CORE_RUN_FEATURES = ("Gateway", "TLSRouteModeMixed", "TLSRouteModeTerminate")


# Who the reports name as the implementation (the suite's -organization, -project, -url and -contact flags).
IMPLEMENTATION = {
    "organization": "envoyproxy",
    "project": "envoy-gateway",
    "url": "https://github.com/envoyproxy/gateway",
    "contact": ["docs/conformance.md"],
}
CHANNEL = "experimental"
GATEWAY_API = "v1.6.1"


@dataclass(frozen=True)
class Outcome:
    """One profile's class of tests (core or extended) as a report states it."""

    passed: int
    failed: int
    skipped: int
    failed_tests: tuple[str, ...] = ()
    skipped_tests: tuple[str, ...] = ()


def _outcome(section: dict[str, Any] | None) -> Outcome:
    section = section or {}
    stats = section.get("statistics") or {}
    return Outcome(
        passed=int(stats.get("Passed", 0)),
        failed=int(stats.get("Failed", 0)),
        skipped=int(stats.get("Skipped", 0)),
        failed_tests=tuple(section.get("failedTests") or ()),
        skipped_tests=tuple(section.get("skippedTests") or ()),
    )


def outcomes(report: dict[str, Any]) -> dict[tuple[str, str], Outcome]:
    """(profile, "core" | "extended") -> Outcome, for every profile the report holds."""
    found: dict[tuple[str, str], Outcome] = {}
    for profile in report.get("profiles") or ():
        for kind in ("core", "extended"):
            found[(profile["name"], kind)] = _outcome(profile.get(kind))
    return found


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("kind") != "ConformanceReport":
        raise ValueError(f"{path}: not a ConformanceReport")
    return data


def shortfalls(report: dict[str, Any], *, core_only: bool) -> list[str]:
    """Where the report falls short of upstream's: a profile missing, a test failed, fewer passed than
    upstream's (core only: the extended classes are not run). Empty when it passes everything upstream does."""
    found = outcomes(report)
    problems: list[str] = []
    for profile in PROFILES:
        for index, kind in enumerate(("core", "extended")):
            if core_only and kind == "extended":
                continue
            want = UPSTREAM_PASSED[profile][index]
            got = found.get((profile, kind))
            if got is None:
                problems.append(f"{profile} {kind}: not in the report")
                continue
            if got.failed:
                problems.append(f"{profile} {kind}: {got.failed} failed: {', '.join(got.failed_tests)}")
            if got.passed < want:
                skipped = f" (skipped: {', '.join(got.skipped_tests)})" if got.skipped_tests else ""
                problems.append(f"{profile} {kind}: {got.passed} passed, upstream {want}{skipped}")
    if not core_only:
        passed = set(report.get("succeededProvisionalTests") or ())
        problems += [
            f"provisional test upstream passed, not passed here: {t}" for t in UPSTREAM_PROVISIONAL if t not in passed
        ]
    return problems


def table(reports: dict[str, dict[str, Any]]) -> str:
    """A Markdown table: per profile and class, upstream's passes beside each report's passed/failed/skipped."""
    names = list(reports)
    head = "| profile | class | upstream v1.9.0 | " + " | ".join(names) + " |"
    rule = "|---|---|---|" + "---|" * len(names)
    rows = [head, rule]
    found = {name: outcomes(report) for name, report in reports.items()}
    for profile in PROFILES:
        for index, kind in enumerate(("core", "extended")):
            cells = []
            for name in names:
                got = found[name].get((profile, kind))
                cells.append("-" if got is None else f"{got.passed} / {got.failed} / {got.skipped}")
            upstream = f"{UPSTREAM_PASSED[profile][index]} / 0 / 0"
            rows.append(f"| {profile} | {kind} | {upstream} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


MESSAGE = re.compile(r"^\s+Messages:\s+(.+)$", re.MULTILINE)
CAUSE = re.compile(r"^\s+Error:\s+Received unexpected error:\n\s+(.+)$", re.MULTILINE)
NOT_READY = re.compile(r"(\S+ \w+ not \w+ yet)$", re.MULTILINE)


def setup_error(log: str) -> str:
    """Why the suite's setup stopped, by its output: testify's last message and error, and the last object
    the setup was still waiting for."""
    said = [str(found[-1]).strip() for found in (MESSAGE.findall(log), CAUSE.findall(log)) if found]
    waiting = [str(line) for line in NOT_READY.findall(log)]
    if not said:
        return "the suite wrote no report; its output says why"
    text = said[0] + (f" ({said[1]})" if len(said) > 1 else "")
    return text + (f"; last seen: {waiting[-1]}" if waiting else "")


def setup_failed(mode: str, version: str, reason: str, date: str, *, core_only: bool) -> dict[str, Any]:
    """The report the suite writes none of when its setup fails, in upstream's format: no test ran, so every
    profile's class is a failure with nothing passed, failed or skipped, and each profile's summary says why.
    A run is then never shown as passing, and the report names what stopped it."""
    kinds = ("core",) if core_only else ("core", "extended")
    empty = {"Failed": 0, "Passed": 0, "Skipped": 0}
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "date": date,
        "gatewayAPIChannel": CHANNEL,
        "gatewayAPIVersion": GATEWAY_API,
        "implementation": {**IMPLEMENTATION, "version": version},
        "kind": "ConformanceReport",
        "mode": mode,
        "profiles": [
            {
                "name": name,
                **{kind: {"result": "failure", "statistics": dict(empty)} for kind in kinds},
                "summary": f"No test ran: the suite's setup did not complete ({reason}).",
            }
            for name in PROFILES
        ],
    }


FAILED_TEST = re.compile(r"^    --- FAIL: TestConformance/(\w+) ", re.MULTILINE)


def failed_in_log(log: str) -> list[str]:
    """The suite's tests that failed by its own `go test -v` output. The report alone misses some: the suite
    writes it once its sequential tests are done, while the tests that call t.Parallel() (the ListenerSet ones)
    only start after that, so their outcome is in the output only (upstream's report has the same blind spot)."""
    return sorted(set(FAILED_TEST.findall(log)))
