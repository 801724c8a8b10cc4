"""The local cluster: `python -m tests.harness --dir DIR [--nodes N] [--kubeconfig PATH] [--images]
[-- CMD ...]`.

The control plane and N real nodes (node.py; default 1) on one L2 segment (lan.py), each node in a network and
mount namespace of its own (needs root); the control plane shares node 1's, where CMD runs. With
`-- CMD`: CMD runs inside that namespace with KUBECONFIG set (the API server is at https://10.10.0.2:6443
there), its exit code is printed and returned, then everything is torn down (processes, mounts, cgroups).
`--images` imports the images `make images` built (Envoy Gateway, Envoy, the WAF, the echo backend) besides
the node's own (pause, CoreDNS, the echo backend). A real MetalLB (controller and speaker, L2 mode, its pool
203.0.113.0/24) assigns and announces LoadBalancer addresses; its images are imported with the node's own.

Without CMD: it runs until SIGTERM/SIGINT, printing `ready KUBECONFIG` once every component is up; the API
server is reachable only inside its namespace (`nsenter -t PID -n -m CMD`, PID the harness's).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .cluster import Cluster
from .node import enter_namespaces, node_image_archives


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.harness")
    parser.add_argument("--dir", required=True, type=Path, help="work folder (logs, certificates, etcd data)")
    parser.add_argument("--kubeconfig", type=Path, help="also copy the admin kubeconfig here")
    parser.add_argument("--images", action="store_true", help="import the images `make images` built")
    parser.add_argument(
        "--nodes",
        type=int,
        default=1,
        help="how many real nodes (default 1): each with its own kubelet, containerd, kube-proxy and kube-router "
        "in namespaces of its own, on one L2 segment, zones zone-a/zone-b alternating; the control plane "
        "and CMD in node 1's namespaces",
    )
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ...: run CMD against the cluster")
    args = parser.parse_args()
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    workdir = args.dir.resolve()
    # Exported on the machine's side (buildah), before the namespaces exist.
    images = node_image_archives(args.images)
    workdir.mkdir(parents=True, exist_ok=True)
    # Before any thread: unshare(CLONE_NEWNS) refuses a multi-threaded process.
    enter_namespaces(workdir)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    start = time.monotonic()
    if args.nodes < 1:
        parser.error("--nodes must be at least 1")
    cluster = Cluster(workdir, images=images, nodes=args.nodes)
    code = 0
    try:
        cluster.start()
        steps = ", ".join(f"{k} {v:.1f} s" for k, v in cluster.timings.items())
        what = "real node" if args.nodes == 1 else f"{args.nodes} real nodes"
        print(f"harness: {what} up in {time.monotonic() - start:.1f} s ({steps})", flush=True)
        if args.kubeconfig:
            shutil.copyfile(cluster.kubeconfig, args.kubeconfig)
            args.kubeconfig.chmod(0o600)
        if cmd:
            env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "HARNESS_NODE": "real"}
            child = subprocess.Popen(cmd, env=env)
            while child.poll() is None and not done.is_set():
                time.sleep(0.2)
            if child.poll() is None:
                child.terminate()
            code = child.wait()
            print(f"harness: {' '.join(cmd)}: exit {code}", flush=True)
        else:
            print(f"ready {args.kubeconfig or cluster.kubeconfig}", flush=True)
            done.wait()
    finally:
        cluster.stop()
        if cluster.leftovers:
            print("harness: left after teardown: " + "; ".join(cluster.leftovers), file=sys.stderr)
            code = code or 1
        # Every image is imported and pods pull IfNotPresent, as users run them: a pull is a failure.
        pulls = cluster.pulls()
        if pulls:
            print("harness: image pulls attempted:\n" + "\n".join(pulls[:10]), file=sys.stderr)
            code = code or 1
    return code


if __name__ == "__main__":
    sys.exit(main())
