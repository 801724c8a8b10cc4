"""One worker process: the ext_proc gRPC service (envoy.service.ext_proc.v3.ExternalProcessor), one
transaction per stream, and the gRPC health service. The supervisor (supervisor.py) starts several on one
port (SO_REUSEPORT); `python -m envoy_waf.server` is how it starts each.

Request headers start the transaction; with no body (end_of_stream) phase 2 runs at once and the stream
ends after one message each way, otherwise the verdict waits for the buffered body. A block is an
ImmediateResponse with the configured status and the request id; everything else is CONTINUE.
Detection-only mode never blocks but logs the same way.

With inspect_response the transaction stays open for the response: its headers run phase 3, and the first
response body message Envoy sends (the whole body when buffered, the first buffer-full when buffered
partially), trimmed to response_body_limit, runs phase 4 (an empty body when there is none). A block there
replaces the response with an ImmediateResponse; the rest of a longer body is not inspected. The stream
then ends after the response's verdict instead of the request's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from envoy.config.core.v3 import base_pb2
from envoy.service.ext_proc.v3 import external_processor_pb2 as pb
from envoy.service.ext_proc.v3 import external_processor_pb2_grpc as pb_grpc
from envoy.type.v3 import http_status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from . import lines, xmlguard
from .board import Board
from .engine import Engine, Transaction, Verdict
from .metrics import DECISION, ERRORS, LATENCY, REQUESTS, RESPONSE_DECISION, RULE_HITS
from .settings import Settings, directives

LOG = logging.getLogger("envoy_waf")
BLOCKING_EVALUATION_RULE = 949110  # CRS: inbound anomaly score exceeded
OUTBOUND_EVALUATION_RULE = 959100  # CRS: outbound (response) anomaly score exceeded
# Built once: every allowed request gets the same answer (grpc serialises it; nobody mutates it).
CONTINUE = pb.CommonResponse(status=pb.CommonResponse.CONTINUE)
CONTINUE_HEADERS = pb.ProcessingResponse(request_headers=pb.HeadersResponse(response=CONTINUE))
CONTINUE_BODY = pb.ProcessingResponse(request_body=pb.BodyResponse(response=CONTINUE))
RESPONSE_HEADERS = pb.ProcessingResponse(response_headers=pb.HeadersResponse())
RESPONSE_BODY = pb.ProcessingResponse(response_body=pb.BodyResponse())


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


def _attributes(request: pb.ProcessingRequest) -> dict[str, object]:
    out: dict[str, object] = {}
    for struct in request.attributes.values():
        for key, value in struct.fields.items():
            out[key] = value.string_value or value.number_value
    return out


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


class WAF(pb_grpc.ExternalProcessorServicer):
    """The decisions: evaluate, answer, log and count. Servicer adds the gRPC stream handling."""

    def __init__(self, settings: Settings, engine: Engine) -> None:
        self.settings = settings
        self.engine = engine
        self.pid = os.getpid()  # in audit lines: which worker decided

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
        DECISION[self._judge(verdict, req, BLOCKING_EVALUATION_RULE)].inc()
        return verdict

    def _judge(self, verdict: Verdict, req: _Request, evaluation_rule: int, **extra: object) -> str:
        """The verdict's action (block, flag, allow; detect when DetectionOnly let the CRS's blocking
        evaluation `evaluation_rule` fire), its rule hits counted and, when a rule matched, one JSON audit
        line: rule ids and messages, never bodies."""
        for rule_id in verdict.rule_ids:
            RULE_HITS.labels(str(rule_id)).inc()
        action = "block" if verdict.blocked else ("flag" if verdict.rule_ids else "allow")
        if self.settings.mode == "detect" and evaluation_rule in verdict.rule_ids:
            action = "detect"
        if verdict.rule_ids:
            line = {
                "event": "waf",
                "action": action,
                **({"phase": extra.pop("phase")} if "phase" in extra else {}),
                "request_id": req.request_id,
                "method": req.method,
                "path": req.path[:256],
                "client": req.client[0],
                "worker": self.pid,
                **extra,
                "rule_ids": verdict.rule_ids,
                "messages": verdict.messages[:20],
            }
            LOG.warning(json.dumps(line))
        return action

    def _blocked(self, verdict: Verdict, req: _Request, what: str, details: str) -> pb.ProcessingResponse | None:
        """The ImmediateResponse for a verdict that blocks in block mode (None otherwise): block_status
        replaces the CRS's 403; other engine statuses (413 body too large, 400 unparsable body) say something
        else and pass through."""
        if not (verdict.blocked and self.settings.mode == "block"):
            return None
        status = verdict.status if verdict.status not in (0, 200, 403) else self.settings.block_status
        return pb.ProcessingResponse(
            immediate_response=pb.ImmediateResponse(
                status=http_status_pb2.HttpStatus(code=status),
                body=f"{what} blocked (request id {req.request_id or 'n/a'})\n".encode(),
                details=details,
            )
        )

    def _respond(self, verdict: Verdict, req: _Request, phase: str) -> pb.ProcessingResponse:
        blocked = self._blocked(verdict, req, "Request", "waf_blocked")
        return blocked or (CONTINUE_HEADERS if phase == "headers" else CONTINUE_BODY)

    def _refuse_xml(self, req: _Request, reason: str) -> pb.ProcessingResponse:
        """400 for an XML body the engine must not parse (xmlguard), in block and detect mode alike:
        parsing it could hold the engine for minutes, so detection-only cannot look at it either."""
        DECISION["refused"].inc()
        LOG.warning(
            json.dumps(
                {
                    "event": "waf",
                    "action": "refused",
                    "request_id": req.request_id,
                    "method": req.method,
                    "path": req.path[:256],
                    "client": req.client[0],
                    "worker": self.pid,
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

    def _inspect_response(
        self, req: _Request, tx: Transaction, status: int, headers: list[tuple[bytes, bytes]], body: bytes
    ) -> Verdict:
        """Phases 3 and 4 of the request's transaction; logged like a request, with "phase": "response"."""
        verdict = tx.response(status=status, headers=headers, body=body)
        RESPONSE_DECISION[self._judge(verdict, req, OUTBOUND_EVALUATION_RULE, phase="response", status=status)].inc()
        return verdict

    def _respond_response(self, verdict: Verdict, req: _Request, phase: str) -> pb.ProcessingResponse:
        # A blocked response never reaches the client.
        blocked = self._blocked(verdict, req, "Response", "waf_response_blocked")
        return blocked or (RESPONSE_HEADERS if phase == "headers" else RESPONSE_BODY)


