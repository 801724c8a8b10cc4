"""The ext_proc gRPC service (envoy.service.ext_proc.v3.ExternalProcessor): one transaction per stream.

Request headers start the transaction; with no body (end_of_stream) phase 2 runs at once, otherwise the
verdict waits for the buffered body. A block is an ImmediateResponse with the configured status and the
request id; everything else is CONTINUE. Detection-only mode never blocks but logs the same way.

With inspect_response the transaction stays open for the response: its headers run phase 3, and the first
response body message Envoy sends (the whole body when buffered, the first buffer-full when buffered
partially), trimmed to response_body_limit, runs phase 4 (an empty body when there is none). A block there
replaces the response with an ImmediateResponse; the rest of a longer body is not inspected.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import grpc
from envoy.config.core.v3 import base_pb2
from envoy.service.ext_proc.v3 import external_processor_pb2 as pb
from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc
from envoy.type.v3 import http_status_pb2
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import Counter, Histogram, start_http_server

from . import xmlguard
from .engine import Engine, Transaction, Verdict
from .settings import Settings, directives

LOG = logging.getLogger("envoy_waf")
BLOCKING_EVALUATION_RULE = 949110  # CRS: inbound anomaly score exceeded
OUTBOUND_EVALUATION_RULE = 959100  # CRS: outbound (response) anomaly score exceeded
REQUESTS = Counter("waf_requests_total", "Requests evaluated")
DECISIONS = Counter("waf_decisions_total", "Decisions by action", ["action"])
RULE_HITS = Counter("waf_rule_matches_total", "Matched rules", ["rule_id"])
ERRORS = Counter("waf_errors_total", "Streams that failed inside the WAF")
RESPONSE_DECISIONS = Counter("waf_response_decisions_total", "Response decisions by action", ["action"])
LATENCY = Histogram(
    "waf_evaluation_seconds",
    "Engine time per request",
    buckets=(0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.05, 0.1, 0.5),
)


def _header_value(header: base_pb2.HeaderValue) -> bytes:
    # Envoy >= 1.27 sends raw_value (bytes); value is then empty.
    return bytes(header.raw_value) if header.raw_value else header.value.encode()


@dataclass
class _Request:
    method: str = "GET"
    path: str = "/"
    protocol: str = "1.1"
    request_id: str = ""
    client: tuple[str, int] = ("0.0.0.0", 0)
    headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    xml: bool = False  # a Content-Type header names XML: the body goes through xmlguard first

    @classmethod
    def from_headers(cls, message: pb.HttpHeaders, attributes: dict[str, object]) -> _Request:
        req = cls()
        for header in message.headers.headers:
            value = _header_value(header)
            if header.key == ":method":
                req.method = value.decode(errors="replace")
            elif header.key == ":path":
                req.path = value.decode(errors="surrogateescape")
            elif header.key == ":authority":
                req.headers.append((b"host", value))
            elif not header.key.startswith(":"):
                req.headers.append((header.key.encode(), value))
                if header.key == "x-request-id":
                    req.request_id = value.decode(errors="replace")
                elif header.key == "content-type" and xmlguard.is_xml(value):
                    req.xml = True
        address = str(attributes.get("source.address", ""))
        if address:
            host, _, port = address.rpartition(":")
            req.client = (host or address, int(port) if port.isdigit() else 0)
        return req


def _response_headers(message: pb.HttpHeaders) -> tuple[int, list[tuple[bytes, bytes]]]:
    """The status (from :status) and the other headers of a response, as the engine takes them."""
    status, headers = 200, []
    for header in message.headers.headers:
        value = _header_value(header)
        if header.key == ":status":
            status = int(value) if value.isdigit() else 200
        elif not header.key.startswith(":"):
            headers.append((header.key.encode(), value))
    return status, headers


def _attributes(request: pb.ProcessingRequest) -> dict[str, object]:
    out: dict[str, object] = {}
    for struct in request.attributes.values():
        for key, value in struct.fields.items():
            out[key] = value.string_value or value.number_value
    return out


class WAF(pb_grpc.ExternalProcessorServicer):
    def __init__(self, settings: Settings, engine: Engine) -> None:
        self.settings = settings
        self.engine = engine

    def _evaluate(self, req: _Request, body: bytes | None, tx: Transaction | None = None) -> Verdict:
        started = time.perf_counter()
        if tx is not None:  # inspect_response: the response phases run in this transaction later
            verdict = tx.request(method=req.method, uri=req.path, headers=req.headers, body=body)
        else:
            verdict = self.engine.evaluate(
                method=req.method,
                uri=req.path,
                headers=req.headers,
                body=body,
                client=req.client,
                request_id=req.request_id,
            )
        LATENCY.observe(time.perf_counter() - started)
        REQUESTS.inc()
        for rule_id in verdict.rule_ids:
            RULE_HITS.labels(str(rule_id)).inc()
        action = "block" if verdict.blocked else ("flag" if verdict.rule_ids else "allow")
        if self.settings.mode == "detect" and BLOCKING_EVALUATION_RULE in verdict.rule_ids:
            action = "detect"  # DetectionOnly: the CRS blocking evaluation fired, nothing was blocked
        DECISIONS.labels(action).inc()
        if verdict.rule_ids:
            # One JSON line per blocked or flagged request: rule ids and messages, never bodies.
            LOG.warning(
                json.dumps(
                    {
                        "event": "waf",
                        "action": action,
                        "request_id": req.request_id,
                        "method": req.method,
                        "path": req.path[:256],
                        "client": req.client[0],
                        "rule_ids": verdict.rule_ids,
                        "messages": verdict.messages[:20],
                    }
                )
            )
        return verdict

    def _respond(self, verdict: Verdict, req: _Request, phase: str) -> pb.ProcessingResponse:
        if verdict.blocked and self.settings.mode == "block":
            # block_status replaces the CRS's 403; other engine statuses (413 body too large, 400 unparsable
            # body) say something else and pass through.
            status = verdict.status if verdict.status not in (0, 200, 403) else self.settings.block_status
            return pb.ProcessingResponse(
                immediate_response=pb.ImmediateResponse(
                    status=http_status_pb2.HttpStatus(code=status),
                    body=f"Request blocked (request id {req.request_id or 'n/a'})\n".encode(),
                    details="waf_blocked",
                )
            )
        common = pb.CommonResponse(status=pb.CommonResponse.CONTINUE)
        if phase == "headers":
            return pb.ProcessingResponse(request_headers=pb.HeadersResponse(response=common))
        return pb.ProcessingResponse(request_body=pb.BodyResponse(response=common))

    def _inspect_response(
        self, req: _Request, tx: Transaction, status: int, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> Verdict:
        """Phases 3 and 4 of the request's transaction; logged like a request, with "phase": "response"."""
        verdict = tx.response(status=status, headers=headers, body=body)
        for rule_id in verdict.rule_ids:
            RULE_HITS.labels(str(rule_id)).inc()
        action = "block" if verdict.blocked else ("flag" if verdict.rule_ids else "allow")
        if self.settings.mode == "detect" and OUTBOUND_EVALUATION_RULE in verdict.rule_ids:
            action = "detect"
        RESPONSE_DECISIONS.labels(action).inc()
        if verdict.rule_ids:
            LOG.warning(
                json.dumps(
                    {
                        "event": "waf",
                        "action": action,
                        "phase": "response",
                        "request_id": req.request_id,
                        "method": req.method,
                        "path": req.path[:256],
                        "client": req.client[0],
                        "status": status,
                        "rule_ids": verdict.rule_ids,
                        "messages": verdict.messages[:20],
                    }
                )
            )
        return verdict

    def _respond_response(self, verdict: Verdict, req: _Request, phase: str) -> pb.ProcessingResponse:
        if verdict.blocked and self.settings.mode == "block":
            # The backend's response never reaches the client; the CRS's 403 becomes block_status.
            status = verdict.status if verdict.status not in (0, 200, 403) else self.settings.block_status
            return pb.ProcessingResponse(
                immediate_response=pb.ImmediateResponse(
                    status=http_status_pb2.HttpStatus(code=status),
                    body=f"Response blocked (request id {req.request_id or 'n/a'})\n".encode(),
                    details="waf_response_blocked",
                )
            )
        if phase == "headers":
            return pb.ProcessingResponse(response_headers=pb.HeadersResponse())
        return pb.ProcessingResponse(response_body=pb.BodyResponse())

    def _refuse_xml(self, req: _Request, reason: str) -> pb.ProcessingResponse:
        """400 for an XML body the engine must not parse (xmlguard), in block and detect mode alike:
        parsing it could hold the engine for minutes, so detection-only cannot look at it either."""
        DECISIONS.labels("refused").inc()
        LOG.warning(
            json.dumps(
                {
                    "event": "waf",
                    "action": "refused",
                    "request_id": req.request_id,
                    "method": req.method,
                    "path": req.path[:256],
                    "client": req.client[0],
                    "rule_ids": [],
                    "messages": [reason],
                }
            )
        )
        return pb.ProcessingResponse(
            immediate_response=pb.ImmediateResponse(
                status=http_status_pb2.HttpStatus(code=400),
                body=f"{reason} (request id {req.request_id or 'n/a'})\n".encode(),
                details="waf_body_refused",
            )
        )

    def _too_large(self, req: _Request) -> pb.ProcessingResponse:
        return pb.ProcessingResponse(
            immediate_response=pb.ImmediateResponse(
                status=http_status_pb2.HttpStatus(code=413),
                body=f"Request body too large to inspect (request id {req.request_id or 'n/a'})\n".encode(),
                details="waf_body_too_large",
            )
        )

    async def Process(  # the gRPC method name
        self, request_iterator: AsyncIterator[pb.ProcessingRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ProcessingResponse]:
        req: _Request | None = None
        body = bytearray()
        received = 0
        tx: Transaction | None = None  # only with inspect_response: lives until the response is inspected
        response: tuple[int, list[tuple[bytes, bytes]]] | None = None  # status and headers, until the body
        try:
            async for message in request_iterator:
                kind = message.WhichOneof("request")
                if kind == "request_headers":
                    req = _Request.from_headers(message.request_headers, _attributes(message))
                    if self.settings.inspect_response and tx is None:
                        tx = self.engine.transaction(client=req.client, request_id=req.request_id)
                    if message.request_headers.end_of_stream:
                        yield self._respond(self._evaluate(req, None, tx), req, "headers")
                    else:
                        yield self._respond(Verdict(), req, "headers")
                elif kind == "request_body" and req is not None:
                    chunk = message.request_body.body
                    received += len(chunk)
                    # Keep at most body_limit bytes: memory stays bounded whatever the client sends.
                    body += chunk[: max(0, self.settings.body_limit - len(body))]
                    if not message.request_body.end_of_stream:
                        yield self._respond(Verdict(), req, "body")
                    elif received > self.settings.body_limit and self.settings.body_limit_action == "reject":
                        DECISIONS.labels("too_large").inc()
                        yield self._too_large(req)
                    elif req.xml and (reason := xmlguard.refusal(bytes(body))):
                        yield self._refuse_xml(req, reason)
                    else:
                        yield self._respond(self._evaluate(req, bytes(body), tx), req, "body")
                elif kind == "response_headers" and tx is not None and req is not None:
                    status, headers = _response_headers(message.response_headers)
                    if message.response_headers.end_of_stream:  # no body (204, 304, HEAD): both phases now
                        verdict = self._inspect_response(req, tx, status, headers, b"")
                        yield self._respond_response(verdict, req, "headers")
                    else:
                        response = (status, headers)
                        yield self._respond_response(Verdict(), req, "headers")
                elif kind == "response_body" and tx is not None and req is not None and response is not None:
                    # The first body message is all Envoy sends when buffering (partially): inspect it now.
                    status, headers = response
                    response = None
                    chunk = message.response_body.body[: self.settings.response_body_limit]
                    yield self._respond_response(self._inspect_response(req, tx, status, headers, chunk), req, "body")
                elif kind == "response_headers":
                    yield pb.ProcessingResponse(response_headers=pb.HeadersResponse())
                elif kind == "response_body":
                    yield pb.ProcessingResponse(response_body=pb.BodyResponse())
        except Exception:
            ERRORS.inc()
            LOG.exception("stream failed")
            raise
        finally:
            if tx is not None:
                tx.close()


async def serve(settings: Settings) -> None:
    engine = Engine(directives(settings))
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", 8 * 1024 * 1024)])
    pb_grpc.add_ExternalProcessorServicer_to_server(WAF(settings, engine), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = server.add_insecure_port(settings.listen)
    await server.start()
    await health_servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    if settings.metrics_port:
        start_http_server(settings.metrics_port)
    print(json.dumps({"event": "ready", "port": port, "mode": settings.mode}), flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    # Drain: stop taking streams, let open ones finish (bounded), then free the engine.
    await health_servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    await server.stop(grace=5)
    engine.close()


def main() -> int:
    parser = argparse.ArgumentParser(prog="envoy-waf", description=__doc__)
    parser.add_argument("--config", required=True, help="settings YAML (mounted from a ConfigMap)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(message)s")
    asyncio.run(serve(Settings.load(args.config)))
    return 0
