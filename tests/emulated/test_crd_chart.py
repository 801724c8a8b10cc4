"""The default CRD path - render gateway-crds-helm with the REAL helm binary (kubernetes.core.helm_template),
apply the result server-side - run end to end against the emulated API.

The registry is out of reach here, so the chart is a stand-in built at test time with the values
interface of gateway-crds-helm v1.9.0 (`crds.gatewayAPI.enabled/channel`, `crds.envoyGateway.enabled`) and
the real CRDs from ../shared/crds as files (never committed). It proves the block hands helm the values
that select the right CRDs, and that the rendered output is applied and Established before the plan.
Mutation check (done once): rendering with `crds.envoyGateway.enabled: false` in builder.py made the
install fail at the first EnvoyProxy.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.emulated.conftest import Emulator, base_config
from tests.support.gate import shared_dir

pytestmark = pytest.mark.playbook

TEMPLATE = """\
{{- if .Values.crds.gatewayAPI.enabled }}
{{ .Files.Get (printf "files/gatewayapi-%s.yaml" .Values.crds.gatewayAPI.channel) }}
{{- end }}
{{- if .Values.crds.envoyGateway.enabled }}
{{- range $path, $_ := .Files.Glob "files/eg/*.yaml" }}
---
{{ $.Files.Get $path }}
{{- end }}
{{- end }}
"""


def _chart(tmp_path: Path) -> Path:
    chart = tmp_path / "gateway-crds-helm"
    (chart / "templates").mkdir(parents=True)
    (chart / "files" / "eg").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: gateway-crds-helm\nversion: 1.9.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text(
        "crds:\n  gatewayAPI:\n    enabled: false\n    channel: experimental\n  envoyGateway:\n    enabled: false\n",
        encoding="utf-8",
    )
    crds = shared_dir() / "crds"
    for channel in ("standard", "experimental"):
        shutil.copy(crds / "gateway-api" / f"{channel}-install.yaml", chart / "files" / f"gatewayapi-{channel}.yaml")
    for path in (crds / "envoy-gateway").glob("*.yaml"):
        shutil.copy(path, chart / "files" / "eg" / path.name)
    (chart / "templates" / "crds.yaml").write_text(TEMPLATE, encoding="utf-8")
    return chart


def test_install_renders_crds_with_helm(emulator: Emulator, tmp_path: Path) -> None:
    assert shutil.which("helm"), "helm must be on PATH (make installs it into .tools/bin)"
    cfg = base_config(crds={"directory": "", "chart_url": str(_chart(tmp_path))})
    run = emulator.playbook("install", cfg)
    assert run.returncode == 0, run.output[-4000:]
    names = {o["metadata"]["name"] for o in emulator.objects("CustomResourceDefinition")}
    assert "envoyproxies.gateway.envoyproxy.io" in names
    assert "gateways.gateway.networking.k8s.io" in names
    assert "xbackendtrafficpolicies.gateway.networking.x-k8s.io" not in names, "standard channel, not experimental"
    assert emulator.objects("EnvoyProxy")
    again = emulator.playbook("install", cfg)
    assert again.returncode == 0
    assert again.recap["changed"] == 0, again.output[-4000:]


def test_gateway_api_crds_left_to_their_owner(emulator: Emulator, tmp_path: Path) -> None:
    """gateway_api_crds.install: false renders only Envoy Gateway's CRDs (someone else owns Gateway API)."""
    chart = _chart(tmp_path)
    cfg = base_config(crds={"directory": "", "chart_url": str(chart)}, gateway_api_crds={"install": False})
    run = emulator.playbook("install", cfg)
    assert run.returncode != 0, "without Gateway API CRDs the GatewayClass cannot be applied"
    names = {o["metadata"]["name"] for o in emulator.objects("CustomResourceDefinition")}
    assert "envoyproxies.gateway.envoyproxy.io" in names
    assert not any(n.endswith("gateway.networking.k8s.io") for n in names)
