"""Auto Mode rules: what its built-in drivers can and cannot do."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.families import DESCRIPTORS
from eks_devices.core.model import Plan
from eks_devices.core.names import eks_manager_label
from eks_devices.core.rules.registry import Verdict, at, dra_pools, error, rule, warning

# the families Auto Mode runs with DRA, each chosen by its EKS device-manager label
AUTO_MODE_DRA = tuple(d.name for d in DESCRIPTORS if d.auto_mode_dra and d.auto_mode_label)


@rule("auto-mode-no-gpu-sharing", "no time-slicing or MIG in Auto Mode, with either manager", modes=("auto-mode",))
def _auto_mode_no_gpu_sharing(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        strategy = pool.config.gpu_sharing.strategy
        if strategy in ("time-slicing", "mig"):
            # Auto Mode's built-in DRA driver has no sharing settings, and its built-in device plugin
            # takes no per-node configuration: the setting would be dropped without a word
            where = ("a Karpenter cluster (time-slicing through consumable capacity or the driver's GpuConfig)"
                     if strategy == "time-slicing" else "a static Karpenter pool or a managed node group")
            yield error(at(pool, "gpuSharing.strategy"),
                        f"Auto Mode offers no {strategy}: neither its NVIDIA DRA driver nor its device plugin "
                        "can be configured for it",
                        f"use gpuSharing.strategy: shared-claim in Auto Mode, or {where}")


@rule("auto-mode-no-compute-domains", "no ComputeDomains in Auto Mode", modes=("auto-mode",))
def _auto_mode_no_compute_domains(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if pool.config.compute_domains:
            yield error(at(pool, "computeDomains"),
                        "Auto Mode does not support NVIDIA ComputeDomains (multi-node NVLink)",
                        "use a static Karpenter pool (cluster.mode: karpenter, provisioning: static with replicas) "
                        "or a managed node group for ComputeDomains")


@rule("device-classes-present", "Auto Mode DRA pools need the toolkit's DeviceClasses", modes=("auto-mode",))
def _device_classes_present(plan: Plan) -> Iterator[Verdict]:
    if plan.spec.cluster.auto_mode.create_device_classes:
        return
    pools = sorted({p.name for p, _ in dra_pools(plan, AUTO_MODE_DRA, inferred=True)})
    if pools:
        yield error("cluster.autoMode.createDeviceClasses",
                    f"pools {', '.join(pools)} use (or may use) DRA, but Auto Mode creates no DeviceClasses and the "
                    "toolkit's creation is off: every claim would stay Pending",
                    "set cluster.autoMode.createDeviceClasses: true")


@rule("static-pool-device-manager-label", "Auto Mode pools' device-manager labels match their managers (static "
      "DRA pools need theirs)", modes=("auto-mode",))
def _static_pool_label(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        for family in AUTO_MODE_DRA:
            label = eks_manager_label(family)  # type: ignore[arg-type]
            manager = pool.manager(family)  # type: ignore[arg-type]
            actual = pool.labels.get(label)
            static = pool.provisioning == "static"
            wrong = (manager == "dra" and static and actual != "dra") or (
                manager != "none" and actual is not None and actual != manager)
            if wrong:
                why = (" (a static pool without it runs the device plugin)" if manager == "dra" and static else
                       f": Auto Mode would run the {family} {actual} on every node of the pool")
                sets = (f"sets none for devices.{family}: inferred (Auto Mode picks per node)"
                        if manager == "inferred" else f"sets it from devices.{family}")
                yield error(at(pool, f"labels.{label}"),
                            f"the pool's {family} manager is {manager} but its label {label} is {actual!r}{why}",
                            f"remove {label} from the pool's labels; the toolkit {sets}")


@rule("auto-mode-ignored-settings", "`ami` / `bottlerocketSettings` have no effect in Auto Mode (warning)",
      modes=("auto-mode",))
def _auto_mode_ignored_settings(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        ignored = [f for f, set_ in (("ami", pool.config.ami != "al2023"),
                                     ("bottlerocketSettings", bool(pool.config.bottlerocket_settings))) if set_]
        for field in ignored:
            yield warning(at(pool, field),
                          f"{field} has no effect in Auto Mode, which runs its own Bottlerocket-based node image",
                          f"remove {field} from this pool")
