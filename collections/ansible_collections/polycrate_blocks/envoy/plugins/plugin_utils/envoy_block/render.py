"""Plan -> the files `render` writes: one YAML file per object plus the helm release and values."""

from __future__ import annotations

from typing import Any

import yaml

from .plan import Plan


class _Dumper(yaml.SafeDumper):
    """Block-style YAML, keys in builder order, no line wrapping, lists indented under their key."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        # Builders share one dict between objects (a selector, a toleration list); PyYAML would write it once with
        # an anchor (&id001) and then as an alias (*id001). GitOps diffs and some tools mishandle aliases, and a
        # reader has to chase them: every value is written out where it is used.
        return True


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_presenter)


def to_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1_000_000)


# What `render` owns below the artifacts folder (Polycrate keeps other files there: kubeconfig, inventory).
OWNED = ("manifests", "helm", "plan.yaml")

HEADER = "# Rendered by the envoy Polycrate block ({what}). Do not edit: change block.config and render again.\n"


def files(plan: Plan) -> dict[str, str]:
    """Relative path -> content. Credentials are never part of it (Plan.to_dict strips them)."""
    data = plan.to_dict(include_secrets=False)
    out: dict[str, str] = {}
    for entry in data["objects"]:
        out[f"manifests/{entry['file']}"] = (
            HEADER.format(what=f"{entry['phase']} phase") + "---\n" + to_yaml(entry["definition"])
        )
    helm = data["helm"]
    out["helm/values.yaml"] = HEADER.format(what="gateway-helm values") + to_yaml(helm["values"])
    release = {k: v for k, v in helm.items() if k != "values"}
    out["helm/release.yaml"] = HEADER.format(what="gateway-helm release") + to_yaml(release)
    summary = {
        "crds": data["crds"],
        "namespace": data["namespace"],
        "ownership_labels": data["ownership_labels"],
        "apply_order": [entry["file"] for entry in data["objects"]],
        "delete_order": data["delete_order"],
        "warnings": data["warnings"],
    }
    out["plan.yaml"] = HEADER.format(what="plan summary") + to_yaml(summary)
    return dict(sorted(out.items()))
