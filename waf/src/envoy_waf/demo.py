"""`make waf-demo [CONFIG=override.yml]`: a real Envoy with the ext_proc filter (headers + body) -> the WAF
on the settings the block renders for that config (tools/waf_settings.py, the builder `make render` runs;
waf.enabled switched on; no config: the block's defaults, CRS paranoia level 1, blocking) -> a backend, all
on loopback, until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from .efficacy import Config, rendered_settings
from .testbed import Backend, EnvoyProcess, WAFProcess


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--override", help="a workspace block entry or config mapping, as make render CONFIG= takes")
    args = parser.parse_args()
    port = int(os.environ.get("WAF_DEMO_PORT", "10000"))
    crs = os.environ.get("CRS_DIR", str(Path(__file__).resolve().parents[3].parent / "shared" / "crs" / "v4.28.0"))
    if not (Path(crs) / "rules").is_dir():
        print(f"OWASP CRS not found at {crs}: set CRS_DIR", file=sys.stderr)
        return 2
    config = Config(args.override or "the block's defaults", ("waf.enabled=true",), 0, args.override)
    try:
        settings = rendered_settings(config)
    except RuntimeError as exc:
        print(exc, file=sys.stderr)
        return 2
    settings.update({"metrics_port": 0})
    for machine_key in ("crs_dir", "listen"):
        settings.pop(machine_key, None)
    level, mode = settings.get("paranoia_level", 1), settings.get("mode", "block")
    backend = Backend()
    waf = WAFProcess(crs, **settings)
    envoy = EnvoyProcess(backend.port, waf.port, port=port)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(
        f"""Envoy listens on http://127.0.0.1:{port} (WAF: OWASP CRS, paranoia level {level}, {mode},
settings rendered by the block for {config.name}: {waf.dir}/waf.yaml).
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
