"""Instance checks: every pool's instance types exist in the region, and EC2's live description
agrees with the catalogue the plan was derived from (a difference is a warning naming the field)."""

from __future__ import annotations

from eks_devices.core.knowledge import catalog
from eks_devices.core.knowledge.catalog_refresh import (
    _entry as catalogue_entry,  # the one mapping from EC2's record to catalogue fields
)
from eks_devices.preflight.model import CheckResult, Context

INSTANCES = "instances.catalogue"
# The catalogue fields the plan's decisions rest on: device families, EFA layout, network cards.
COMPARED = ("gpu_count", "efa_supported", "max_efa_interfaces", "neuron_count", "network_cards")


def instances(ctx: Context) -> list[CheckResult]:
    users: dict[str, list[str]] = {}
    for pool in ctx.plan.pools.values():
        for itype in pool.instance_types:
            users.setdefault(itype, []).append(pool.name)
    if not users:
        return [CheckResult(INSTANCES, "node pools", "pass", "the stack has no node pools")]
    live = ctx.aws.instance_types(tuple(sorted(users)))
    results = []
    for itype in sorted(users):
        subject = f"{itype} (pool {', '.join(users[itype])})"
        raw = live.get(itype)
        if raw is None:
            results.append(CheckResult(INSTANCES, subject, "fail",
                                       f"EC2 does not describe {itype} in {ctx.region}",
                                       "pick an instance type this region has, or deploy the stack in a region "
                                       "that offers it (aws:region)"))
            continue
        seen = catalogue_entry(raw)
        known = catalog.get(itype)
        diffs = [f"{name}: catalogue {getattr(known, name)}, EC2 {seen[name]}" for name in COMPARED
                 if known is not None and getattr(known, name) != seen[name]]
        if diffs:
            results.append(CheckResult(INSTANCES, subject, "warn",
                                       "EC2 disagrees with the catalogue on " + "; ".join(diffs),
                                       "refresh the catalogue (eks-devices catalog --refresh) and re-run preview; "
                                       "the plan's EFA layout and device families come from these figures"))
        else:
            results.append(CheckResult(INSTANCES, subject, "pass",
                                       "EC2 agrees with the catalogue on " + ", ".join(COMPARED)))
    return results
