"""The block's namespace, when the block owns it."""

from __future__ import annotations

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
