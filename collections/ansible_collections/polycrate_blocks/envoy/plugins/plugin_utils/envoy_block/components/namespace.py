"""The block's namespace, when the block owns it."""

from __future__ import annotations

from dataclasses import dataclass

from .. import fact, labels
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

    @classmethod
    def from_dict(cls, data: object, path: str = "plan.namespace") -> NamespaceSettings:
        d = fact.fields(data, path, ("name", "create"))
        return cls(name=fact.string(d, "name", path), create=fact.boolean(d, "create", path))


def settings(config: Config) -> NamespaceSettings:
    return NamespaceSettings(name=str(config.get("namespace")), create=bool(config.get("create_namespace")))
