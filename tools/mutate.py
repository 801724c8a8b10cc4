#!/usr/bin/env python3
"""Mutation runner: break each safety invariant docs/testing.md calls proven by mutation, on purpose, and
require the tests that guard it to go red.

Each mutation replaces one exact piece of source text (it must occur exactly once, so a refactor that
moves it fails here instead of silently mutating nothing) in a temporary copy of the working tree, runs
only the tests that guard it (`pytest -x`, one process: for a few test files starting pytest-xdist's
workers costs more than the tests) and counts as killed only when pytest reports a failing test (exit 1):
an import or collection error (exit 2-5) is an error of the runner, not a kill. Two copies run two
mutations at a time (2 cores). The same selections must pass on the unmutated copy first (`-n 2`), or a
kill would prove nothing.

    tools/mutate.py              every mutation but the real node's (make mutation; also run by make test)
    tools/mutate.py --node       only the real node's: each installs the block on the real node
                                 (as root) and judges enforced traffic, minutes each (make mutation-node)
    tools/mutate.py NAME ...     only these
    tools/mutate.py --list       names and what each breaks
"""

from __future__ import annotations

import argparse
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "collections/ansible_collections/polycrate_blocks/envoy/plugins/plugin_utils/envoy_block"
PLUGINS = "collections/ansible_collections/polycrate_blocks/envoy/plugins"
# Built and installed outputs the copy uses in place (gitignored, large): linked, never copied.
LINKED = (".venv", ".venv-waf", ".tools", ".oci", "waf/bin")


@dataclass(frozen=True)
class Mutation:
    name: str
    breaks: str  # the invariant it breaks, as docs/testing.md states it
    file: str
    old: str
    new: str
    tests: tuple[str, ...]  # the guarding test files (or node ids) only
    keyword: str = ""  # pytest -k within them
    node: bool = False  # it installs on the real node (minutes): only with --node or by name


