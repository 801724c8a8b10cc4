"""Every example installs on the real API server and the real controller reports it healthy, and the
network policies exist before the helm release starts (default-deny clusters, issue #8 bug 2).

Third-party CRDs that an example needs (Cilium, Calico, VictoriaMetrics) are applied first from
../shared/crds, as their operators would; certificates an HTTPS listener references are created as a
tenant or cert-manager would. Nothing here enforces network policy: there is no CNI (see README).
Mutation check (done once): applying the network-phase objects after the controller again (the old
objects.yml order) turned test_network_policies_exist_before_the_helm_release red.
"""

from __future__ import annotations

import base64
import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from envoy_block import lifecycle
from tests.cluster.common import assert_healthy, writes
from tests.cluster.conftest import Kube
from tests.conftest import ROOT
from tests.support.gate import shared_dir
from tests.support.helpers import plan

pytestmark = pytest.mark.playbook
EXAMPLES = sorted(p.parent.name for p in (ROOT / "examples").glob("*/config.yml"))
THIRD_PARTY_CRDS = {
    "operator.victoriametrics.com": "victoriametrics",
    "cilium.io": "cilium",
    "projectcalico.org": "calico-v3",
}


def example(name: str) -> dict[str, Any]:
    return dict(yaml.safe_load((ROOT / "examples" / name / "config.yml").read_text(encoding="utf-8"))["config"])


def self_signed(hostname: str) -> dict[str, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .sign(key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return {
        "tls.crt": base64.b64encode(cert.public_bytes(pem)).decode(),
        "tls.key": base64.b64encode(
            key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
        ).decode(),
    }


def prepare(kube: Kube, cfg: dict[str, Any]) -> None:
    """What the cluster around the block provides: other components' CRDs and tenants' certificates."""
    p = plan(cfg).to_dict()
    for entry in lifecycle.third_party_kinds(p):
        group = entry["api_version"].rpartition("/")[0]
        folder = shared_dir() / "crds" / THIRD_PARTY_CRDS[group]
        for path in sorted(Path(folder).glob("*.yaml")):
            for crd in yaml.safe_load_all(path.read_text(encoding="utf-8")):
                if crd and crd["spec"]["group"] == group:
                    kube.apply(crd)
    for entry in p["objects"]:
        if entry["kind"] != "Gateway":
            continue
        kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": entry["namespace"]}})
        for listener in entry["definition"]["spec"]["listeners"]:
            for ref in (listener.get("tls") or {}).get("certificateRefs") or []:
                kube.apply(
                    {
                        "apiVersion": "v1",
                        "kind": "Secret",
                        "type": "kubernetes.io/tls",
                        "metadata": {"name": ref["name"], "namespace": entry["namespace"]},
                        "data": self_signed(listener.get("hostname") or "example.test"),
                    }
                )


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_installs_healthy(kube: Kube, name: str) -> None:
    cfg = kube.config(**example(name))
    prepare(kube, cfg)
    kube.playbook("install", cfg).ok()
    assert_healthy(kube, plan(cfg))


def test_network_policies_exist_before_the_helm_release(kube: Kube) -> None:
    cfg = kube.config(network_policy={"provider": "kubernetes", "api_server_cidrs": ["10.96.0.1/32"]})
    mark = len(kube.cluster.audit())
    kube.playbook("install", cfg).ok()
    w = writes(kube, mark)
    policies = [i for i, x in enumerate(w) if x[1] == "networkpolicies" and x[0] in ("create", "patch")]
    helm = [i for i, x in enumerate(w) if x.agent.startswith("Helm")]
    assert policies, "the config renders network policies"
    assert helm, "helm wrote nothing?"
    assert max(policies) < min(helm), (
        "the network policies the certgen hook and the controller need must exist before helm starts: "
        f"{[w[i] for i in policies]} vs first helm write {w[min(helm)]}"
    )
