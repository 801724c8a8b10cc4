"""The block's namespace, when the block owns it."""

from __future__ import annotations

from dataclasses import dataclass

from .. import labels
from ..model import Config
from ..plan import Phase, Step


def build(config: Config) -> list[Step]:
    if not config.get("create_namespace"):
        return []
    obj = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": labels.metadata(config, config.get("namespace"), "namespace"),
    }
    return [Step(Phase.NAMESPACE, obj)]


@dataclass(frozen=True)
class NamespaceSettings:
    """plan.namespace: where the block installs (namespace) and whether it creates and owns it
    (create_namespace): uninstall removes only a namespace that carries the ownership labels."""

    name: str
    create: bool


def settings(config: Config) -> NamespaceSettings:
    return NamespaceSettings(name=str(config.get("namespace")), create=bool(config.get("create_namespace")))