MUTATIONS = (
    Mutation(
        "netpol-policy-types",
        "a selecting policy makes the proxies default-deny on egress (Kubernetes policyTypes)",
        f"{PKG}/components/network_policies.py",
        'spec["policyTypes"].append(direction.capitalize())',
        'spec["policyTypes"] += [] if direction == "egress" else [direction.capitalize()]',
        ("tests/netpol/test_reader.py",),
    ),
    Mutation(
        "netpol-calico-types",
        "a selecting policy makes the proxies default-deny on egress (Calico types)",
        f"{PKG}/components/network_policies.py",
        'spec["types"].append(direction.capitalize())',
        'spec["types"] += [] if direction == "egress" else [direction.capitalize()]',
        ("tests/netpol/test_reader.py",),
    ),
    Mutation(
        "proxy-egress-xds-ports",
        "proxy egress is DNS and xDS (18000) only: not 18001/18002",
        f"{PKG}/components/network_policies.py",
        'Flow("egress", controller, (("TCP", XDS_PORT),)),',
        'Flow("egress", controller, (("TCP", XDS_PORT), ("TCP", 18001))),',
        ("tests/netpol/test_proxy_egress.py",),
    ),
    Mutation(
        "proxy-egress-dns-ports",
        "proxy egress to kube-dns is port 53 only",
        f"{PKG}/components/network_policies.py",
        'return Flow("egress", peer, (("UDP", 53), ("TCP", 53)))',
        'return Flow("egress", peer, (("UDP", 53), ("TCP", None)))',
        ("tests/netpol/test_proxy_egress.py",),
    ),
    Mutation(
        "proxy-selection-label",
        "the policies select the block-owned label the EnvoyProxy stamps on the proxies",
        f"{PKG}/labels.py",
        "        PROXY_ROLE_LABEL: PROXY_ROLE,\n        LOG_SOURCE_LABEL",
        "        LOG_SOURCE_LABEL",
        ("tests/netpol/test_proxy_selection.py",),
    ),
    Mutation(
        "proxy-ingress-shifted-ports",
        "narrowed proxy ingress opens the container ports (listener ports below 1024 shifted by 10000)",
        f"{PKG}/components/network_policies.py",
        "return sorted({container_port(p) for p in listener_ports})",
        "return sorted(set(listener_ports))",
        ("tests/netpol/test_proxy_ingress.py",),
    ),
    Mutation(
        "proxy-ingress-everyone-as-cidr",
        "the proxies admit everyone: under Cilium 0.0.0.0/0 is only the world outside the cluster",
        f"{PKG}/components/network_policies.py",
        'return {f"{prefix}Entities": list(CILIUM_EVERYONE)}',
        'return {f"{prefix}CIDR": list(ANYWHERE)}',
        ("tests/netpol/test_ingress_from_everyone.py",),
    ),
    Mutation(
        "netpol-wildcard-entity",
        "no rule uses a wildcard entity (Cilium `all` for the API server)",
        f"{PKG}/components/network_policies.py",
        'return {f"{prefix}Entities": ["kube-apiserver"]}',
        'return {f"{prefix}Entities": ["all"]}',
        ("tests/netpol/test_no_wildcards.py",),
    ),
    Mutation(
        "netpol-empty-peer",
        "no rule has an empty peer list (a NetworkPolicy `to: []` / `from: []` means everyone)",
        f"{PKG}/components/network_policies.py",
        'else {peer_key: _k8s_peers(config, f.peer), "ports": _k8s_ports(f.ports)}',
        'else {peer_key: [], "ports": _k8s_ports(f.ports)}',
        ("tests/netpol/test_no_wildcards.py",),
    ),
    Mutation(
        "waf-fence",
        "only the block's proxies reach the WAF's gRPC port",
        f"{PKG}/components/network_policies.py",
        '"ingress", Peer("pods", proxies, None if gateway_namespace else ns), (("TCP", waf.GRPC_PORT),)',
        '"ingress", Peer("pods", (), None), (("TCP", waf.GRPC_PORT),)',
        ("tests/netpol/test_waf.py",),
    ),
    Mutation(
        "waf-fail-open",
        "the WAF fails closed unless waf.fail_open (failOpen in the rendered EnvoyExtensionPolicy)",
        f"{PKG}/components/waf.py",
        '"failOpen": waf["fail_open"],',
        '"failOpen": True,',
        ("tests/unit/test_waf_component.py",),
        "fail",
    ),
    Mutation(
        "waf-body-buffer",
        "the WAF's Gateway buffers the whole body the WAF inspects (translator gate, from waf.body.*)",
        f"{PKG}/body_buffer.py",
        'return int(body["max_size"] if body["limit_action"] == "partial" else body["limit"])',
        'return int(body["max_size"] if body["limit_action"] == "partial" else body["limit"]) // 2',
        ("tests/translator/test_gate.py::test_waf_body_limit_fits_envoys_buffer",),
    ),
    Mutation(
        "uninstall-tenant-by-name",
        "uninstall refuses while a tenant Gateway uses a class, told apart by namespace, name and labels",
        f"{PKG}/lifecycle/uninstall.py",
        'if (meta.get("namespace"), meta.get("name")) in ours and owns(gateway, ownership_labels):',
        'if meta.get("name") in {name for _, name in ours}:',
        ("tests/unit/test_lifecycle.py",),
    ),
    Mutation(
        "uninstall-unowned",
        "only objects with every ownership label are ever pruned or removed",
        f"{PKG}/lifecycle/ownership.py",
        "return obj is not None and ownership_labels.items() <= labels.items()",
        "return obj is not None",
        ("tests/unit/test_lifecycle.py",),
    ),
    Mutation(
        "uninstall-controller-down",
        "uninstall removes nothing while waits are on and the controller has no ready pod (it removes the proxies)",
        f"{PKG}/lifecycle/uninstall.py",
        "if wait and plan.controller.install and gateways and not _ready(observed.controller):",
        "if False:",
        ("tests/unit/test_uninstall.py",),
    ),
    Mutation(
        "uninstall-foreign-namespace",
        "uninstall removes the namespace only when it carries every ownership label (the block created it)",
        f"{PKG}/lifecycle/uninstall.py",
        "delete_namespace = owns(observed.namespace, labels)",
        "delete_namespace = observed.namespace is not None",
        ("tests/unit/test_uninstall.py",),
    ),
    Mutation(
        "uninstall-namespace-pods-first",
        "uninstall waits for the pods of a namespace it deletes (else the namespace outlives wait.timeout)",
        f"{PKG}/lifecycle/uninstall.py",
        "if delete_namespace and wait",
        "if False",
        ("tests/unit/test_uninstall.py",),
    ),
    Mutation(
        "pull-secrets-every-pod",
        "image.pull_secrets reach every pod the block causes (here the WAF's would pull without them)",
        f"{PKG}/components/waf.py",
        '**({"imagePullSecrets": secrets} if (secrets := images.pull_secrets(config)) else {}),',
        "",
        ("tests/unit/test_pull_secrets.py",),
        keyword="not gateway_helm",
    ),
    Mutation(
        "pull-secrets-named-once",
        "a pull secret named twice is refused by config path (the API server would refuse the pod's list)",
        f"{PKG}/components/controller.py",
        "        if name in seen:",
        "        if False:",
        ("tests/unit/test_config_invalid.py",),
        keyword="pull-secret-twice",
    ),
    Mutation(
        "waf-image-placeholder",
        "waf-image stops before building when waf.image is the unpublished placeholder (it would push nowhere of"
        " the user's)",
        f"{PKG}/waf_image.py",
        'if (image["registry"], image["repository"]) == waf.UNPUBLISHED_IMAGE:',
        "if False:",
        ("tests/unit/test_waf_image.py",),
        keyword="not playbook",
    ),
    Mutation(
        "install-namespace-terminating",
        "install waits for its namespace still being deleted to be gone, or stops before any change; it never"
        " writes into it (helm's release Secret is refused there, after the CRDs were written)",
        f"{PKG}/lifecycle/terminating.py",
        'return bool(namespace is not None and (namespace.get("metadata") or {}).get("deletionTimestamp"))',
        "return False",
        ("tests/unit/test_namespace_terminating.py",),
    ),
    Mutation(
        "install-previous-controller",
        "install waits until no pod of the previous controller is terminating (it would reconcile the plan under its"
        " old settings)",
        "collections/ansible_collections/polycrate_blocks/envoy/plugins/modules/k8s_list.py",
        'if not query.get("terminating_only"):',
        "if True:",
        ("tests/unit/test_previous_controller.py",),
    ),
    Mutation(
        "install-controller-rollout-wait",
        "install waits for the controller helm rolled to be ready (kubernetes.core's Deployment readiness) before"
        " it reads the lease and applies the plan",
        "collections/ansible_collections/polycrate_blocks/envoy/plugins/modules/k8s_list.py",
        "wait=bool(condition or ready) and not module.check_mode,",
        "wait=bool(condition) and not module.check_mode,",
        ("tests/unit/test_previous_controller.py",),
    ),
    Mutation(
        "install-crds-established-wait",
        "install fails, before the controller, when a CRD it applied is not Established within wait.timeout",
        "collections/ansible_collections/polycrate_blocks/envoy/plugins/modules/k8s_apply.py",
        "        if clock() > deadline:\n            return None",
        "        if clock() > deadline:\n            return obj",
        ("tests/unit/test_k8s_apply_wait.py",),
    ),
    Mutation(
        "install-chart-version-check",
        "install stops before the release when chart.version is not what the repository serves",
        f"{PKG}/components/controller.py",
        'if found.lstrip("v") == version.lstrip("v"):',
        "if True:",
        ("tests/unit/test_chart_problem.py",),
    ),
    Mutation(
        "advisories-fixed-boundary",
        "a release older than an advisory's first fixed version is warned about; the fixed one is not",
        f"{PKG}/advisories.py",
        "return found[:3] < other[:3] or (found[:3] == other[:3] and found[3])",
        "return found[:3] <= other[:3]",
        ("tests/unit/test_advisories.py",),
    ),
    Mutation(
        "advisories-status-running",
        "status reports the known issues of the images the controller's and proxies' pods run",
        f"{PKG}/lifecycle/status.py",
        "image = ran.get(container) or spec.get(container)",
        "image = spec.get(container)",
        ("tests/unit/test_advisories.py",),
    ),
    Mutation(
        "tenant-guard-envoyproxy-patch",
        "tenants' EnvoyProxy objects may not carry spec.provider.kubernetes.*.patch (tenant_guards.envoy_proxy)",
        f"{PKG}/components/tenant_guards.py",
        'PATCHED = ("envoyDeployment", "envoyDaemonSet", "envoyService", "envoyHpa", "envoyPDB")',
        'PATCHED = ("envoyDeployment", "envoyDaemonSet", "envoyService", "envoyHpa")',
        ("tests/unit/test_tenant_guards.py",),
    ),
    Mutation(
        "envoyproxy-patch-flag-off",
        "a controller release with the EnvoyProxyPatch runtime flag (v1.9.2 on) gets it off with the EnvoyProxy guard",
        f"{PKG}/components/controller.py",
        'if config.get("tenant_guards.envoy_proxy") and advisories.fixes(advisories.ENVOY_PROXY_PATCH, tag):',
        'if config.get("tenant_guards.envoy_proxy") and advisories.fixes(advisories.ENVOY_PROXY_PATCH, tag) is False:',
        ("tests/unit/test_controller.py",),
        keyword="envoy_proxy_patch_flag",
    ),
    Mutation(
        "listener-guard-merged",
        "on the merged shared class a tenant's catch-all HTTPS listener may not share the bootstrap TLS "
        "listener's port "
        "(tenant_guards.listeners: Envoy rejects the port's listener, envoyproxy/gateway#9341)",
        f"{PKG}/components/tenant_guards.py",
        '"h.port in variables.bootstrapTlsPorts)",',
        '"h.port in variables.bootstrapTlsPorts && false)",',
        ("tests/unit/test_listener_guard.py",),
    ),
    Mutation(
        "listener-render-empty-match",
        "render refuses the bootstrap Gateway's catch-all HTTPS listener beside a TLS listener on one port",
        f"{PKG}/components/gateway.py",
        "if advisories.fixes(advisories.EMPTY_MATCH_ON_A_SHARED_PORT, tag) is not True:",
        "if advisories.fixes(advisories.EMPTY_MATCH_ON_A_SHARED_PORT, tag) is None:",
        ("tests/unit/test_listener_guard.py",),
    ),
    Mutation(
        "tenant-guard-envoyproxy-waf-names",
        "tenants' EnvoyProxy objects may not reuse the WAF's names (tenant_guards.envoy_proxy)",
        f"{PKG}/components/tenant_guards.py",
        'names = {**reserved, "names": (*reserved["names"], *waf.reserved_names(config))}',
        "names = reserved",
        ("tests/unit/test_tenant_guards.py",),
    ),
    Mutation(
        "tenant-guard-envoyproxy-namespace",
        "EnvoyProxy objects are admitted only in the block's namespace (tenant_guards.envoy_proxy)",
        f"{PKG}/components/tenant_guards.py",
        'f"object.metadata.namespace == {admission.cel_string(namespace)}"',
        "f\"object.metadata.namespace != 'kube-system'\"",
        ("tests/unit/test_tenant_guards.py",),
    ),
    Mutation(
        "tenant-guard-backend-metadata",
        "tenants' Backends may not aim at link-local addresses, cloud metadata's 169.254.169.254 among them",
        f"{PKG}/components/tenant_guards.py",
        'FORBIDDEN_IPV4 = "^(127|0)[.]|^169[.]254[.]|^100[.]100[.]100[.]200$"',
        'FORBIDDEN_IPV4 = "^(127|0)[.]|^100[.]100[.]100[.]200$"',
        ("tests/unit/test_tenant_guards.py",),
    ),
    Mutation(
        "tenant-guard-backend-proxy-ports",
        "tenants' Backends may not aim at the proxies' own ports (admin 19000, stats 19001)",
        f"{PKG}/components/tenant_guards.py",
        '"!(has(e.ip) && e.ip.port in variables.proxyPorts) && "',
        '"!(has(e.ip) && e.ip.port in variables.proxyPorts && false) && "',
        ("tests/unit/test_tenant_guards.py",),
    ),
    Mutation(
        "crd-owners-older-refused",
        "Gateway API CRDs another owner installed older than the required release are refused, not left alone",
        f"{PKG}/lifecycle/crd_owners.py",
        "None not in parsed and oldest >= wanted",
        "None not in parsed and oldest >= (0, 0, 0)",
        ("tests/unit/test_crd_owners.py",),
    ),
    Mutation(
        "crd-owners-refusal-stops-install",
        "install stops, changing nothing, when another owner's Gateway API CRDs are older than the release needs",
        f"{PKG}/lifecycle/install.py",
        """    if owners.outcome == "refuse":
        problems.append(owners.message)""",
        """    if False:
        problems.append(owners.message)""",
        ("tests/unit/test_crd_owners.py",),
    ),
    Mutation(
        "crd-owners-left-alone-not-applied",
        "another owner's Gateway API CRDs that install leaves alone are neither read, stamped nor applied",
        f"{PKG}/lifecycle/crd_owners.py",
        "return plan.crds.to_dict() if decided.applies else crds.without_gateway_api(plan.crds.to_dict())",
        "return plan.crds.to_dict()",
        ("tests/unit/test_crd_owners.py",),
    ),
    Mutation(
        "crd-owners-ssa-manager",
        "a server-side apply manager other than the block's owns the Gateway API CRDs it applied",
        f"{PKG}/lifecycle/crd_owners.py",
        'if entry.get("operation") == "Apply" and manager and manager not in ours and manager not in NOT_OWNERS:',
        'if entry.get("operation") == "Apply" and manager and manager not in ours and manager in NOT_OWNERS:',
        ("tests/unit/test_crd_owners.py",),
    ),
    Mutation(
        "crd-owners-uninstall-keeps-others",
        "uninstall.remove_crds never deletes Gateway API CRDs another owner marked, taken over or not",
        f"{PKG}/lifecycle/crd_owners.py",
        'if not gateway_api.install or decided.outcome == "apply":',
        "if True:",
        ("tests/unit/test_crd_owners.py",),
    ),
    Mutation(
        "crd-owners-take-ownership-only",
        "only gateway_api_crds.take_ownership applies the block's Gateway API CRDs over another owner's",
        f"{PKG}/lifecycle/crd_owners.py",
        "    if take_ownership:\n",
        "    if True:\n",
        ("tests/unit/test_crd_owners.py",),
    ),
    Mutation(
        "reinstall-digest-only",
        "a no-change re-install sends only objects not as last applied (a value changed by hand is re-sent)",
        f"{PKG}/lifecycle/install.py",
        'return digest == want["metadata"]["annotations"][DIGEST_ANNOTATION] and _holds(want, live)',
        'return digest == want["metadata"]["annotations"][DIGEST_ANNOTATION]',
        ("tests/unit/test_lifecycle.py",),
    ),
    Mutation(
        "reinstall-deleting-unchanged",
        "an object being deleted counts as changed on re-install",
        f"{PKG}/lifecycle/install.py",
        'if live is None or (live.get("metadata") or {}).get("deletionTimestamp"):',
        "if live is None:",
        ("tests/unit/test_lifecycle.py",),
    ),
    Mutation(
        "install-netpol-before-helm",
        "when helm runs, the network policies its pods need are applied before it (default-deny clusters)",
        f"{PKG}/lifecycle/install.py",
        'early = [s for s in to_send if s.phase.stage == "before-controller"]',
        "early = []",
        ("tests/unit/test_install_todo.py",),
    ),
    Mutation(
        "install-dry-run-waits-nothing",
        "a dry run (plan) waits for no controller and frees no lease",
        f"{PKG}/lifecycle/install.py",
        "wait_controller = helm_needed and plan.wait.enabled and not check_mode",
        "wait_controller = helm_needed and plan.wait.enabled",
        ("tests/unit/test_install_todo.py",),
    ),
    Mutation(
        "validation-keeps-previous-render",
        "a bad config writes nothing and removes the previous render",
        f"{PLUGINS}/action/render.py",
        "removed = artifacts.remove(folder, render.OWNED, check)",
        "removed: list[str] = []",
        ("tests/unit/test_config_invalid.py",),
        "each_invalid",
    ),
    Mutation(
        "validation-problems-twice",
        "each problem is reported once (Ansible prints `msg` twice)",
        f"{PLUGINS}/plugin_utils/envoy_action.py",
        '"msg": f"{error.summary}, each with its fix under `problems`; {consequence}",',
        '"msg": f"{error.summary}: {\'; \'.join(map(str, error.problems))}; {consequence}",',
        ("tests/unit/test_config_invalid.py",),
        "each_invalid",
    ),
    Mutation(
        "hostile-int32-rule",
        "every integer key without its own bound is an int32 (config.bounded)",
        f"{PKG}/config.py",
        'out.setdefault("maximum", INT32_MAX)',
        'out.setdefault("maximum", 2**63)',
        ("tests/unit/test_hostile_input.py",),
        "int32 or inherits",
    ),
    Mutation(
        "hostile-prune",
        "a shape error in one section hides no other section's problem",
        f"{PKG}/config.py",
        "            for parts in sorted(found, key=len, reverse=True):\n                _prune(raw, parts)",
        "            for parts in sorted(found, key=len, reverse=True):\n                pass",
        ("tests/unit/test_hostile_input.py",),
        "hides_no_other",
    ),
    Mutation(
        "hostile-url-credentials",
        "credentials in any URL of the config are refused",
        f"{PKG}/config.py",
        "            what = inputs.url_credentials(node)",
        "            what = None",
        ("tests/unit/test_hostile_input.py",),
        "credentials",
    ),
    Mutation(
        "hostile-nested-credentials-shown",
        "a message never repeats a URL's credentials, also nested in a value of the wrong type",
        f"{PKG}/config.py",
        "        return any(_carries_credentials(k) or _carries_credentials(v) for k, v in value.items())",
        "        return False",
        ("tests/unit/test_fuzz_finds.py",),
        "fuzz_find",
    ),
    Mutation(
        "hostile-yaml-bounds",
        "hostile YAML (alias bombs, duplicate keys, foreign tags) is refused before any work",
        f"{PKG}/inputs.py",
        "        self._count(node, 0)\n",
        "        pass\n",
        ("tests/unit/test_hostile_input.py",),
        "hostile_yaml",
    ),
    Mutation(
        "hostile-extra-directives",
        "waf.extra_directives the WAF cannot load are refused at validation",
        f"{PKG}/components/waf.py",
        'found = seclang.problems(waf["extra_directives"])',
        "found: list[str] = []",
        ("tests/unit/test_hostile_input.py",),
        "extra_directives_the_waf_refuses",
    ),
    Mutation(
        "hostile-setvar-without-value",
        "a setvar without a value (Coraza v3.8.1 fails every request reaching it) is refused at validation",
        f"{PKG}/seclang.py",
        'if "=" not in argument:',
        'if "=" not in argument and not argument:',
        ("tests/unit/test_hostile_input.py",),
        "setvar",
    ),
    Mutation(
        "hostile-waf-body-limit",
        "whatever the block accepts for the WAF, envoy-waf --check accepts (the schema-to-binary contract)",
        "config.schema.json",
        '"maximum": 1073741823,\n              "default": 131072,',
        '"maximum": 2147483647,\n              "default": 131072,',
        ("tests/unit/test_waf_contract.py",),
        "schema_bound",
    ),
    Mutation(
        "hostile-waf-multipart-bound",
        "waf.max_multipart_parts stays within the engine's argument limit (1000), which the WAF enforces at start",
        "config.schema.json",
        '"maximum": 1000,\n          "description": "A multipart body',
        '"maximum": 100000,\n          "description": "A multipart body',
        ("tests/unit/test_waf_contract.py", "tests/unit/test_waf_component.py"),
        "max_multipart_parts or parts-above",
    ),
    Mutation(
        "waf-level-one-unchanged",
        "paranoia level 1 renders the CRS as released: the curated exclusions start at level 2 (issue 39)",
        f"{PKG}/waf_exclusions.py",
        "FIRST_LEVEL = 2",
        "FIRST_LEVEL = 1",
        ("tests/unit/test_waf_exclusions.py",),
    ),
    Mutation(
        "waf-exclusion-every-value",
        "an exclusion conditioned on an argument's value applies only when every value matches (q=plain&q=payload)",
        f"{PKG}/waf_exclusions.py",
        "    if len(conditions) == 1 and not item.every:\n",
        "    if len(conditions) == 1:\n",
        ("tests/unit/test_waf_exclusions.py",),
    ),
    Mutation(
        "waf-exclusion-guard-negated",
        "the guard of an argument-conditioned exclusion flags the values that do not match",
        f"{PKG}/waf_exclusions.py",
        """f'SecRule {variable} "!{operator}" "id:{rule_id}""",
        """f'SecRule {variable} "{operator}" "id:{rule_id}""",
        ("tests/unit/test_waf_exclusions.py",),
    ),
    Mutation(
        "waf-exclusion-attack-rule-whole-collection",
        "no curated exclusion takes an attack rule (REQUEST-930 to 944) off a whole collection: protocol rules only",
        f"{PKG}/waf_exclusions.py",
        '(920272,),\n        ("ARGS", "REQUEST_BODY", "REQUEST_URI_RAW"),',
        '(920272, 942100),\n        ("ARGS", "REQUEST_BODY", "REQUEST_URI_RAW"),',
        ("tests/unit/test_waf_exclusions.py",),
        "whole_collection",
    ),
    Mutation(
        "waf-exclusion-prose-json-only",
        "the prose class takes the injection families off JSON body fields only, never off a query string's "
        "`message` or `title`",
        f"{PKG}/waf_exclusions.py",
        'rf"ARGS:/(?i)^(?:json\\.(?:.*\\.)?(?:[a-z0-9]+_)?(?:{_PROSE_NAMES})',
        'rf"ARGS:/(?i)^(?:(?:json\\.(?:.*\\.)?)?(?:[a-z0-9]+_)?(?:{_PROSE_NAMES})',
        ("tests/unit/test_waf_exclusions.py",),
        "prose_is_json",
    ),
    Mutation(
        "waf-exclusion-code-json-only",
        "the code class (commands, expressions, patterns) takes the injection families off JSON body fields only, "
        "never off a form's or query string's `command`",
        f"{PKG}/waf_exclusions.py",
        'CODE = (r"ARGS:/(?i)^json\\.(?:.*\\.)?(?:commands?',
        'CODE = (r"ARGS:/(?i)^(?:json\\.)?(?:.*\\.)?(?:commands?',
        ("tests/unit/test_waf_exclusions.py",),
        "name_classes",
    ),
    Mutation(
        "waf-exclusion-terraform-guard",
        "the Terraform exclusion applies only when every `${` in the JSON values is a dotted reference: `${HOME}`, "
        "`$(id)` and `<(cmd)` keep 932130 and 933135 on",
        f"{PKG}/waf_exclusions.py",
        '_TF_AFTER = r"[A-Za-z0-9_./:-]"',
        '_TF_AFTER = r"[A-Za-z0-9_./:({-]"',
        ("tests/unit/test_waf_exclusions.py",),
        "terraform",
    ),
    Mutation(
        "waf-exclusion-json-body-only",
        "an exclusion naming JSON paths (json.*) holds only when the body was parsed as JSON: a form's field named "
        "json.body keeps every rule",
        f"{PKG}/waf_exclusions.py",
        'JSON_BODY = ("REQBODY_PROCESSOR", "@streq JSON")',
        'JSON_BODY = ("REQBODY_PROCESSOR", "!@streq XML")',
        ("tests/unit/test_waf_exclusions.py",),
        "json_path",
    ),
    Mutation(
        "waf-exclusion-json-named-query",
        "an exclusion naming JSON paths holds only when no query string argument is named json.*, in any case "
        "(?JSON.Body= too)",
        f"{PKG}/waf_exclusions.py",
        'JSON_NAMED_QUERY = ("ARGS_GET_NAMES", "@rx (?i)^json\\\\.")',
        'JSON_NAMED_QUERY = ("ARGS_GET_NAMES", "@rx ^json\\\\.")',
        ("tests/unit/test_waf_exclusions.py",),
        "json_path",
    ),
    Mutation(
        "waf-exclusion-json-targets-apart",
        "every target that names json.* arguments is told apart (JSON_TARGET) and rendered behind the JSON body "
        "gate, never configure-time",
        f"{PKG}/waf_exclusions.py",
        'JSON_TARGET = re.compile(r"(?:ARGS|ARGS_NAMES):(?:json\\.|/(?:\\(\\?i\\))?',
        'JSON_TARGET = re.compile(r"(?:ARGS|ARGS_NAMES):(?:json\\.|/(?:\\(\\?x\\))?',
        ("tests/unit/test_waf_exclusions.py",),
        "json_path",
    ),
    Mutation(
        "waf-exclusion-injection-families",
        "the injection families the classes take off are the CRS's own rules of REQUEST-932/933/941/942 that read "
        "arguments, no more",
        f"{PKG}/waf_exclusions.py",
        "INJECTION_RULES_PL3 = (\n",
        "INJECTION_RULES_PL3 = (\n    930120,\n",
        ("tests/unit/test_waf_exclusions.py",),
        "injection_rules",
    ),
    Mutation(
        "waf-json-suffix-parsed",
        "every application/<name>+json body is parsed as JSON (rule 200006): a +json type is never read as raw text",
        "waf/internal/settings/settings.go",
        'pass,nolog,ctl:requestBodyProcessor=JSON"`, JSONSuffixContentType)',
        'pass,nolog"`, JSONSuffixContentType)',
        ("tests/unit/test_waf_json_types.py",),
    ),
    Mutation(
        "waf-json-suffix-default",
        "by default the +json media types pass CRS 920420 as application/json does (the service's default list)",
        "waf/internal/settings/settings.go",
        "var DefaultContentTypes = append(append([]string(nil), CRSContentTypes...), JSONSuffixTypes)",
        "var DefaultContentTypes = append([]string(nil), CRSContentTypes...)",
        ("tests/unit/test_waf_json_types.py",),
    ),
    Mutation(
        "waf-content-types-default-in-block",
        "the allowed request media types' default is the WAF service's alone: unset, the block renders no list",
        "config.schema.json",
        '"uniqueItems": true,\n          "description": "Request media types that pass',
        '"uniqueItems": true,\n          "default": ["application/json"],\n'
        '          "description": "Request media types that pass',
        ("tests/unit/test_waf_component.py",),
        "crs_settings_reach",
    ),
    Mutation(
        "hostile-waf-rollout-gate",
        "install applies the WAF's EnvoyExtensionPolicy only after its Deployment rolled out",
        f"{PKG}/components/waf.py",
        "Step(Phase.WAF, deployment(config), rollout=policy),",
        "Step(Phase.WAF, deployment(config)),",
        ("tests/unit/test_waf_rollout_gate.py",),
    ),
    Mutation(
        "hostile-atomic-render",
        "a render that fails at any step leaves no half-render and no previous render",
        f"{PKG}/artifacts.py",
        "        with contextlib.suppress(OSError):  # the original error says why; the caller removes what is left\n"
        "            remove(dest, owned)",
        "        with contextlib.suppress(OSError):  # the original error says why; the caller removes what is left\n"
        "            pass",
        ("tests/unit/test_artifacts.py",),
        "half_render",
    ),
    Mutation(
        "proxy-budget-blocks-drains",
        "a disruption budget that blocks every node drain (max_unavailable 0) is refused",
        f"{PKG}/components/proxies.py",
        'if data_plane["disruption_budget"]["max_unavailable"] == 0 and fleet_size(data_plane) >= 2:',
        'if data_plane["disruption_budget"]["max_unavailable"] < 0 and fleet_size(data_plane) >= 2:',
        ("tests/unit/test_config_invalid.py",),
        "budget",
    ),
    Mutation(
        "proxy-rollout-below-size",
        "a proxy rollout never takes a fleet below its size (maxUnavailable 0)",
        f"{PKG}/components/proxies.py",
        '"rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}',
        '"rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 1}',
        ("tests/unit/test_proxies.py",),
        "rollout",
    ),
    Mutation(
        "proxy-rollout-whole-fleet",
        "a proxy rollout replaces the whole fleet at once (no old proxy outlives a controller upgrade: #9918)",
        f"{PKG}/components/proxies.py",
        '"rollingUpdate": {"maxSurge": "100%", "maxUnavailable": 0}',
        '"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}',
        ("tests/unit/test_proxies.py",),
        "rollout",
    ),
    Mutation(
        "lease-freed-only-when-holder-gone",
        "install deletes the controller's leader Lease only when the pod holding it is gone",
        f"{PKG}/lifecycle/waits.py",
        'if pod_name in {str((p.get("metadata") or {}).get("name")) for p in pods}:',
        "if False:",
        ("tests/unit/test_previous_controller.py",),
        "lease",
    ),
    Mutation(
        "proxy-hpa-replicas-fight",
        "with autoscaling the EnvoyProxy carries no replicas (the controller would fight the autoscaler)",
        f"{PKG}/components/proxies.py",
        'if kind == "Deployment" and not config.get("data_plane.autoscaling.enabled"):',
        'if kind == "Deployment":',
        ("tests/unit/test_proxies.py",),
        "hpa",
    ),
    Mutation(
        "placement-toleration-rules",
        "a toleration the API server refuses (Exists with a value) is refused by config path, proxies and controller",
        f"{PKG}/placement.py",
        'if exists and item.get("value"):',
        "if False:",
        ("tests/unit/test_config_invalid.py",),
        "toleration",
    ),
    Mutation(
        "controller-budget-two-replicas",
        "2 or more controller replicas get a disruption budget and leader election",
        f"{PKG}/components/controller.py",
        'return int(config.get("controller.replicas")) >= 2',
        'return int(config.get("controller.replicas")) >= 3',
        ("tests/unit/test_controller.py",),
        "controller_settings",
    ),
    Mutation(
        "runbook-url-relative",
        "an alert's runbook_url is an absolute http(s) URL (a relative path opens nowhere)",
        f"{PKG}/formats.py",
        'if url.scheme not in ("http", "https") or not url.hostname:',
        "if False:",
        ("tests/unit/test_monitoring.py",),
        "runbook",
    ),
    Mutation(
        "snapshot-keeps-render",
        "a render refused before Ansible runs (CONFIG file unreadable, not YAML) removes the previous render",
        "tools/snapshot.py",
        "if gone := artifacts.remove(dest, render.OWNED):",
        "if gone := []:",
        ("tests/unit/test_snapshot_refusals.py",),
    ),
    Mutation(
        "file-name-temp-uncounted",
        "a manifest's file name fits the filesystem also under its temporary name during the atomic write",
        f"{PKG}/limits.py",
        "(written := artifacts.written_name_bytes(file_name))",
        "(written := len(file_name.encode()))",
        ("tests/unit/test_hostile_input.py",),
        "file_name",
    ),
    Mutation(
        "nul-in-string",
        "a NUL character in a config string is refused at its path (Kubernetes refuses the manifest)",
        f"{PKG}/inputs.py",
        'if "\\x00" in value:',
        "if False:",
        ("tests/unit/test_hostile_input.py",),
        "nul",
    ),
    Mutation(
        "ip-listener-hostname",
        "a listener hostname that is an IP address is refused (Gateway API hostnames cannot be IPs)",
        f"{PKG}/formats.py",
        '"gateway-hostname": gateway_hostname,',
        '"gateway-hostname": lambda value: None,',
        ("tests/unit/test_config_invalid.py",),
        "ip and listener and hostname",
    ),
    # Enforced on the real node (kube-router), one per policy the block renders for the data path; the test
    # itself removes every rule of the live policies in turn (test_removing_each_rule_turns_exactly_its_flows_red).
    Mutation(
        "enforced-proxy-waf-egress",
        "the proxies reach the WAF under default-deny (their egress rule, enforced)",
        f"{PKG}/components/network_policies.py",
        "            *_waf_egress(config),\n",
        "",
        ("tests/cluster/test_real_flows.py",),
        "enforced_both_ways",
        node=True,
    ),
    Mutation(
        "enforced-controller-metrics",
        "the monitoring namespace scrapes the controller under default-deny (its ingress rule, enforced)",
        f"{PKG}/components/network_policies.py",
        '            Flow("ingress", monitoring, (("TCP", CONTROLLER_METRICS_PORT),)),\n',
        "",
        ("tests/cluster/test_real_flows.py",),
        "enforced_both_ways",
        node=True,
    ),
    Mutation(
        "enforced-waf-fence",
        "only the block's proxies reach the WAF's gRPC port (enforced: another pod is refused)",
        f"{PKG}/components/network_policies.py",
        '"ingress", Peer("pods", proxies, None if gateway_namespace else ns), (("TCP", waf.GRPC_PORT),)',
        '"ingress", Peer("pods", (), None), (("TCP", waf.GRPC_PORT),)',
        ("tests/cluster/test_real_flows.py",),
        "enforced_both_ways",
        node=True,
    ),
)


