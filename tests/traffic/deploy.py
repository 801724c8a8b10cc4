"""One config, deployed the way these tests can: translated by Envoy Gateway, the WAF (when the config has
one) started on the settings the block rendered into its ConfigMap, a backend on every tenant Service's
address, and Envoy on the generated configuration."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.harness import pki
from tests.translator import tenant

from . import scenario, stack

COMPONENT = "app.kubernetes.io/component"


@dataclass
class Deployed:
    scenario: scenario.Scenario
    envoy: stack.Envoy
    waf: stack.WAF | None
    tls_backends: dict[str, stack.TlsBackend]

    def port(self, listener: str) -> int:
        return scenario.listener_port(self.scenario, listener)

    def host(self, listener: str) -> str:
        """The hostname the tenant's route for `listener` matches (tests/translator/tenant.py)."""
        spec = next(s for s in self.scenario.config.get("default_gateway.listeners") if s["name"] == listener)
        name = f"{self.scenario.config.get('default_gateway.name')}-{listener}"
        return str(spec.get("hostname") or f"{name}.example.com")

    def backend(self, listener: str) -> str:
        """The name of the backend Service behind the tenant's route for `listener`."""
        return f"{self.scenario.config.get('default_gateway.name')}-{listener}-backend"


def backend_certificate(directory: Path, hostname: str) -> tuple[Path, Path]:
    """A self-signed certificate for a TLS backend (`hostname` and the tenants' *.example.com), with a key
    of its own: it verifies where the Gateway's fixture certificate would too, yet is told apart by DER."""
    cert, key = pki.self_signed(hostname, "*.example.com")
    cert_file, key_file = directory / f"{hostname}.crt", directory / f"{hostname}.key"
    cert_file.write_bytes(cert)
    key_file.write_bytes(key)
    return cert_file, key_file


def _waf_pod(built: scenario.Scenario) -> tuple[list[str], dict[str, dict[str, str]]]:
    """The rendered WAF Deployment's container args and, per mount path, the files the kubelet would
    mount there from its ConfigMap volumes."""
    deployment = next(
        o for o in built.inputs if o["kind"] == "Deployment" and o["metadata"]["labels"].get(COMPONENT) == "waf"
    )
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    volumes = {v["name"]: v["configMap"]["name"] for v in pod.get("volumes", []) if "configMap" in v}
    mounts = {
        m["mountPath"]: built.rendered("ConfigMap", volumes[m["name"]])["data"]
        for m in container.get("volumeMounts", [])
        if m["name"] in volumes
    }
    return list(container["args"]), mounts


@contextmanager
def deployed(cfg: Mapping[str, Any], workdir: Path) -> Iterator[Deployed]:
    built = scenario.build(cfg)
    with ExitStack() as stop:
        waf = None
        if built.config.get("waf.enabled"):
            waf = stack.WAF(*_waf_pod(built))
            stop.callback(waf.close)
        tls_backends = {}
        for key, (address, ports) in sorted(built.services.items()):
            namespace, name = key.split("/")
            if namespace != tenant.TENANT_NAMESPACE:
                continue
            port = ports[0][1]
            if port == tenant.BACKEND_PORT["TLS"]:
                cert, key_file = backend_certificate(workdir, f"{name}.backend.test")
                tls_backends[name] = stack.TlsBackend(name, address, port, cert, key_file)
                stop.callback(tls_backends[name].stop)
            else:
                stop.callback(stack.HttpBackend(name, address, port).stop)
        envoy = stack.Envoy(built.bootstrap)
        stop.callback(envoy.stop)
        yield Deployed(built, envoy, waf, tls_backends)
