"""Run the EMULATED API server: `python -m tests.emulator --kubeconfig PATH [--port N]`.

Writes a kubeconfig pointing at it, prints `ready <url>` and serves until SIGTERM/SIGINT. The tests start
it as a subprocess so the real ansible-playbook (kubernetes.core + the Python client) talks HTTP to it.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

import kmock
import yaml

from tests.emulator.apiserver import EmulatedAPIServer


def kubeconfig(url: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "emulated", "cluster": {"server": url}}],
        "users": [{"name": "emulated", "user": {"token": "emulated-not-a-secret"}}],
        "contexts": [{"name": "emulated", "context": {"cluster": "emulated", "user": "emulated"}}],
        "current-context": "emulated",
    }


async def serve(path: Path, port: int) -> None:
    handler = EmulatedAPIServer()
    async with handler, kmock.Server(handler, port=port) as server:
        url = f"http://{server.host}:{server.port}"
        path.write_text(yaml.safe_dump(kubeconfig(url)), encoding="utf-8")
        print(f"ready {url}", flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    asyncio.run(serve(args.kubeconfig, args.port))
    return 0


if __name__ == "__main__":
    sys.exit(main())