class _Stream:
    """One ext_proc stream (one HTTP request): each message in, at most one response out."""

    __slots__ = ("body", "done", "received", "req", "response", "tx", "waf")

    def __init__(self, waf: WAF) -> None:
        self.waf = waf
        self.done = False
        self.req: _Request | None = None
        self.body = bytearray()
        self.received = 0
        self.tx: Transaction | None = None  # only with inspect_response: lives until the response's verdict
        self.response: tuple[int, list[tuple[bytes, bytes]]] | None = None  # status and headers, until the body

    def _decided(self, answer: pb.ProcessingResponse) -> pb.ProcessingResponse:
        """The request's verdict is out: the stream is done, unless the response is still to be inspected
        (a blocked request never gets one)."""
        self.done = self.tx is None or answer.HasField("immediate_response")
        return answer

    def close(self) -> None:
        if self.tx is not None:
            self.tx.close()
            self.tx = None

    def on(self, message: pb.ProcessingRequest) -> pb.ProcessingResponse | None:
        waf = self.waf
        kind = message.WhichOneof("request")
        if kind == "request_headers":
            req = self.req = _Request.from_headers(message.request_headers, _attributes(message))
            if waf.settings.inspect_response and self.tx is None:
                self.tx = waf.engine.transaction(client=req.client, request_id=req.request_id)
            if message.request_headers.end_of_stream:  # no body follows: decide now, one round trip
                return self._decided(waf._respond(waf._evaluate(req, None, self.tx), req, "headers"))
            return CONTINUE_HEADERS
        if kind == "request_body" and self.req is not None:
            req = self.req
            chunk = message.request_body.body
            self.received += len(chunk)
            limit = waf.settings.body_limit
            # Keep at most body_limit bytes: memory stays bounded whatever the client sends.
            self.body += chunk[: max(0, limit - len(self.body))]
            if not message.request_body.end_of_stream:
                return CONTINUE_BODY
            if self.received > limit and waf.settings.body_limit_action == "reject":
                DECISION["too_large"].inc()
                return self._decided(waf._too_large(req))
            if req.xml and (reason := xmlguard.refusal(bytes(self.body))):
                return self._decided(waf._refuse_xml(req, reason))
            return self._decided(waf._respond(waf._evaluate(req, bytes(self.body), self.tx), req, "body"))
        if kind == "response_headers":
            if self.tx is None or self.req is None:
                return RESPONSE_HEADERS
            status, headers = _response_headers(message.response_headers)
            if message.response_headers.end_of_stream:  # no body (204, 304, HEAD): both phases now
                self.done = True
                return waf._respond_response(
                    waf._inspect_response(self.req, self.tx, status, headers, b""), self.req, "headers"
                )
            self.response = (status, headers)
            return RESPONSE_HEADERS
        if kind == "response_body":
            if self.tx is None or self.req is None or self.response is None:
                return RESPONSE_BODY
            # The first body message is all Envoy sends when buffering (partially): inspect it now.
            (status, headers), self.response = self.response, None
            self.done = True
            chunk = message.response_body.body[: waf.settings.response_body_limit]
            return waf._respond_response(
                waf._inspect_response(self.req, self.tx, status, headers, chunk), self.req, "body"
            )
        return None


