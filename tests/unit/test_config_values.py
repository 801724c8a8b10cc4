"""Invariant: a value that can never work on the cluster is rejected at validation, by config path, with its
fix - every value that lands in a manifest or a helm flag: chart references and versions, image
registry/repository/tag/digest (the OCI reference grammar), Kubernetes names, label and annotation keys,
hostnames, durations, ports, CIDRs and WAF rule tags. And the block name, which is in every object.

Each rejected case names the path (and the start of the fix) its error must carry; the accepted cases
guard against over-eager rules. Mutation checks (done once, each turned the named cases red):
- accepting every value in formats.chart_ref: chart-url-*, crds-chart-url;
- dropping the `pattern` of a $def in config.schema.json (or making it `^.*$`): that def's cases, e.g. image_tag:
  image-tag-space, image-tag-colon; image_registry: image-registry-*, chart-url-oci-host; the same for
  image_repository, image_digest, chart_version, optional_dns_subdomain, label_value, qualified_name, hostname,
  rule_tag, optional_ipv4; dropping gatewayclass_name's maxLength: gatewayclass-name-label-length;
- `strict=False` as the first try in formats.cidr: cidr-host-bits;
- dropping the propertyNames of $defs/annotation_map: annotation-key;
- removing the RESERVED check in config._container_port_problems: listener-port-reserved;
- comparing listener ports instead of container ports there: listener-port-shift-collision;
- skipping the block-name check in config.load: test_block_name_must_name_kubernetes_objects;
- not skipping a pattern error already explained by a format: test_one_problem_per_value.
"""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import Any

import pytest

from envoy_block import config
from tests.support.helpers import block, load, problems

HTTP = {"name": "http", "protocol": "HTTP", "port": 80}


def gw(*listeners: dict[str, Any]) -> dict[str, Any]:
    return {"default_gateway": {"enabled": True, "listeners": list(listeners)}}


def chart(url: str) -> dict[str, Any]:
    return {"chart": {"repo": {"url": url}}}


def image(which: str, **spec: str) -> dict[str, Any]:
    return {"waf": {"image": spec}} if which == "waf" else {"image": {which: spec}}


def selector(match_labels: dict[str, str]) -> dict[str, Any]:
    namespaces = {"allowed_routes_namespaces": "Selector", "allowed_routes_selector": {"match_labels": match_labels}}
    return gw({**HTTP, **namespaces})


def egress(cidr: str) -> dict[str, Any]:
    return {"network_policy": {"extra_egress_to": [{"cidr": cidr}]}}


