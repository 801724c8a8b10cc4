"""A local OCI registry on loopback (Debian's `docker-registry`, CNCF distribution 2.8) with TLS from the
harness CA and htpasswd auth, serving the real charts from ../shared/charts, so that chart.repo.url
`oci://...`, chart.version and chart.auth run for real. helm trusts the CA through SSL_CERT_FILE (Go's
crypto/x509 reads it), as it would trust a company CA."""

from __future__ import annotations

import os
import shutil
import subprocess
import warnings
from pathlib import Path

import yaml

from . import pki as pki_mod
from .controlplane import BIN, free_port
from .procs import Proc, wait_until

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import crypt  # bcrypt through libxcrypt: the registry's htpasswd accepts bcrypt only

USER = "chart-reader"
PASSWORD = "harness-only-Vq3"


class Registry:
    def __init__(self, workdir: Path, pki: pki_mod.Pki, address: str = "127.0.0.1") -> None:
        """`address`: where it listens; the harness CA's server certificate names 127.0.0.1 and
        pki.CONTAINER_ADDRESS."""
        self.workdir = workdir
        self.pki = pki
        self.address = address
        self.port = 0
        self.proc: Proc | None = None

    @property
    def host(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def ca_bundle(self) -> Path:
        """The machine's CAs plus the harness CA, for SSL_CERT_FILE."""
        return self.workdir / "ca-bundle.crt"

    def start(self) -> Registry:
        binary = shutil.which("docker-registry")
        if binary is None:
            raise FileNotFoundError("docker-registry is missing: `make setup` installs Debian's docker-registry")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        htpasswd = self.workdir / "htpasswd"
        # bcrypt's lowest cost (4): the registry checks the password on every request (each blob and manifest
        # of a pull), and at the default cost (12, 0.24 s of CPU a check) make test's registries spent about
        # 3 CPU-minutes on it (process accounting, 2026-12-07). Still bcrypt, still refused when wrong.
        salt = crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 4)
        htpasswd.write_text(f"{USER}:{crypt.crypt(PASSWORD, salt)}\n", encoding="utf-8")
        config = self.workdir / "registry.yml"
        config.write_text(
            yaml.safe_dump(
                {
                    "version": 0.1,
                    "log": {"level": "warn"},
                    "storage": {"filesystem": {"rootdirectory": str(self.workdir / "data")}},
                    "http": {
                        "addr": self.host,
                        "tls": {"certificate": str(self.pki.server_crt), "key": str(self.pki.server_key)},
                    },
                    "auth": {"htpasswd": {"realm": "harness", "path": str(htpasswd)}},
                }
            ),
            encoding="utf-8",
        )
        system = Path("/etc/ssl/certs/ca-certificates.crt")
        bundle = (system.read_text(encoding="utf-8") if system.exists() else "") + self.pki.ca_crt.read_text()
        self.ca_bundle.write_text(bundle, encoding="utf-8")
        self.proc = Proc("docker-registry", [binary, "serve", str(config)], self.workdir / "registry.log")
        wait_until(lambda: self._login() == 0, 30, "docker-registry")
        return self

    def env(self) -> dict[str, str]:
        return {"SSL_CERT_FILE": str(self.ca_bundle), "HELM_REGISTRY_CONFIG": str(self.workdir / "helm-registry.json")}

    def _helm(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "helm"), *args],
            input=stdin,
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **self.env()},
        )

    def _login(self) -> int:
        return self._helm("registry", "login", self.host, "-u", USER, "--password-stdin", stdin=PASSWORD).returncode

    def push(self, chart: Path, repository: str = "envoyproxy") -> str:
        """Push a packaged chart; returns the oci:// URL of its repository path."""
        done = self._helm("push", str(chart), f"oci://{self.host}/{repository}")
        if done.returncode != 0:
            raise RuntimeError(f"helm push {chart}: {done.stderr}")
        return f"oci://{self.host}/{repository}"

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None
