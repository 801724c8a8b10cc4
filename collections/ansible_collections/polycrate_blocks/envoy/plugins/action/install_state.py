"""Read what install needs once, decide with lifecycle.decide_install, and return the decision (or stop
cleanly, once, nothing changed). The role only carries it out.

Between the read and the decision: whose the Gateway API CRDs are (lifecycle.crd_owners, pure), since the
CRD source install compares the cluster with (its digest, crds.source_current) leaves them out when
another owner's are left alone."""

from __future__ import annotations

from typing import Any

from ansible.module_utils.parsing.convert_bool import boolean
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_SPEC
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_action import PlanAction, read_cluster
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block import crds, lifecycle
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.lifecycle import crd_owners
from ansible_collections.polycrate_blocks.envoy.plugins.plugin_utils.envoy_block.plan import Plan


class ActionModule(PlanAction):
    # The connection options arrive from module_defaults (group/polycrate_blocks.envoy.k8s).
    _VALID_ARGS = frozenset({"plan", "field_manager", "namespace_waited", "check_mode", *AUTH_ARG_SPEC})

    def act(self, plan: Plan) -> dict[str, Any]:
        connection = {k: v for k, v in self._task.args.items() if k in AUTH_ARG_SPEC}
        # Metadata only unless a query says otherwise: the CRDs are megabytes of schema.
        module_args = {**connection, "queries": lifecycle.install_lookups(plan), "metadata_only": True}
        read = read_cluster(self, module_args, self.task_vars)
        if read.get("failed"):
            return read
        observed = lifecycle.InstallObserved.from_results(read["results"])
        manager = str(self._task.args.get("field_manager") or lifecycle.block_field_manager(plan))
        owners = crd_owners.ownership(plan, observed.crds, manager)
        settings = crd_owners.settings(plan, owners)
        try:
            digest = crds.source_digest(settings)
        except OSError as exc:
            return {"failed": True, "msg": f"Cannot read the CRD source {exc.filename}: {exc.strerror}."}
        current = crds.source_current(
            list(observed.crds),
            digest,
            settings["gateway_api"]["install"],
            settings["gateway_api"]["channel"],
            str(settings["envoy_gateway"]["version"]),
        )
        waited = bool(self._task.args.get("namespace_waited", False))
        check_mode = boolean(self._task.args.get("check_mode", False), strict=False)
        decision = lifecycle.decide_install(plan, observed, current, owners, waited=waited, check_mode=check_mode)
        if decision.problems:
            return {
                "failed": True,
                "msg": f"install cannot start: {len(decision.problems)} problem(s), under `problems`. "
                "Nothing was changed.",
                "problems": "".join(f"{problem}\n" for problem in decision.problems),
            }
        # crd_manifests stamps the CRDs it reads with this same digest.
        return {"changed": False, "crd_source": digest, **decision.to_dict()}