def copy_tree(dest: Path) -> Path:
    """The working tree as it is (tracked and untracked files, not ignored ones) in dest/repo, with the
    built outputs linked and ../shared beside it, as the tests expect; returns dest/repo."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.split(b"\0")
    repo = dest / "repo"
    for raw in filter(None, listed):
        rel = raw.decode()
        src = ROOT / rel
        if not src.is_file() or any(rel == name or rel.startswith(name + "/") for name in LINKED):
            continue  # deleted in the work tree, or a link into the built outputs
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, repo / rel, follow_symlinks=False)
    for name in LINKED:
        if (ROOT / name).exists():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            (repo / name).symlink_to((ROOT / name).resolve())
    shared = Path(os.environ.get("ENVOY_SHARED_DIR", ROOT.parent / "shared")).resolve()
    (dest / "shared").symlink_to(shared)
    return repo


def pytest(repo: Path, tests: tuple[str, ...], *options: str) -> tuple[int, str]:
    """Run pytest in the copy: `options` (e.g. -n 2), else one process."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "ENVOY_SHARED_DIR": str(repo.parent / "shared")}
    command = [str(repo / ".venv/bin/python"), "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    command += [*(options or ("-p", "no:xdist")), *tests]
    done = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout + done.stderr


def apply(repo: Path, mutation: Mutation) -> str:
    """Apply `mutation` in the copy; returns the original text to restore."""
    path = repo / mutation.file
    text = path.read_text(encoding="utf-8")
    count = text.count(mutation.old)
    if count != 1:
        raise SystemExit(
            f"mutation {mutation.name}: the text to mutate occurs {count} times in {mutation.file} (must be once): "
            "the source moved; update tools/mutate.py"
        )
    path.write_text(text.replace(mutation.old, mutation.new), encoding="utf-8")
    return text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("names", nargs="*", help="run only these mutations")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--node", action="store_true", help="only the mutations judged on the real node")
    args = parser.parse_args()
    known = {m.name: m for m in MUTATIONS}
    if args.list:
        for m in MUTATIONS:
            where = " ".join(m.tests) + (f" -k {m.keyword}" if m.keyword else "")
            print(f"{m.name:34} {m.breaks}\n{'':34} guarded by: {where}{' (real node)' if m.node else ''}")
        return 0
    unknown = [n for n in args.names if n not in known]
    if unknown:
        parser.error(f"unknown mutation(s) {unknown}; see --list")
    chosen = [known[n] for n in args.names] if args.names else [m for m in MUTATIONS if m.node == args.node]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutate-") as tmp:
        repos = [copy_tree(Path(tmp) / slot) for slot in ("a", "b")]
        copies: queue.Queue[Path] = queue.Queue()
        for repo in repos:
            copies.put(repo)
        # The guarding tests pass unmutated (whole files: a superset of each -k), or a kill would prove nothing.
        baseline = tuple(dict.fromkeys(t for m in chosen if not m.node for t in m.tests))
        code, output = pytest(repos[0], baseline, "-n", "2") if baseline else (0, "")
        # The real node's: each selection once, unmutated (a whole cluster file would cost minutes more).
        for selection in dict.fromkeys((m.tests, m.keyword) for m in chosen if m.node):
            if code == 0:
                code, output = pytest(repos[0], selection[0], "-p", "no:xdist", "-k", selection[1])
        if code != 0:
            print(output[-4000:])
            print("mutation runner: the guarding tests fail without a mutation")
            return 1

        def run(m: Mutation) -> tuple[Mutation, int, str, float]:
            repo = copies.get()
            began = time.monotonic()
            try:
                original = apply(repo, m)
                try:
                    options = ["-p", "no:xdist", "-k", m.keyword] if m.keyword else []
                    code, output = pytest(repo, m.tests, *options)
                finally:
                    (repo / m.file).write_text(original, encoding="utf-8")
            finally:
                copies.put(repo)
            return m, code, output, time.monotonic() - began

        failed = []
        with ThreadPoolExecutor(2) as pool:
            for m, code, output, took in pool.map(run, chosen):
                if code == 1:
                    killer = re.search(r"^FAILED (\S+)", output, re.MULTILINE)
                    print(f"KILLED   {m.name} ({took:.1f}s): {m.breaks}; red: {killer.group(1) if killer else '?'}")
                elif code == 0:
                    failed.append(m.name)
                    print(f"SURVIVED {m.name} ({took:.1f}s): {m.breaks}; {' '.join(m.tests)} stayed green")
                else:
                    failed.append(m.name)
                    print(output[-3000:])
                    print(f"ERROR    {m.name}: pytest exit {code} (not a failing test: not counted as killed)")
    total = time.monotonic() - started
    if failed:
        print(f"mutation runner: {len(failed)} of {len(chosen)} not killed: {', '.join(failed)} ({total:.0f}s)")
        return 1
    print(f"mutation runner: all {len(chosen)} mutations killed ({total:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
