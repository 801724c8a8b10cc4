"""`make waf-demo`: a real Envoy with the ext_proc filter (headers + body) -> the WAF (CRS, paranoia
level 1, blocking) -> a backend, all on loopback, until SIGINT/SIGTERM."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

from .testbed import Backend, EnvoyProcess, WAFProcess


def main() -> int:
    port = int(os.environ.get("WAF_DEMO_PORT", "10000"))
    crs = os.environ.get("CRS_DIR", str(Path(__file__).resolve().parents[3].parent / "shared" / "crs" / "v4.28.0"))
    if not (Path(crs) / "rules").is_dir():
        print(f"OWASP CRS not found at {crs}: set CRS_DIR", file=sys.stderr)
        return 2
    backend = Backend()
    waf = WAFProcess(crs)
    envoy = EnvoyProcess(backend.port, waf.port, port=port)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(
        f"""Envoy listens on http://127.0.0.1:{port} (WAF: OWASP CRS, paranoia level 1, blocking).
Try:
  curl -i 'http://127.0.0.1:{port}/?q=hello'                              # 200
  curl -i "http://127.0.0.1:{port}/?id=1'%20OR%20'1'='1"                  # 403 (SQL injection)
  curl -i -d 'comment=<script>alert(1)</script>' http://127.0.0.1:{port}/  # 403 (XSS in the body)
WAF log (one JSON line per blocked request): {waf.dir}/waf.log
Ctrl-C stops Envoy, the WAF and the backend.""",
        flush=True,
    )
    try:
        stop.wait()
    finally:
        envoy.stop()
        waf.stop()
        backend.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
