"""How much of one request body the proxies of the WAF's Gateway must hold, so that the WAF, not Envoy,
decides what happens to a body (shared by validation and the builders).

The WAF's EnvoyExtensionPolicy has Envoy buffer the whole request body before the WAF sees it (processing
mode Buffered). Envoy answers 413 itself once the buffered body passes the stream's buffer limit: for
HTTP/1.1 the listener's per_connection_buffer_limit_bytes, for HTTP/2 the stream's initial window
(http2_protocol_options.initial_stream_window_size). Only the body's bytes count: a body of exactly the
limit passes, one byte more gets 413, whatever the size of the headers (proven with a real Envoy and the
WAF by waf/tests/test_body_buffer.py: 40 KiB of headers change nothing, chunked bodies count their decoded
bytes). Envoy Gateway v1.9.0 sets 32 KiB and 64 KiB (internal/xds/translator/listener.go), so both need
raising.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Envoy Gateway v1.9.0's values when no ClientTrafficPolicy sets them (internal/xds/translator/listener.go:
# tcpListenerPerConnectionBufferLimitBytes, http2InitialStreamWindowSize). The block never goes below them.
ENVOY_GATEWAY_CONNECTION_BUFFER = 32768
ENVOY_GATEWAY_HTTP2_STREAM_WINDOW = 65536


def needed(values: Mapping[str, Any]) -> int | None:
    """Bytes of one request body the WAF's Gateway must buffer whole, or None when the block attaches no
    WAF that reads bodies. `values` is the effective config (defaults applied).

    - limit_action reject: waf.body.limit. Every body up to the limit reaches the WAF whole; a larger one
      gets Envoy's 413, the status the WAF would answer itself, so holding more would only cost memory.
    - limit_action partial: waf.body.max_size (above the limit). The WAF inspects the first `limit` bytes
      of a body but Envoy still buffers all of it first, so max_size is the largest body accepted.
    """
    waf = values["waf"]
    if not (waf["enabled"] and waf["default_policy"]["enabled"] and waf["body"]["enabled"]):
        return None
    body = waf["body"]
    return int(body["max_size"] if body["limit_action"] == "partial" else body["limit"])


def client_traffic_settings(size: int) -> dict[str, Any]:
    """The ClientTrafficPolicy fields that let the proxies buffer `size` bytes of a request body, over
    HTTP/1.1 and HTTP/2, never below Envoy Gateway's own values (integers: exact bytes, no unit rounding)."""
    return {
        "connection": {"bufferLimit": max(size, ENVOY_GATEWAY_CONNECTION_BUFFER)},
        "http2": {"initialStreamWindowSize": max(size, ENVOY_GATEWAY_HTTP2_STREAM_WINDOW)},
    }
