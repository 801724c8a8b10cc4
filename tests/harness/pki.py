"""Certificates for the local control plane: one CA, the apiserver's serving cert, an admin client cert
and the service-account signing key. Written once per cluster folder."""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


@dataclass(frozen=True)
class Pki:
    ca_crt: Path
    ca_key: Path
    server_crt: Path
    server_key: Path
    admin_crt: Path
    admin_key: Path
    sa_key: Path
    sa_pub: Path


def _write_key(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey, path: Path) -> None:
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    path.chmod(0o600)


def _name(cn: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


def _issue(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    ca: bool = False,
    server_names: tuple[str, ...] = (),
    client: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True
        )
    else:
        usages = [ExtendedKeyUsageOID.CLIENT_AUTH] if client else [ExtendedKeyUsageOID.SERVER_AUTH]
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    if server_names:
        sans: list[x509.GeneralName] = []
        for name in server_names:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(name)))
            except ValueError:
                sans.append(x509.DNSName(name))
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


# An address of the test's own private network namespace that is not loopback (TEST-NET-1, never routed):
# helm 3.17's OCI client speaks plain HTTP to any loopback registry, so Polycrate's image reaches the chart
# registry there (tests/polycrate/test_container_mode.py).
CONTAINER_ADDRESS = "192.0.2.10"


def create(folder: Path, service_ip: str, *addresses: str) -> Pki:
    """The CA and certificates; the API server's serving certificate also names `addresses` (the real
    node's address)."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("envoy-block-test-ca")
    ca = _issue(ca_name, ca_key, ca_name, ca_key, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = _issue(
        _name("kube-apiserver"),
        server_key,
        ca_name,
        ca_key,
        server_names=(
            "127.0.0.1",
            "localhost",
            CONTAINER_ADDRESS,
            *addresses,
            service_ip,
            "kubernetes",
            "kubernetes.default",
            "kubernetes.default.svc",
            "kubernetes.default.svc.cluster.local",
        ),
    )
    admin_key = ec.generate_private_key(ec.SECP256R1())
    admin = _issue(_name("envoy-block-admin", "system:masters"), admin_key, ca_name, ca_key, client=True)
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pki = Pki(
        ca_crt=folder / "ca.crt",
        ca_key=folder / "ca.key",
        server_crt=folder / "apiserver.crt",
        server_key=folder / "apiserver.key",
        admin_crt=folder / "admin.crt",
        admin_key=folder / "admin.key",
        sa_key=folder / "sa.key",
        sa_pub=folder / "sa.pub",
    )
    pem = serialization.Encoding.PEM
    pki.ca_crt.write_bytes(ca.public_bytes(pem))
    _write_key(ca_key, pki.ca_key)
    pki.server_crt.write_bytes(server.public_bytes(pem))
    _write_key(server_key, pki.server_key)
    pki.admin_crt.write_bytes(admin.public_bytes(pem))
    _write_key(admin_key, pki.admin_key)
    _write_key(sa_key, pki.sa_key)
    pki.sa_pub.write_bytes(sa_key.public_key().public_bytes(pem, serialization.PublicFormat.SubjectPublicKeyInfo))
    return pki


def self_signed(hostname: str, *more: str) -> tuple[bytes, bytes]:
    """A self-signed serving certificate and key (PEM) for `hostname` (and `more` names), as a tenant's TLS
    Secret or a TLS backend holds."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = _name(hostname)
    cert = _issue(name, key, name, key, server_names=(hostname, *more))
    pem = serialization.Encoding.PEM
    return cert.public_bytes(pem), key.private_bytes(
        pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
