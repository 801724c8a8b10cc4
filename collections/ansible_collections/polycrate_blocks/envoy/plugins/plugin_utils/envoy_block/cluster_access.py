"""How the block reaches the cluster: which kubeconfig it uses, and what it says when the API server does not answer.

Polycrate hands the kubeconfig it found to the block as `block.kubeconfig.path` and exports KUBECONFIG, empty
when it found none (v0.23.3), which hides the user's own. Plain ansible-playbook runs have only KUBECONFIG.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

HOME_KUBECONFIG = "~/.kube/config"


class NoKubeconfig(Exception):
    """No usable kubeconfig; the message names every place the block looked."""


@dataclass(frozen=True)
class Kubeconfig:
    # The file to pass to the modules and helm; "" lets them read KUBECONFIG (a list) or in-cluster config.
    path: str
    # Where it came from, for messages.
    source: str


def find_kubeconfig(
    block: Mapping[str, object],
    env: Mapping[str, str],
    exists: Callable[[str], bool],
    home: str,
) -> Kubeconfig:
    """The kubeconfig to use: block.kubeconfig.path, else KUBECONFIG, else in-cluster, else ~/.kube/config.

    `home` is HOME_KUBECONFIG expanded; `exists` tells whether a file is there (the controller's filesystem).
    """
    kube = block.get("kubeconfig")
    path = str((kube if isinstance(kube, Mapping) else {}).get("path") or "")
    if path:
        if exists(path):
            return Kubeconfig(path, f"block.kubeconfig.path {path}")
        raise NoKubeconfig(
            f"block.kubeconfig.path is {path}, which does not exist. Polycrate sets it to "
            "artifacts/blocks/<block>/kubeconfig.yml, the workspace kubeconfig or ~/.kube/config, whichever it "
            "found: put the cluster's kubeconfig there. Nothing was changed."
        )
    listed = env.get("KUBECONFIG")
    if listed:
        entries = [entry for entry in listed.split(":") if entry]
        if any(exists(entry) for entry in entries):
            return Kubeconfig("" if len(entries) > 1 else entries[0], f"KUBECONFIG {listed}")
        raise NoKubeconfig(
            f"KUBECONFIG is {listed}, and no file it names exists. Point it at the cluster's kubeconfig. "
            "Nothing was changed."
        )
    if env.get("KUBERNETES_SERVICE_HOST"):
        return Kubeconfig("", "the pod's service account (in-cluster)")
    if exists(home):
        return Kubeconfig(home, home)
    artifacts = block.get("artifacts")
    artifacts_path = str((artifacts if isinstance(artifacts, Mapping) else {}).get("path") or "")
    where = f"{artifacts_path}/kubeconfig.yml" if artifacts_path else "artifacts/blocks/<block>/kubeconfig.yml"
    state = "empty" if "KUBECONFIG" in env else "not set"
    # Two lines, printed unfolded (see unreachable_message).
    raise NoKubeconfig(
        f"No kubeconfig found: block.kubeconfig.path (empty: Polycrate found none), KUBECONFIG ({state}) and {home} "
        "(missing).\n"
        f"Put the cluster's kubeconfig at {where} (Polycrate passes it to the block), or set KUBECONFIG when running "
        "ansible-playbook yourself. Nothing was changed."
    )


# Substrings of the errors the kubernetes client (urllib3, ssl, kubeconfig loading) raises and what each means,
# checked in order: connection failures first (their text holds ports and addresses, never an HTTP status).
CAUSES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("connection refused",), "connection refused: nothing listens at that address"),
    (("timed out", "timeouterror"), "timed out: no answer from that address"),
    (
        (
            "name or service not known",
            "nodename nor servname",
            "temporary failure in name resolution",
            "failed to resolve",
            "no address associated",
        ),
        "the host name does not resolve",
    ),
    (("no route to host", "network is unreachable"), "no route to that address"),
    (
        ("certificate_verify_failed", "certificate verify failed", "sslerror", "wrong version number", "tlsv1 alert"),
        "the TLS handshake failed (the server's certificate is not trusted by the kubeconfig's CA, or is not for "
        "this host)",
    ),
    (("(401)", "unauthorized"), "unauthorized: the API server rejected the kubeconfig's credentials"),
    (("(403)", "forbidden"), "forbidden: the kubeconfig's user may not read what the block needs"),
    (
        ("invalid kube-config", "could not create api client", "configexception", "kube-config"),
        "the kubeconfig cannot be used",
    ),
)


def unreachable_message(error_text: str, server: str, kubeconfig_source: str) -> str:
    """One message for a failed API call: the cause in words, the server, the kubeconfig, the innermost error.

    `error_text` is the exception chain, outermost first, joined by " <- " (the k8s_list module writes it so).
    """
    lowered = error_text.lower()
    cause = next((meaning for needles, meaning in CAUSES if any(n in lowered for n in needles)), "the call failed")
    if not server and (found := re.search(r"host='([^']+)', port=(\d+)", error_text)):
        server = f"https://{found[1]}:{found[2]}"
    reason = " ".join(error_text.rsplit(" <- ", maxsplit=1)[-1].split())
    if len(reason) > 200:
        reason = reason[:197] + "..."
    at = f" at {server}" if server else ""
    # Two lines: the YAML result format prints a text with a newline as a literal block, never folded, so the
    # cause stays on the first line whatever the paths' length.
    return (
        f"Cannot talk to the Kubernetes API server{at}: {cause}.\n"
        f"Check that the cluster is up and that the kubeconfig points at it with valid credentials. "
        f"kubeconfig: {kubeconfig_source}. Error: {reason}"
    )
