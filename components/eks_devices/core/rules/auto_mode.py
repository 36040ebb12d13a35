"""Auto Mode rules: what its built-in drivers can and cannot do."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.model import Finding, Plan
from eks_devices.core.names import eks_manager_label
from eks_devices.core.rules.registry import at, dra_pools, rule


@rule("auto-mode-no-gpu-sharing", "Auto Mode has no time-slicing or MIG through DRA")
def _auto_mode_no_gpu_sharing(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode":
        return
    for pool, _ in dra_pools(plan, ("nvidia",)):
        strategy = pool.config.gpu_sharing.strategy
        if strategy in ("time-slicing", "mig"):
            yield Finding("auto-mode-no-gpu-sharing", "error", at(pool, "gpuSharing.strategy"),
                          f"Auto Mode does not offer {strategy} through the NVIDIA DRA driver",
                          "use gpuSharing.strategy: shared-claim, devices.nvidia: device-plugin, "
                          "or a Karpenter cluster")


@rule("auto-mode-no-compute-domains", "ComputeDomains are not supported in Auto Mode")
def _auto_mode_no_compute_domains(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode":
        return
    for pool in plan.pools.values():
        if pool.config.compute_domains:
            yield Finding("auto-mode-no-compute-domains", "error", at(pool, "computeDomains"),
                          "Auto Mode does not support NVIDIA ComputeDomains (multi-node NVLink)",
                          "use a static Karpenter pool or a managed node group for ComputeDomains")


@rule("auto-mode-neuron-plugin-only", "Auto Mode runs Neuron with the device plugin only")
def _auto_mode_neuron_plugin_only(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode":
        return
    for pool, _ in dra_pools(plan, ("neuron",)):
        yield Finding("auto-mode-neuron-plugin-only", "error", at(pool, "devices.neuron"),
                      "Auto Mode supports DRA for NVIDIA and EFA only; Neuron stays on the device plugin",
                      "set devices.neuron to device-plugin (or auto)")


@rule("device-classes-present", "Auto Mode DRA pools need the toolkit to create the DeviceClasses")
def _device_classes_present(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode" or plan.spec.cluster.auto_mode.create_device_classes:
        return
    pools = sorted({p.name for p, _ in dra_pools(plan, ("nvidia", "efa"))})
    if pools:
        yield Finding("device-classes-present", "error", "cluster.autoMode.createDeviceClasses",
                      f"pools {', '.join(pools)} use DRA, but Auto Mode creates no DeviceClasses and the "
                      "toolkit's creation is off: every claim would stay Pending",
                      "set cluster.autoMode.createDeviceClasses: true")


@rule("static-pool-device-manager-label", "static Auto Mode pools need the device-manager label for DRA")
def _static_pool_label(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode":
        return
    for pool in plan.pools.values():
        for family in ("nvidia", "efa"):
            label = eks_manager_label(family)  # type: ignore[arg-type]
            manager = pool.manager(family)  # type: ignore[arg-type]
            actual = pool.labels.get(label)
            wrong = (manager == "dra" and pool.provisioning == "static" and actual != "dra") or (
                manager != "none" and actual is not None and actual != manager)
            if wrong:
                yield Finding("static-pool-device-manager-label", "error", at(pool, f"labels.{label}"),
                              f"the pool's {family} manager is {manager} but its label {label} is "
                              f"{actual!r}" + (" (a static pool without it runs the device plugin)"
                                               if manager == "dra" else ""),
                              f"remove {label} from the pool's labels; the toolkit sets it from devices.{family}")


@rule("auto-mode-ignored-settings", "Auto Mode chooses the node image itself")
def _auto_mode_ignored_settings(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "auto-mode":
        return
    for pool in plan.pools.values():
        ignored = [f for f, set_ in (("ami", pool.config.ami != "al2023"),
                                     ("bottlerocketSettings", bool(pool.config.bottlerocket_settings))) if set_]
        for field in ignored:
            yield Finding("auto-mode-ignored-settings", "warning", at(pool, field),
                          f"{field} has no effect in Auto Mode, which runs its own Bottlerocket-based node image",
                          f"remove {field} from this pool")
