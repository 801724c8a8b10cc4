"""Gateway API conformance on the block's own install: `python -m tests.conformance --out DIR [--core]
[--class NAME ...]` (make conformance, make conformance-core).

One session of the real node (tests/harness, images imported, nothing pulled) with the conformance suite's
images (tools/oci/conformance.py) beside the block's. The block is installed with its real install playbook
the way users do, its network policies on (`network_policy.provider: kubernetes`) in a cluster where every
namespace the suite uses (the block's, the suite's base namespaces and every namespace its tests create)
starts with a default-deny; the suite's namespaces get what a tenant adds by the block's documentation
(docs/default-deny.md: backends are not opened): their pods admit the block's proxies, and the proxies may send
to them. Then upstream's suite (tools/conformance/suite, `go test -c` of sigs.k8s.io/gateway-api/conformance)
runs against each GatewayClass in turn, with the profiles and supported features of Envoy Gateway's own
v1.9.0 report, and writes upstream's ConformanceReport to DIR/<class>-report.yaml (its log beside it).

Exit status: 1 when a class in --strict (default: eg-dedicated) falls short of upstream's report (a failed
test, fewer passed), or when anything was pulled; the other classes' failures are reported, not judged
(docs/conformance.md explains each on eg-shared).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from envoy_block import ENVOY_GATEWAY_VERSION
from envoy_block.polycrate import merge_config
from tests.cluster.conftest import BLOCK_POLY, Kube, chart_registry
from tests.conformance import report
from tests.harness.cluster import Cluster
from tests.harness.metallb import POOL
from tests.harness.node import NODE_IP, enter_namespaces, node_image_archives
from tools.oci import Store
from tools.oci.conformance import BINARIES, conformance_archives, suite_dir

BLOCK_NS = "envoy-gateway-system"
# Added by the suite to every namespace it applies (-namespace-labels) and set here on those made before it
# runs: the proxies' egress policy selects the suite's namespaces by it.
SUITE_LABEL = ("conformance.envoy.polycrate.io/suite", "true")
NAMESPACE_DOC = re.compile(r"^kind:\s*Namespace\s*$", re.MULTILINE)
NAME_LINE = re.compile(r"^  name:\s*(\S+)\s*$", re.MULTILINE)


def suite_namespaces(root: Path) -> list[str]:
    """Every Namespace the suite's gateway manifests create (base/ and tests/), read from the pinned module."""
    names: set[str] = set()
    for folder in ("base", "tests"):
        for path in sorted((root / folder).glob("*.yaml")):
            for doc in re.split(r"^---\s*$", path.read_text(encoding="utf-8"), flags=re.MULTILINE):
                if NAMESPACE_DOC.search(doc):
                    match = NAME_LINE.search(doc)
                    if match:
                        names.add(match.group(1))
    return sorted(names)


def block_config(kube: Kube) -> dict[str, Any]:
    """The block as documented for a default-deny cluster, with upstream's CRD channel (its report is
    `gatewayAPIChannel: experimental`: ListenerSet, TLSRoute's modes, BackendTLSPolicy). One proxy per Gateway
    with a small CPU request: the suite runs dozens of Gateways at once on a 2-core node, and the block's
    default (2 replicas, 100m each) would leave most of them unscheduled; the drain is short so that the
    suite's deletions do not wait the default 30 s per proxy."""
    return kube.config(
        **merge_config(
            {
                "gateway_api_crds": {"channel": "experimental"},
                "network_policy": {"provider": "kubernetes", "api_server_cidrs": [f"{NODE_IP}/32"]},
                "data_plane": {
                    "replicas": 1,
                    "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "1Gi"}},
                    "shutdown": {"min_drain_duration": "1s", "drain_timeout": "5s"},
                },
            },
            {},
        )
    )


def _policy(namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def default_deny(namespace: str) -> dict[str, Any]:
    return _policy(namespace, "default-deny", {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]})


def proxy_labels(kube: Kube) -> dict[str, str]:
    """The proxies' pod labels as the block's own proxy policy selects them (read back, not restated)."""
    path = f"/apis/networking.k8s.io/v1/namespaces/{BLOCK_NS}/networkpolicies"
    for policy in kube.items(path):
        if policy["metadata"]["name"].endswith("-proxies"):
            return dict(policy["spec"]["podSelector"]["matchLabels"])
    raise RuntimeError(f"the block rendered no proxy NetworkPolicy in {BLOCK_NS}")


