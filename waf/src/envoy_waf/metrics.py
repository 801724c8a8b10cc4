"""The workers' Prometheus metrics. Imported by worker processes only, after the supervisor has set
PROMETHEUS_MULTIPROC_DIR: prometheus_client picks its file-backed values at import, and the supervisor
serves the sum over every worker (MultiProcessCollector), dead ones' counts included."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

REQUESTS = Counter("waf_requests_total", "Requests evaluated")
DECISIONS = Counter("waf_decisions_total", "Decisions by action", ["action"])
RULE_HITS = Counter("waf_rule_matches_total", "Matched rules", ["rule_id"])
ERRORS = Counter("waf_errors_total", "Streams that failed inside the WAF")
LATENCY = Histogram(
    "waf_evaluation_seconds",
    "Engine time per request",
    buckets=(0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.05, 0.1, 0.5),
)
RESPONSE_DECISIONS = Counter("waf_response_decisions_total", "Response decisions by action", ["action"])
# Resolved once: .labels() takes a lock and a dict lookup per call.
DECISION = {action: DECISIONS.labels(action) for action in ("allow", "flag", "block", "detect", "refused", "too_large")}
RESPONSE_DECISION = {action: RESPONSE_DECISIONS.labels(action) for action in ("allow", "flag", "block", "detect")}
