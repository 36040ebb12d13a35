"""Instance-type rules: DRA metadata, EFA capability, device presence, MIG."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.knowledge import versions
from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, at, auto_mode_plugin_only, dra_pools, error, pool_types, rule


@rule("dra-unsupported-instance-type", "dynamic DRA pools only allow types with DRA metadata",
      modes=("auto-mode", "karpenter"))
def _dra_unsupported_instance_type(plan: Plan) -> Iterator[Verdict]:
    for pool, family in dra_pools(plan):
        if pool.provisioning != "dynamic" or auto_mode_plugin_only(plan, pool, family):
            continue
        types = [t for t in pool_types(pool) if t.has(family)]
        if plan.mode == "auto-mode":
            bad = [t.name for t in types if not t.auto_mode_dra_metadata]
        else:
            bad = [t.name for t in types if not t.karpenter_dra_metadata]
        if bad:
            yield error(at(pool, "instanceTypes"),
                        f"{plan.mode} has no DRA device metadata for {', '.join(sorted(bad))}: dynamic "
                        f"provisioning never launches them for {family} claims",
                        f"remove them from this pool's instanceTypes, make the pool static (provisioning: static "
                        f"with replicas), or use devices.{family}: device-plugin")


@rule("efa-unsupported-instance-type", "EFA managers need EFA-capable types")
def _efa_unsupported_instance_type(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if pool.managers["efa"].requested not in ("dra", "device-plugin", "inferred") or not pool.has_hardware("efa"):
            continue
        bad = sorted(t.name for t in pool_types(pool) if not t.has_efa)
        if bad:
            yield error(at(pool, "instanceTypes"),
                        f"devices.efa is {pool.manager('efa')} but {', '.join(bad)} have no EFA",
                        "allow only EFA-capable instanceTypes in this pool, or set devices.efa: none")


@rule("device-family-absent", "an explicit manager needs the family's devices")
def _device_family_absent(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        for family, res in pool.managers.items():
            if res.requested in ("dra", "device-plugin", "inferred") and not pool.has_hardware(family):
                yield error(at(pool, f"devices.{family}"),
                            f"devices.{family} is {res.requested} but none of {', '.join(pool.instance_types)} "
                            f"has {family} devices",
                            f"set devices.{family}: auto (or none), or add instance types that have them")


@rule("mig-unsupported-gpu", "MIG only on MIG-capable GPUs")
def _mig_unsupported_gpu(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if pool.config.gpu_sharing.strategy != "mig":
            continue
        bad = sorted(f"{t.name} ({t.gpu_model})" for t in pool_types(pool) if t.has_nvidia and not t.mig_capable)
        if bad:
            yield error(at(pool, "gpuSharing.strategy"),
                        f"MIG is not available on {', '.join(bad)}",
                        "use A100/H100/H200/B200/B300 instanceTypes (p4d, p5, p5e, p5en, p6) or time-slicing")


@rule("gpu-sharing-needs-nvidia", "sharing, shared claims and ComputeDomains need the right NVIDIA manager "
      "(a shared claim takes an Auto Mode pool that infers it)")
def _gpu_sharing_needs_nvidia(plan: Plan) -> Iterator[Verdict]:
    """A shared claim is a DRA ResourceClaim: Auto Mode launches a DRA node for a DRA Pod on a pool that
    infers the manager (EKS user guide, "Manage hardware devices on Amazon EKS": device manager labels,
    dynamic capacity provisioning; and its Auto Mode limits: share a GPU through a ResourceClaim several
    Pods reference). ComputeDomains need the driver itself; Auto Mode has none at all, which
    `auto-mode-no-compute-domains` reports with the fix that applies there."""
    for pool in plan.pools.values():
        manager = pool.manager("nvidia")
        strategy = pool.config.gpu_sharing.strategy
        if strategy != "none" and manager == "none":
            yield error(at(pool, "gpuSharing.strategy"),
                        f"gpuSharing {strategy} on a pool with no NVIDIA manager",
                        "remove gpuSharing or use GPU instance types")
        elif strategy == "shared-claim" and not pool.serves("nvidia", "dra"):
            yield error(at(pool, "gpuSharing.strategy"),
                        f"a shared ResourceClaim needs the NVIDIA DRA driver, the pool's NVIDIA manager is {manager}",
                        "set devices.nvidia: dra" + (
                            " (or inferred: Auto Mode then launches a DRA node for the claim's Pods)"
                            if plan.mode == "auto-mode" else ", or use time-slicing with the device plugin"))
        if pool.config.compute_domains and manager != "dra" and plan.mode != "auto-mode":
            yield error(at(pool, "computeDomains"),
                        "ComputeDomains are served by the NVIDIA DRA driver only",
                        "set devices.nvidia: dra on this pool")


GB200 = "p6e-gb200"
EFA_PLUGIN_FOR_GB200 = (0, 5, 14)


@rule("p6e-gb200-prerequisites", "p6e-gb200 pools: Capacity Blocks, AL2023, ComputeDomains, EFA plugin 0.5.14+")
def _p6e_gb200_prerequisites(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if not any(t.family == GB200 for t in pool_types(pool)):
            continue
        if pool.capacity != "capacity-block":
            yield error(at(pool, "capacity"), "p6e-gb200 is sold as Capacity Blocks only",
                        "set capacity: capacity-block with the block's id in capacityReservationIds, its "
                        "availabilityZone and placementGroup: false (the block places its instances)")
        if pool.ami != "al2023":
            yield error(at(pool, "ami"), "p6e-gb200 needs the AL2023 ARM NVIDIA AMI",
                        "set ami: al2023")
        if not pool.config.compute_domains:
            yield error(at(pool, "computeDomains"),
                        "p6e-gb200 workloads use multi-node NVLink through NVIDIA ComputeDomains",
                        "set computeDomains: true (with devices.nvidia: dra)")
        release = plan.releases.get(pool.releases.get("efa", ""))
        if release is not None and release.key == "aws-efa-k8s-device-plugin" and (
                versions.semver(release.version) < EFA_PLUGIN_FOR_GB200):
            yield error("chartVersions.aws-efa-k8s-device-plugin",
                        f"the EFA device plugin {release.version} predates p6e-gb200 support (0.5.14)",
                        "use aws-efa-k8s-device-plugin 0.5.14 or later")
