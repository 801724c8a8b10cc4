"""One entry point for the verification gate: custom resources via the real CRDs, built-ins via
kubernetes-validate (strict: unknown fields fail). Used by the gate tests. kubernetes-validate (jsonschema 4)
is imported where it is used: Polycrate's image Python (`make unit-image`) cannot have it, yet imports the
tests that use the gate to read their not_in_image mark."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from .crdgate import CRDGate, GateError, Result, metadata_errors
from .shared import shared_dir

ROOT = Path(__file__).resolve().parents[2]
# Kubernetes versions Envoy Gateway v1.9 supports: v1.33 to v1.36. Validate against both ends.
KUBERNETES_VERSIONS = ("1.33.0", "1.36.0")
BUILTIN_GROUPS = {
    "",
    "apps",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "batch",
    "admissionregistration.k8s.io",
}
CLUSTER_SCOPED = {
    "Namespace",
    "ClusterRole",
    "ClusterRoleBinding",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
}


# The Envoy Gateway release the block installs by default, whose CRDs the gate judges against. The shared
# folder keeps v1.9.1's outside crds/ (crds/envoy-gateway holds v1.9.0's, the upgrade source's).
ENVOY_GATEWAY_CRDS = "crds-envoy-gateway-v1.9.1"


def envoy_gateway_crds() -> Path:
    """The folder of the default release's gateway.envoyproxy.io CRDs."""
    return shared_dir() / ENVOY_GATEWAY_CRDS


def crd_files(gateway_api_channel: str = "standard") -> list[Path]:
    crds = shared_dir() / "crds"
    files = [crds / "gateway-api" / f"{gateway_api_channel}-install.yaml", *sorted(envoy_gateway_crds().glob("*.yaml"))]
    for folder in ("victoriametrics", "cilium", "calico", "calico-v3"):
        files += sorted((crds / folder).glob("*.yaml"))
    return files


@cache
def crd_gate(gateway_api_channel: str = "standard") -> CRDGate:
    return CRDGate(crd_files(gateway_api_channel))


def validate(obj: Mapping[str, Any], gateway_api_channel: str = "standard") -> Result:
    """Validate one object; raises GateError when the gate cannot decide."""
    import kubernetes_validate

    group = str(obj["apiVersion"]).rpartition("/")[0]
    if group in BUILTIN_GROUPS:
        result = Result()
        namespaced = obj["kind"] not in CLUSTER_SCOPED
        result.errors += metadata_errors(obj, namespaced)
        for version in KUBERNETES_VERSIONS:
            try:
                kubernetes_validate.validate(dict(obj), version, strict=True)
            except kubernetes_validate.ValidationError as exc:
                result.errors.append(f"k8s {version}: {exc.message} at {'.'.join(map(str, exc.path))}")
            except kubernetes_validate.SchemaNotFoundError as exc:
                raise GateError(str(exc)) from exc
        return result
    return crd_gate(gateway_api_channel).validate(obj)
