"""Instance-type rules: DRA metadata and device presence."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.derive.karpenter_launch import metadata_of
from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, at, auto_mode_plugin_only, dra_pools, error, pool_types, rule


@rule("dra-unsupported-instance-type", "dynamic DRA pools only allow types with DRA metadata (Karpenter's: of the "
      "release `cluster.karpenter.version` names)",
      modes=("auto-mode", "karpenter"))
def _dra_unsupported_instance_type(plan: Plan) -> Iterator[Verdict]:
    for pool, family in dra_pools(plan):
        if pool.provisioning != "dynamic" or auto_mode_plugin_only(plan, pool, family):
            continue
        types = [t for t in pool_types(pool) if t.has(family)]
        if plan.mode == "auto-mode":
            bad = [t.name for t in types if not t.auto_mode_dra_metadata]
        else:
            bad = [t.name for t in types if not metadata_of(plan).covers(t, family)]
        if bad:
            runs = f"Karpenter {metadata_of(plan).release}" if plan.mode == "karpenter" else plan.mode
            yield error(at(pool, "instanceTypes"),
                        f"{runs} has no DRA device metadata for {', '.join(sorted(bad))}: dynamic "
                        f"provisioning never launches them for {family} claims",
                        f"remove them from this pool's instanceTypes, make the pool static (provisioning: static "
                        f"with replicas), or use devices.{family}: device-plugin")


@rule("device-family-absent", "an explicit manager needs the family's devices")
def _device_family_absent(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        for family, res in pool.managers.items():
            if res.requested in ("dra", "device-plugin", "inferred") and not pool.has_hardware(family):
                yield error(at(pool, f"devices.{family}"),
                            f"devices.{family} is {res.requested} but none of {', '.join(pool.instance_types)} "
                            f"has {family} devices",
                            f"set devices.{family}: auto (or none), or add instance types that have them")