REJECTED: list[tuple[str, dict[str, Any], str]] = [
    ("chart-url-not-a-url", chart("not a url"), "config.chart.repo.url: 'not a url' is not valid; no chart directory"),
    (
        "chart-url-http",
        chart("http://charts.example.com/gateway-helm-v1.9.0.tgz"),
        "config.chart.repo.url: 'http://charts.example.com/gateway-helm-v1.9.0.tgz' is not valid; only oci:// and",
    ),
    (
        "chart-url-oci-tag",
        chart("oci://docker.io/envoyproxy/gateway-helm:v1.9.0"),
        "config.chart.repo.url: 'oci://docker.io/envoyproxy/gateway-helm:v1.9.0' is not valid; an oci:// chart "
        "reference takes no tag",
    ),
    (
        "chart-url-oci-repository",
        chart("oci://docker.io/EnvoyProxy/gateway-helm"),
        "config.chart.repo.url: 'oci://docker.io/EnvoyProxy/gateway-helm' is not valid; 'EnvoyProxy/gateway-helm' "
        "is not an OCI repository",
    ),
    (
        "chart-url-oci-host",
        chart("oci://docker io/envoyproxy/gateway-helm"),
        "config.chart.repo.url: 'oci://docker io/envoyproxy/gateway-helm' is not valid; 'docker io' is not a registry",
    ),
    (
        "chart-url-https-not-a-chart",
        chart("https://charts.example.com/envoy"),
        "config.chart.repo.url: 'https://charts.example.com/envoy' is not valid; an https:// chart must be the URL",
    ),
    (
        "crds-chart-url",
        {"crds": {"chart_url": "gateway-crds-helm"}},
        "config.crds.chart_url: 'gateway-crds-helm' is not valid; no chart directory",
    ),
    (
        "chart-version",
        {"chart": {"version": "latest"}},
        "config.chart.version: 'latest' is not valid; use a SemVer chart version",
    ),
    (
        "image-tag-space",
        image("controller", tag="v1.9.0 latest"),
        "config.image.controller.tag: 'v1.9.0 latest' is not valid; use an image tag",
    ),
    (
        "image-tag-colon",
        image("waf", tag="envoy-waf:0.1.0"),
        "config.waf.image.tag: 'envoy-waf:0.1.0' is not valid; use an image tag",
    ),
    (
        "image-registry-with-path",
        image("proxy", registry="registry.example.com/mirror"),
        "config.image.proxy.registry: 'registry.example.com/mirror' is not valid; use a registry host",
    ),
    (
        "image-registry-bare-name",
        image("proxy", registry="myregistry"),
        "config.image.proxy.registry: 'myregistry' is not valid; use a registry host",
    ),
    (
        "image-repository-uppercase",
        image("waf", repository="Platform/WAF"),
        "config.waf.image.repository: 'Platform/WAF' is not valid; use a lowercase repository path",
    ),
    (
        "image-repository-with-tag",
        image("controller", repository="envoyproxy/gateway:v1.9.0"),
        "config.image.controller.repository: 'envoyproxy/gateway:v1.9.0' is not valid; use a lowercase repository",
    ),
    (
        "image-digest",
        image("proxy", digest="sha256:abc"),
        "config.image.proxy.digest: 'sha256:abc' is not valid; use empty, or a digest",
    ),
    (
        "image-digest-sha512",
        image("proxy", digest="sha512:" + "0" * 128),
        "config.image.proxy.digest: 'sha512:",
    ),
    (
        "image-registry-ipv6",
        image("proxy", registry="[fd00::1]:5000"),
        "config.image.proxy.registry: '[fd00::1]:5000' is not valid; use a registry host",
    ),
    (
        "gatewayclass-name-label-length",
        {"gatewayclass": {"shared": {"name": "a" * 64}}},
        "config.gatewayclass.shared.name",
    ),
    (
        "client-target-gateway-name",
        {"client_traffic": {"enabled": True, "target_gateway_name": "My Gateway"}},
        "config.client_traffic.target_gateway_name: 'My Gateway' is not valid; use empty, or the object's name",
    ),
    (
        "backend-target-gateway-name",
        {"backend_traffic": {"enabled": True, "target_gateway_name": "edge_gw"}},
        "config.backend_traffic.target_gateway_name: 'edge_gw' is not valid",
    ),
    (
        "cluster-issuer-name",
        {"tls": {"cluster_issuer_name": "Lets Encrypt"}},
        "config.tls.cluster_issuer_name: 'Lets Encrypt' is not valid",
    ),
    (
        "annotation-key",
        {"service": {"annotations": {"uses proxyprotocol": "true"}}},
        "config.service.annotations: key 'uses proxyprotocol' is not valid; use a qualified name",
    ),
    (
        "match-labels-key",
        selector({"a/b/c": "x"}),
        "config.default_gateway.listeners[0].allowed_routes_selector.match_labels: key 'a/b/c' is not valid",
    ),
    (
        "match-labels-value",
        selector({"t": "a b"}),
        "config.default_gateway.listeners[0].allowed_routes_selector.match_labels.t: 'a b' is not valid; use a label",
    ),
    (
        "listener-hostname",
        gw({**HTTP, "hostname": "App.Example.com"}),
        "config.default_gateway.listeners[0].hostname: 'App.Example.com' is not valid; use a lowercase DNS name",
    ),
    (
        "waf-message-timeout",
        {"waf": {"message_timeout": "250"}},
        "config.waf.message_timeout: '250' is not valid; use a duration",
    ),
    (
        "scrape-interval",
        {"metrics": {"vmpodscrape": {"interval": "30 s"}}},
        "config.metrics.vmpodscrape.interval: '30 s' is not valid; use a duration",
    ),
    (
        "client-timeout",
        {"client_traffic": {"timeouts": {"idle": "1 hour"}}},
        "config.client_traffic.timeouts.idle: '1 hour' is not valid; use a duration",
    ),
    (
        "listener-port-reserved",
        gw({**HTTP, "port": 19001}),
        "config.default_gateway.listeners[0].port: port 19001 is taken inside the proxy pod by metrics",
    ),
    (
        "listener-port-shift-collision",
        gw(HTTP, {**HTTP, "name": "alt", "port": 10080}),
        "config.default_gateway.listeners[1].port: port 10080 listens on container port 10080, like "
        "listeners[0].port 80",
    ),
    (
        "ingress-port-range",
        {"network_policy": {"extra_ingress_from": [{"cidr": "10.0.0.0/8", "ports": [0]}]}},
        "config.network_policy.extra_ingress_from[0].ports[0]",
    ),
    ("proxy-ingress-port-range", {"network_policy": {"proxy_ingress_ports": [65536]}}, "config.network_policy"),
    (
        "cidr-host-bits",
        egress("10.0.0.1/8"),
        "config.network_policy.extra_egress_to[0].cidr: '10.0.0.1/8' is not valid; use 10.0.0.0/8",
    ),
    (
        "cidr-octet",
        egress("300.0.0.0/8"),
        "config.network_policy.extra_egress_to[0].cidr: '300.0.0.0/8' is not valid; use an IPv4 or IPv6 CIDR",
    ),
    (
        "cidr-prefix",
        {"network_policy": {"provider": "kubernetes", "api_server_cidrs": ["10.0.0.0/33"]}},
        "config.network_policy.api_server_cidrs[0]: '10.0.0.0/33' is not valid",
    ),
    (
        "cidr-no-prefix",
        egress("10.1.2.3"),
        "config.network_policy.extra_egress_to[0].cidr: '10.1.2.3' is not valid; add the prefix length",
    ),
    (
        "waf-rule-tag",
        {"waf": {"exclude_rule_tags": ['attack-sqli"']}},
        "config.waf.exclude_rule_tags[0]: 'attack-sqli\"' is not valid; use a rule tag",
    ),
    (
        "waf-method-lowercase",
        {"waf": {"allowed_methods": ["GET", "put"]}},
        "config.waf.allowed_methods[1]: 'put' is not valid; use an upper-case HTTP method",
    ),
    (
        "waf-methods-in-one-string",
        {"waf": {"allowed_methods": ["GET PUT"]}},
        "config.waf.allowed_methods[0]: 'GET PUT' is not valid; use an upper-case HTTP method",
    ),
    ("waf-methods-empty", {"waf": {"allowed_methods": []}}, "config.waf.allowed_methods"),
    ("waf-methods-twice", {"waf": {"allowed_methods": ["GET", "GET"]}}, "config.waf.allowed_methods"),
    (
        "waf-content-type-with-charset",
        {"waf": {"allowed_request_content_types": ["application/json; charset=utf-8"]}},
        "config.waf.allowed_request_content_types[0]: 'application/json; charset=utf-8' is not valid; "
        "use a lower-case media type without parameters",
    ),
    (
        "waf-content-type-with-bar",
        {"waf": {"allowed_request_content_types": ["|text/xml|"]}},
        "config.waf.allowed_request_content_types[0]",
    ),
    ("waf-utf8-string", {"waf": {"validate_utf8": "no"}}, "config.waf.validate_utf8: must be of type boolean"),
    ("waf-workers-zero", {"waf": {"workers": 0}}, "config.waf.workers: 0 is less than the minimum of 1"),
    ("waf-workers-too-many", {"waf": {"workers": 65}}, "config.waf.workers: 65 is greater than the maximum of 64"),
    ("waf-workers-string", {"waf": {"workers": "2"}}, "config.waf.workers: must be of type integer"),
    ("waf-workers-bool", {"waf": {"workers": True}}, "config.waf.workers: must be of type integer"),
    (
        "waf-cpu-request-above-derived-limit",
        {"waf": {"workers": 1, "resources": {"requests": {"cpu": "2"}}}},
        "config.waf.resources.requests.cpu: 2 is above the limit 1 (waf.resources.limits.cpu, derived from 1 "
        "worker(s))",
    ),
    (
        "waf-memory-request-above-limit",
        {"waf": {"resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "512Mi"}}}},
        "config.waf.resources.requests.memory: 1Gi is above the limit 512Mi (waf.resources.limits.memory):",
    ),
]


@pytest.mark.parametrize(("cfg", "expected"), [c[1:] for c in REJECTED], ids=[c[0] for c in REJECTED])
def test_value_that_cannot_work_is_rejected_with_its_path(cfg: dict[str, Any], expected: str) -> None:
    found = problems(cfg)
    assert any(p.startswith(expected) for p in found), found


def _local_chart(tmp_path: Path) -> Path:
    folder = tmp_path / "gateway-helm"
    folder.mkdir()
    (folder / "Chart.yaml").write_text("name: gateway-helm\nversion: v1.9.0\n", encoding="utf-8")
    return folder


ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("oci-with-port", chart("oci://registry.example.com:5000/charts/gateway-helm")),
    ("https-tgz", chart("https://charts.example.com/gateway-helm-v1.9.0.tgz")),
    ("semver-plain", {"chart": {"version": "1.9.0"}}),
    ("semver-prerelease", {"chart": {"version": "v0.0.0-latest"}}),
    ("registry-localhost", image("proxy", registry="localhost:5000")),
    ("registry-host-port", image("proxy", registry="registry:5000")),
    ("repository-separators", image("waf", repository="team_a/envoy__waf/x-y.z")),
    ("tag-underscore", image("proxy", tag="v1.39.0_rc.1")),
    ("digest-sha256", image("proxy", digest="sha256:" + "0" * 64)),
    ("class-name-63", {"gatewayclass": {"shared": {"name": "a" * 63}}}),
    ("annotation-prefixed", {"service": {"annotations": {"service.beta.kubernetes.io/x_y.z": ""}}}),
    ("hostname-wildcard", gw({**HTTP, "hostname": "*.example.com"})),
    ("cidr-ipv6", egress("fd00::/8")),
    ("cidr-single-host", egress("10.1.2.3/32")),
    ("cidr-anywhere", egress("0.0.0.0/0")),
    ("listener-port-1023", gw({**HTTP, "port": 1023})),
    ("udp-on-proxy-port", gw({"name": "dns", "protocol": "UDP", "port": 19001})),
    ("same-port-two-hostnames", gw({**HTTP, "hostname": "a.example.com"}, {**HTTP, "name": "b", "hostname": "b.io"})),
    ("rule-tag-path", {"waf": {"exclude_rule_tags": ["paranoia-level/2", "OWASP_CRS"]}}),
    ("waf-webdav-methods", {"waf": {"allowed_methods": ["GET", "PROPFIND", "M-SEARCH", "VERSION-CONTROL"]}}),
    ("waf-vendor-content-type", {"waf": {"allowed_request_content_types": ["application/vnd.api+json"]}}),
    ("waf-workers-one", {"waf": {"workers": 1}}),
    ("waf-workers-64", {"waf": {"workers": 64}}),
    ("waf-memory-limit-only", {"waf": {"workers": 8, "resources": {"limits": {"memory": "512Mi"}}}}),
]


@pytest.mark.parametrize("cfg", [c[1] for c in ACCEPTED], ids=[c[0] for c in ACCEPTED])
def test_valid_value_is_accepted(cfg: dict[str, Any]) -> None:
    load(cfg)


def test_local_charts_are_accepted_when_they_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chart directory (with Chart.yaml) or a .tgz, absolute or relative to where ansible-playbook runs."""
    folder = _local_chart(tmp_path)
    archive = tmp_path / "gateway-crds-helm-v1.9.0.tgz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname="gateway-crds-helm")
    load({"chart": {"repo": {"url": str(folder)}}, "crds": {"chart_url": str(archive)}})
    monkeypatch.chdir(tmp_path)
    load({"chart": {"repo": {"url": "gateway-helm"}}, "crds": {"chart_url": "./gateway-crds-helm-v1.9.0.tgz"}})
    (folder / "Chart.yaml").unlink()
    found = problems(chart("gateway-helm"))
    assert any(p.startswith("config.chart.repo.url: 'gateway-helm' is not valid") for p in found), found


@pytest.mark.parametrize("name", ["my_envoy", "Envoy", "ayedo/k8s/envoy", "1envoy", "envoy-", "e" * 60])
def test_block_name_must_name_kubernetes_objects(name: str) -> None:
    """Polycrate allows block names Kubernetes does not (slashes, '_', capitals); they are in every object."""
    with pytest.raises(config.ConfigError) as caught:
        config.load(block({}, name=name))
    assert str(caught.value.problems[0]).startswith(f"block.name: {name!r} cannot name Kubernetes")


@pytest.mark.parametrize("name", ["envoy", "envoy-internal", "e" * 59])
def test_valid_block_names(name: str) -> None:
    assert config.load(block({}, name=name)).block_name == name


def test_one_problem_per_value() -> None:
    """A value failing both its pattern and its format is reported once, with the format's specific fix."""
    found = problems(egress("10.1.2.3"))
    assert len(found) == 1, found
    assert "add the prefix length" in found[0]


def test_all_value_problems_at_once() -> None:
    """The issue's two examples and a bad CIDR in one config: three problems, each by its path."""
    found = problems(
        {**chart("not a url"), **image("controller", tag="v1.9.0 latest"), **egress("10.0.0.1/8")},
    )
    assert [p.split(":")[0] for p in found] == [
        "config.chart.repo.url",
        "config.image.controller.tag",
        "config.network_policy.extra_egress_to[0].cidr",
    ]
