"""Run the local cluster until SIGTERM/SIGINT: `python -m tests.harness --dir DIR [--kubeconfig PATH]`.

Prints `ready KUBECONFIG` once every component is up (the molecule scenario and manual runs use this)."""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import threading
from pathlib import Path

from .cluster import Cluster


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness")
    parser.add_argument("--dir", required=True, type=Path, help="work folder (logs, certificates, etcd data)")
    parser.add_argument("--kubeconfig", type=Path, help="also copy the admin kubeconfig here")
    args = parser.parse_args()
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    cluster = Cluster(args.dir.resolve())
    cluster.start()
    try:
        if args.kubeconfig:
            shutil.copyfile(cluster.kubeconfig, args.kubeconfig)
            args.kubeconfig.chmod(0o600)
        print(f"ready {args.kubeconfig or cluster.kubeconfig}", flush=True)
        done.wait()
    finally:
        cluster.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