class Servicer(WAF):
    """grpc.aio, not grpc's thread-pool server: a stream waiting for a slow client's body costs a thread
    there, and a few dozen slow uploads left every other request waiting until Envoy's message timeout
    (504, or 500 failing closed); here it costs a coroutine (tests/test_hostile.py)."""

    async def Process(  # the gRPC method name
        self, request_iterator: AsyncIterator[pb.ProcessingRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ProcessingResponse]:
        stream = _Stream(self)
        try:
            async for message in request_iterator:
                response = stream.on(message)
                if response is not None:
                    yield response
                    if stream.done:
                        # The verdict is out and nothing later matters to the WAF: end the stream now
                        # rather than wait for Envoy to reset it (one less wake-up and no cancellation).
                        return
        except Exception:
            ERRORS.inc()
            LOG.exception("stream failed")
            raise
        finally:
            stream.close()


_SERVING = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.SERVING)
_NOT_SERVING = health_pb2.HealthCheckResponse(status=health_pb2.HealthCheckResponse.NOT_SERVING)


class Health(health_pb2_grpc.HealthServicer):
    """grpc.health.v1 Check: SERVING only while every worker is ready (the supervisor's board) and this one
    is not draining. Watch is not offered (UNIMPLEMENTED): kubelet and Envoy use Check."""

    def __init__(self, board: Board) -> None:
        self.board = board
        self.draining = False

    async def Check(self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext) -> Any:
        if request.service not in ("", SERVICE):
            await context.abort(grpc.StatusCode.NOT_FOUND, f"unknown service {request.service!r}")
        return _SERVING if self.board.all_ready() and not self.draining else _NOT_SERVING


SERVICE = "envoy.service.ext_proc.v3.ExternalProcessor"
GRACE = 5.0  # seconds open streams get to finish after SIGTERM
CONNECTION_AGE_MS = 30_000
OPTIONS = [
    ("grpc.max_receive_message_length", 8 * 1024 * 1024),
    ("grpc.so_reuseport", 1),  # every worker binds `listen`; the kernel spreads connections over them
    # SO_REUSEPORT spreads connections, not streams: Envoy keeps its connections for an hour, so a worker
    # that replaces a dead one would get only new connections. A graceful GOAWAY (grpc sends two, so no
    # stream is lost) every ~30 s has Envoy reconnect and the kernel spread the connections again.
    ("grpc.max_connection_age_ms", CONNECTION_AGE_MS),
    ("grpc.max_connection_age_grace_ms", int(GRACE * 1000)),
]


def _ready(port: int, ready_fd: int | None) -> None:
    lines.event("worker_ready", worker=os.getpid(), port=port)
    if ready_fd is not None:
        os.write(ready_fd, f"{os.getpid()} {port}\n".encode())
        os.close(ready_fd)


async def serve(settings: Settings, board: Board, ready_fd: int | None) -> None:
    engine = Engine(directives(settings))
    server = grpc.aio.server(options=OPTIONS)
    pb_grpc.add_ExternalProcessorServicer_to_server(Servicer(settings, engine), server)
    health_servicer = Health(board)
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    port = server.add_insecure_port(settings.listen)
    await server.start()
    _ready(port, ready_fd)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    # Drain: stop taking streams, let open ones finish (bounded), then free the engine.
    health_servicer.draining = True
    lines.event("worker_draining", worker=os.getpid())
    await server.stop(grace=GRACE)
    engine.close()


def main(argv: list[str] | None = None) -> int:
    """A worker: `python -m envoy_waf.server --config FILE --board FILE [--ready-fd N]`."""
    parser = argparse.ArgumentParser(prog="envoy-waf-worker", description=__doc__)
    parser.add_argument("--config", required=True)
    parser.add_argument("--board", required=True, help="the supervisor's readiness board (board.py)")
    parser.add_argument("--ready-fd", type=int, help="pipe to the supervisor: this worker's pid once it serves")
    args = parser.parse_args(argv)
    lines.configure()
    settings = Settings.load(args.config)
    board = Board(Path(args.board))
    asyncio.run(serve(settings, board, args.ready_fd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