def prepare_block_namespace(kube: Kube) -> None:
    """The block's namespace exists before the install, with its default-deny (as on a careful cluster)."""
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": BLOCK_NS}})
    kube.apply(default_deny(BLOCK_NS))


def _settled(kube: Kube, path: str) -> bool:
    return bool((kube.get(path) or {}).get("status", {}).get("phase") != "Terminating")


def open_suite_to_proxies(kube: Kube, namespaces: list[str], proxies: dict[str, str]) -> None:
    """Each suite namespace: default-deny, and its pods admit the proxies on any port (the tenant's side); the
    proxies may send to any pod of a suite namespace (the egress the block leaves to its users)."""
    for name in namespaces:
        path = f"/api/v1/namespaces/{name}"
        # The suite deletes its namespaces at the end of a run: the next class's run starts after they are gone.
        kube.wait(partial(_settled, kube, path), 300, f"{path} not terminating")
        labels = dict([SUITE_LABEL])
        kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
        kube.apply(default_deny(name))
        from_proxies = {
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": BLOCK_NS}},
            "podSelector": {"matchLabels": proxies},
        }
        spec = {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": [from_proxies]}]}
        kube.apply(_policy(name, "from-envoy-proxies", spec))
    to_suite = {"namespaceSelector": {"matchLabels": dict([SUITE_LABEL])}}
    spec = {"podSelector": {"matchLabels": proxies}, "policyTypes": ["Egress"], "egress": [{"to": [to_suite]}]}
    kube.apply(_policy(BLOCK_NS, "envoy-proxies-to-conformance", spec))
    # The block's proxy policy admits TCP only (network_policies.py: ingress from anyone on TCP, every port):
    # a UDPRoute's listener needs UDP in, which a platform team adds beside it (docs/conformance.md).
    udp_in = {
        "podSelector": {"matchLabels": proxies},
        "policyTypes": ["Ingress"],
        "ingress": [{"ports": [{"protocol": "UDP"}]}],
    }
    kube.apply(_policy(BLOCK_NS, "envoy-proxies-udp-in", udp_in))


def implementation_version() -> str:
    return f"{ENVOY_GATEWAY_VERSION} (polycrate block envoy {BLOCK_POLY['version']})"


def suite_args(gateway_class: str, out: Path, *, core_only: bool) -> list[str]:
    features = list(report.CORE_RUN_FEATURES if core_only else report.UPSTREAM_FEATURES)
    args = [
        "-test.v",
        # The package's other tests check the suite's option parsing against files of its source tree.
        "-test.run=^TestConformance$",
        "-test.timeout=90m",
        f"-gateway-class={gateway_class}",
        f"-conformance-profiles={','.join(report.PROFILES)}",
        # Named features keep the suite from inferring every feature the GatewayClass advertises; the profiles
        # add their own core features.
        f"-supported-features={','.join(features)}",
        f"-namespace-labels={'='.join(SUITE_LABEL)}",
        f"-report-output={out}",
        *(f"-{key}={value}" for key, value in report.IMPLEMENTATION.items() if key != "contact"),
        f"-contact={','.join(report.IMPLEMENTATION['contact'])}",
        f"-version={implementation_version()}",
        f"-mode={gateway_class}",
        # GatewayStaticAddresses: an address MetalLB's pool holds, and one it does not.
        f"-usable-address={ipaddress.ip_network(POOL)[240]}",
        "-unusable-address=198.51.100.240",
    ]
    return args


def run_suite(kube: Kube, gateway_class: str, out_dir: Path, *, core_only: bool) -> dict[str, Any] | None:
    """The suite against `gateway_class`; its report, or None when it wrote none (its setup failed)."""
    out = out_dir / f"{gateway_class}-report.yaml"
    log = out_dir / f"{gateway_class}.log"
    out.unlink(missing_ok=True)
    suite = BINARIES / "gateway-conformance.test"
    command = [str(suite), *suite_args(gateway_class, out.resolve(), core_only=core_only)]
    start = time.monotonic()
    with log.open("w", encoding="utf-8") as sink:
        env = {"KUBECONFIG": str(kube.cluster.kubeconfig), "PATH": "/usr/bin:/bin", "HOME": str(kube.workdir)}
        # The suite's own exit status says a test failed; the report says which, and is what is judged.
        subprocess.run(command, stdout=sink, stderr=subprocess.STDOUT, env=env, check=False, cwd=out_dir)
    took = time.monotonic() - start
    print(f"conformance {gateway_class}: {took / 60:.1f} min, log {log}", flush=True)
    return report.load(out) if out.exists() else None


def _interrupt(*_: object) -> None:
    # A job runner's SIGTERM tears the cluster down like Ctrl-C (the finally below), never leaves it running.
    raise KeyboardInterrupt


def main() -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    parser = argparse.ArgumentParser(prog="python -m tests.conformance", description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="where the reports and the suite's logs go")
    parser.add_argument("--class", dest="classes", action="append", help="GatewayClass (repeatable)")
    parser.add_argument("--strict", action="append", help="classes judged against upstream (eg-dedicated)")
    parser.add_argument("--core", action="store_true", help="the profiles' core tests only")
    args = parser.parse_args()
    classes = args.classes or ["eg-dedicated", "eg-shared"]
    strict = set(args.strict or ["eg-dedicated"])
    out_dir = args.out.resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    # Exported on the machine's side (buildah), before the namespaces exist.
    archives = [*node_image_archives(True), *conformance_archives(Store(offline=True))]
    namespaces = suite_namespaces(suite_dir())
    # More pods than the harness's default 40: one proxy per Gateway beside the suite's backends (tests/harness).
    os.environ.setdefault("HARNESS_MAX_PODS", "110")
    workdir = Path(tempfile.mkdtemp(prefix="envoy-conformance-"))
    enter_namespaces(workdir)
    cluster = Cluster(workdir, images=archives)
    code = 0
    reports: dict[str, dict[str, Any]] = {}
    try:
        cluster.start()
        with chart_registry(cluster, "registry") as registry:
            kube = Kube(cluster, registry, workdir / "block")
            kube.workdir.mkdir()
            prepare_block_namespace(kube)
            kube.playbook("install", block_config(kube)).ok()
            print(f"conformance: block installed ({(time.monotonic() - started) / 60:.1f} min)", flush=True)
            proxies = proxy_labels(kube)
            for gateway_class in classes:
                open_suite_to_proxies(kube, namespaces, proxies)
                written = run_suite(kube, gateway_class, out_dir, core_only=args.core)
                log = (out_dir / f"{gateway_class}.log").read_text(encoding="utf-8")
                problems = []
                if written is None:
                    # Setup failed (a require in the suite's Setup): no test ran. The report says so and why.
                    reason = report.setup_error(log)
                    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
                    written = report.setup_failed(
                        gateway_class, implementation_version(), reason, stamp, core_only=args.core
                    )
                    out = out_dir / f"{gateway_class}-report.yaml"
                    out.write_text(yaml.safe_dump(written, sort_keys=False), encoding="utf-8")
                    problems.append(f"the suite's setup did not complete, no test ran: {reason}")
                else:
                    problems += report.shortfalls(written, core_only=args.core)
                reports[gateway_class] = written
                problems += [f"failed by the suite's output: {name}" for name in report.failed_in_log(log)]
                verdict = "short of upstream" if problems else "passes what upstream passes"
                print(f"conformance {gateway_class}: {verdict}", *problems, sep="\n  ", flush=True)
                if problems and gateway_class in strict:
                    code = 1
    finally:
        cluster.stop()
    pulls = cluster.pulls()
    if pulls:
        print("conformance: image pulls attempted:\n" + "\n".join(pulls[:10]), file=sys.stderr)
        code = 1
    print(report.table(reports), flush=True)
    (out_dir / "summary.md").write_text(report.table(reports) + "\n", encoding="utf-8")
    (out_dir / "namespaces.yaml").write_text(yaml.safe_dump(namespaces), encoding="utf-8")
    print(f"conformance: {(time.monotonic() - started) / 60:.1f} min in all, exit {code}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
