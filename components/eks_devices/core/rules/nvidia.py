"""The NVIDIA GPU family's rules: GPU sharing (time-slicing, MIG, MPS), ComputeDomains, the Bottlerocket
NVIDIA variant's bundled plugin, p6e-gb200, and plugin-style GPU requests served through DRA (KEP-5004)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from eks_devices.core.families import EFA, NVIDIA
from eks_devices.core.knowledge import charts, versions
from eks_devices.core.knowledge.device_classes import EXTENDED_RESOURCE_KUBERNETES, GPU_CLASS
from eks_devices.core.model import Plan, PoolPlan
from eks_devices.core.names import (
    BOTTLEROCKET_NVIDIA_ENABLED,
    BOTTLEROCKET_NVIDIA_PARTITIONING,
    BOTTLEROCKET_NVIDIA_PLUGIN,
    CONSUMABLE_CAPACITY_ANNOTATION,
    eks_manager_label,
    manager_label,
)
from eks_devices.core.rules.claims import mig_dynamic_pools
from eks_devices.core.rules.registry import (
    Verdict,
    at,
    claim_at,
    dra_pools,
    error,
    pool_types,
    rule,
    stack_claims,
    warning,
)
from eks_devices.core.values import dig

CONSUMABLE = versions.CONSUMABLE_CAPACITY_KUBERNETES
PARTITIONABLE = versions.PARTITIONABLE_DEVICES_KUBERNETES


@rule("bottlerocket-bundled-plugin", "Bottlerocket's bundled NVIDIA plugin is off on NVIDIA DRA pools")
def _bottlerocket_bundled_plugin(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if pool.ami != "bottlerocket" or pool.manager("nvidia") != "dra":
            continue
        if dig(pool.bottlerocket_settings, BOTTLEROCKET_NVIDIA_ENABLED, True) is not False:
            yield error(at(pool, "bottlerocketSettings"),
                        "the Bottlerocket NVIDIA variant would run its bundled device plugin beside the "
                        "NVIDIA DRA driver",
                        "remove kubelet-device-plugins.nvidia.enabled from bottlerocketSettings "
                        "(the toolkit sets it to false)")


@rule("mig-partitions", "MIG devices exist only where something partitions the GPUs (warning)")
def _mig_partitions(plan: Plan) -> Iterator[Verdict]:
    dra_gates = (dig(plan.releases["nvidia-dra-driver"].values, "featureGates") or {}) if (
        "nvidia-dra-driver" in plan.releases) else {}
    for pool in plan.pools.values():
        if pool.config.gpu_sharing.strategy != "mig" or pool.manager("nvidia") == "none":
            continue
        if pool.manager("nvidia") == "dra" and dra_gates.get("DynamicMIG"):
            continue  # the driver partitions on demand
        if pool.releases.get("nvidia") == "bottlerocket":  # the node image's plugin, and its MIG manager
            if dig(pool.bottlerocket_settings, BOTTLEROCKET_NVIDIA_PARTITIONING) != "mig":
                settings = f"nodePools.{pool.name}.bottlerocketSettings"
                yield warning(at(pool, "gpuSharing.profile"),
                              f"the toolkit does not partition GPUs: {pool.config.gpu_sharing.profile} MIG devices "
                              "exist only once the node's GPUs are partitioned, and the pool's NVIDIA devices are run "
                              "by Bottlerocket's bundled device plugin, whose MIG manager partitions them at boot only "
                              "when its settings ask for it",
                              f"set {settings}.{BOTTLEROCKET_NVIDIA_PARTITIONING}: mig and "
                              f"{settings}.{BOTTLEROCKET_NVIDIA_PLUGIN}.mig.profile "
                              "to a profile (or partition count) per GPU, keyed as Bottlerocket names GPUs (e.g. "
                              f"a100.40gb: {pool.config.gpu_sharing.profile}) (bottlerocket.dev, settings "
                              "kubelet-device-plugins, NVIDIA Multi-Instance GPU)")
            continue
        yield warning(at(pool, "gpuSharing.profile"),
                      f"the toolkit does not partition GPUs: {pool.config.gpu_sharing.profile} MIG devices exist only "
                      "once the node's GPUs are partitioned; the NVIDIA DRA driver does it on demand (DynamicMIG) "
                      f"only with Hopper or later GPUs on Kubernetes {versions.show(PARTITIONABLE)}, on every DRA MIG "
                      "pool of the stack",
                      _dynamic_mig_fix(plan, pool))


def _dynamic_mig_fix(plan: Plan, pool: PoolPlan) -> str:
    """The stack settings that let the driver partition this pool's GPUs on demand; no stack setting
    partitions them any other way."""
    steps = []
    if pool.manager("nvidia") != "dra":
        steps.append(f"set nodePools.{pool.name}.devices.nvidia: dra")
    if plan.spec.cluster.kubernetes < PARTITIONABLE:
        steps.append(f'set cluster.version "{versions.show(PARTITIONABLE)}" or later')
    older = [p for p in plan.pools.values() if p.config.gpu_sharing.strategy == "mig"
             and (p is pool or p.manager("nvidia") == "dra") and _pre_hopper(p)]
    for other in older:
        steps.append(f"give nodePools.{other.name}.instanceTypes only Hopper-or-later GPUs "
                     f"({', '.join(_pre_hopper(other))} {'is' if len(_pre_hopper(other)) == 1 else 'are'} older; "
                     "e.g. p5.48xlarge) and a gpuSharing.profile they offer")
    return ("; ".join(steps) + ". Otherwise the GPUs must be partitioned outside the toolkit before Pods claim MIG "
            "devices: no stack setting does it")


def _pre_hopper(pool: PoolPlan) -> list[str]:
    return sorted(t.name for t in pool_types(pool) if t.has_nvidia and t.gpu_model not in charts.DYNAMIC_MIG_GPU_MODELS)


@rule("dra-time-slicing-replicas", "`gpuSharing.replicas` has no effect where the NVIDIA DRA driver time-slices "
      "without Karpenter's consumable capacity (warning)", modes=("karpenter", "managed-node-groups"))
def _dra_time_slicing_replicas(plan: Plan) -> Iterator[Verdict]:
    """The driver's GpuConfig time-slicing takes an interval, not a share count (`TimeSlicingConfig` in
    NVIDIA/k8s-dra-driver-gpu `api/nvidia.com/resource/v1beta1/sharing.go`, commit 06756cb): the Pods that
    share one claim share its GPU. Only dynamic Karpenter pools turn replicas into shares (consumable
    capacity, `karpenter-time-slicing`)."""
    for pool in plan.pools.values():
        sharing = pool.config.gpu_sharing
        if (sharing.strategy != "time-slicing" or pool.manager("nvidia") != "dra"
                or pool.node_class_annotations.get(CONSUMABLE_CAPACITY_ANNOTATION)):
            continue
        yield warning(at(pool, "gpuSharing.replicas"),
                      f"replicas: {sharing.replicas} has no effect: the pool's GPUs are managed by the NVIDIA DRA "
                      "driver, whose time-slicing has no share count (a GPU is time-sliced among the Pods that "
                      "reference one ResourceClaim with timeSlicing); nothing splits a GPU into "
                      f"{sharing.replicas} allocatable devices here",
                      f"set nodePools.{pool.name}.devices.nvidia: device-plugin to advertise each GPU as "
                      f"{sharing.replicas} nvidia.com/gpu; or keep DRA and remove gpuSharing (share a GPU through a "
                      "claim of kind: claim with timeSlicing, which the Pods reference together)")


@rule("nvidia-dra-feature-gates", "an MPS claim needs the driver's `MPSSupport` gate, which excludes `DynamicMIG` "
      "(the driver refuses both at once)")
def _nvidia_dra_feature_gates(plan: Plan) -> Iterator[Verdict]:
    """dra-driver-nvidia-gpu refuses an MPS config unless `MPSSupport` is on, and refuses to start
    with `MPSSupport` and `DynamicMIG` both on (v0.4.1 `pkg/featuregates`, `api/.../validate.go`)."""
    release = plan.releases.get("nvidia-dra-driver")
    if release is None:
        return
    gates = dig(release.values, "featureGates") or {}
    if gates.get("MPSSupport") and gates.get("DynamicMIG"):
        yield error("helmValues.nvidia-dra-driver.featureGates.MPSSupport",
                    "the NVIDIA DRA driver refuses to start with MPSSupport and DynamicMIG both on (they are "
                    "mutually exclusive); DynamicMIG is on for the stack's MIG pools",
                    "turn MPSSupport off, or drop gpuSharing: mig from the NVIDIA DRA pools")
    if gates.get("MPSSupport"):
        return
    for name, claim in sorted(plan.spec.claims.items()):
        mps = any(c.opaque.driver == "gpu.nvidia.com" and dig(c.opaque.parameters, "sharing.strategy") == "MPS"
                  for c in claim.config)
        if mps and any(p in release.pools for p in claim.pools):
            yield error(f"claims.{name}.config",
                        "the claim's GpuConfig asks for MPS sharing, which the NVIDIA DRA driver refuses while its "
                        "MPSSupport gate is off: the Pod never starts",
                        "set helmValues.nvidia-dra-driver.featureGates.MPSSupport: true (not with MIG pools on "
                        "DynamicMIG), or use timeSlicing")

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
EFA_PLUGIN, EFA_PLUGIN_FOR_GB200 = EFA.releases["device-plugin"], (0, 5, 14)


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
        release = plan.releases.get(pool.releases.get(EFA.name, ""))
        if release is not None and release.key == EFA_PLUGIN and (
                versions.semver(release.version) < EFA_PLUGIN_FOR_GB200):
            yield error(f"chartVersions.{EFA_PLUGIN}",
                        f"the EFA device plugin {release.version} predates p6e-gb200 support (0.5.14)",
                        f"use {EFA_PLUGIN} 0.5.14 or later")

@rule("karpenter-compute-domains-static-only", "ComputeDomains only on static Karpenter pools", modes=("karpenter",))
def _karpenter_compute_domains(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if pool.config.compute_domains and pool.provisioning == "dynamic":
            yield error(at(pool, "computeDomains"),
                        "Karpenter does not provision dynamically for ComputeDomain claims",
                        "set provisioning: static with replicas on this pool")


@rule("karpenter-mig-static-only", "MIG only on static Karpenter pools", modes=("karpenter",))
def _karpenter_mig(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if pool.config.gpu_sharing.strategy == "mig" and pool.provisioning == "dynamic":
            yield error(at(pool, "gpuSharing.strategy"),
                        "Karpenter's device metadata describes whole GPUs only: it never launches nodes for MIG",
                        "set provisioning: static with replicas on this pool")

@rule("karpenter-time-slicing", "consumable-capacity time-slicing needs 1.36 + Karpenter 1.15 and a known "
      "dra-driver-nvidia-gpu release with the `ConsumableShares` gate (0.5.0+; 0.4.x refuses the unknown gate) "
      "(errors); alpha (warning)", modes=("karpenter",))
def _karpenter_time_slicing(plan: Plan) -> Iterator[Verdict]:
    for pool, _ in dra_pools(plan, ("nvidia",)):
        if not pool.node_class_annotations.get(CONSUMABLE_CAPACITY_ANNOTATION):
            continue  # static pools time-slice through the driver's GpuConfig, not consumable capacity
        low = plan.spec.cluster.kubernetes < CONSUMABLE or plan.spec.cluster.karpenter_version < (1, 15, 0)
        driver = plan.releases["nvidia-dra-driver"].version
        since = charts.CONSUMABLE_SHARES_SINCE
        carrying = [v for v in charts.RELEASES["nvidia-dra-driver"].versions
                    if versions.semver(v) >= versions.semver(since)]
        fix = (f"pin chartVersions.nvidia-dra-driver to {' or '.join(carrying)} (or remove the pin: the toolkit "
               f"pins {charts.CHARTS['nvidia-dra-driver'].version}), or use devices.nvidia: device-plugin for "
               "time-slicing")
        if low:
            upgrades = [u for u, short in ((f'cluster.version "{versions.show(CONSUMABLE)}"',
                                            plan.spec.cluster.kubernetes < CONSUMABLE),
                                           ("cluster.karpenter.version 1.15.0",
                                            plan.spec.cluster.karpenter_version < (1, 15, 0))) if short]
            yield error(at(pool, "gpuSharing.strategy"),
                        f"GPU time-slicing through consumable capacity needs Kubernetes {versions.show(CONSUMABLE)} "
                        "and Karpenter 1.15",
                        f"set {' and '.join(upgrades)} or later (time-slicing through DRA then runs as an alpha "
                        "feature, which a warning of this rule says), or use devices.nvidia: device-plugin for "
                        "time-slicing")
        elif not charts.RELEASES["nvidia-dra-driver"].knows(driver):
            yield error(at(pool, "gpuSharing.strategy"),
                        f"dra-driver-nvidia-gpu {driver} is not a release the toolkit knows to carry the "
                        "ConsumableShares feature gate: a driver without it rejects the gate and stops on every "
                        "NVIDIA DRA node", fix)
        elif versions.semver(driver) < versions.semver(since):
            yield error(at(pool, "gpuSharing.strategy"),
                        f"dra-driver-nvidia-gpu {driver} has no ConsumableShares feature gate (first released in "
                        f"{since}): the driver rejects the unknown gate and stops on every NVIDIA DRA node", fix)
        else:
            yield warning(at(pool, "gpuSharing.strategy"),
                          "consumable-capacity time-slicing is alpha in Karpenter and in the NVIDIA DRA driver",
                          "test it before relying on it")


@rule("karpenter-time-slicing-shares", "consumable-capacity pools agree on the shares per GPU")
def _karpenter_time_slicing_shares(plan: Plan) -> Iterator[Verdict]:
    pools = [p for p in plan.pools.values() if p.node_class_annotations.get(CONSUMABLE_CAPACITY_ANNOTATION)]
    shares = {p.name: p.node_class_annotations[CONSUMABLE_CAPACITY_ANNOTATION] for p in pools}
    if len(set(shares.values())) > 1:
        listing = ", ".join(f"{name}={count}" for name, count in sorted(shares.items()))
        # the count most pools give (on a tie, the first pool's by name) stands; each other pool is the one to edit
        kept = Counter(shares[name] for name in sorted(shares)).most_common(1)[0][0]
        for name in sorted(n for n, count in shares.items() if count != kept):
            yield error(at(plan.pools[name], "gpuSharing.replicas"),
                        f"the NVIDIA DRA driver publishes one share count for every GPU, but the pools ask for "
                        f"different ones ({listing}): Karpenter would pack claims the driver cannot serve",
                        f"set gpuSharing.replicas: {kept} on pool {name}, as "
                        f"{', '.join(n for n in sorted(shares) if shares[n] == kept)} give (every DRA time-slicing "
                        "pool the same count)")


@rule("karpenter-mig-claim-static-only", "a MIG claim (`mig.nvidia.com`) targets static Karpenter pools: Karpenter "
      "launches no nodes for MIG claims", modes=("karpenter",))
def _karpenter_mig_claim_static_only(plan: Plan) -> Iterator[Verdict]:
    """EKS user guide, "Manage hardware devices on Amazon EKS", Using DRA with Karpenter (MIG): Karpenter's
    device metadata describes whole GPUs only; MIG needs static provisioning, managed node groups or
    self-managed nodes."""
    for claim in stack_claims(plan):
        dynamic = sorted(mig_dynamic_pools(plan, claim))
        if dynamic:
            yield error(claim_at(claim, "pools"),
                        f"claim {claim.name} asks for MIG devices (mig.nvidia.com) on dynamic pool(s) "
                        f"{', '.join(dynamic)}: Karpenter's device metadata describes whole GPUs only, so it launches "
                        "no node for a MIG claim, and the Pod stays Pending",
                        "target a static pool that partitions its GPUs: "
                        + "; ".join(f"set nodePools.{p}.provisioning: static with replicas and gpuSharing: "
                                    f"{{strategy: mig, profile: <a profile of its GPUs>}}" for p in dynamic)
                        + " (or a managed node group)")

CHOICE = "cluster.draExtendedResources"
GPU_RESOURCE = NVIDIA.extended_resource


def _gpu_class_serves(plan: Plan) -> bool:
    """Whether the plan's `gpu.nvidia.com` DeviceClass names `nvidia.com/gpu` as its extended resource."""
    return any(c.name == GPU_CLASS and c.extended_resource_name == GPU_RESOURCE for c in plan.device_classes)


@rule("dra-extended-resources-off", "`cluster.draExtendedResources: false` needs a `gpu.nvidia.com` DeviceClass "
      "without `extendedResourceName` (the NVIDIA DRA chart has no switch for it)",
      modes=("karpenter", "managed-node-groups"))
def _dra_extended_resources_off(plan: Plan) -> Iterator[Verdict]:
    """dra-driver-nvidia-gpu v0.4.1 renders `extendedResourceName: nvidia.com/gpu` on its `gpu.nvidia.com` class
    whenever it renders `resource.k8s.io/v1` (`templates/deviceclass-gpu.yaml` l.12-14; `values.yaml` has no
    other knob), and v1 is the DRA API a 1.34+ cluster serves without opt-in (the beta versions need
    `--runtime-config`, which EKS does not expose; Kubernetes blog "v1.34: DRA has graduated to GA")."""
    if plan.spec.cluster.dra_extended_resources is False and _gpu_class_serves(plan):
        yield error(CHOICE, "the stack says plugin-style Pods must not be served through DRA, but the NVIDIA DRA "
                    "chart's gpu.nvidia.com DeviceClass names nvidia.com/gpu as its extended resource whenever it "
                    "renders resource.k8s.io/v1, and the chart has no value to leave it out",
                    f"set {CHOICE}: true and keep plugin-style Pods off the DRA pools with a nodeSelector on "
                    f"{manager_label('nvidia')}: device-plugin")


@rule("dra-extended-resources", "plugin-style `nvidia.com/gpu` Pods can be served through DRA on DRA pools: say "
      "whether that is meant where both kinds of pool exist (warning)")
def _dra_extended_resources(plan: Plan) -> Iterator[Verdict]:
    """From Kubernetes 1.36 the scheduler may allocate a `nvidia.com/gpu` request through DRA on a node without
    the device plugin when a DeviceClass names that extended resource (KEP-5004). With plugin pools beside
    DRA pools, a Pod meant for the plugin pools (same taint, same request) can land on, and use up, a DRA
    pool's GPUs. Karpenter and Auto Mode do not launch DRA nodes for such Pods, but the scheduler uses the
    free GPUs of DRA nodes that exist."""
    if (plan.spec.cluster.dra_extended_resources is not None or plan.spec.cluster.kubernetes
            < EXTENDED_RESOURCE_KUBERNETES or not _gpu_class_serves(plan)):
        return
    dra = sorted(p.name for p in plan.pools.values() if p.manager("nvidia") == "dra")
    plugin = sorted(p.name for p in plan.pools.values() if p.serves("nvidia", "device-plugin"))
    if not dra or not plugin:
        return
    label = eks_manager_label("nvidia") if plan.mode == "auto-mode" else manager_label("nvidia")
    off = f", or {CHOICE}: false to keep them off DRA nodes" if plan.mode == "auto-mode" else ""
    yield warning(CHOICE, f"Pods asking for {GPU_RESOURCE} (meant for pools {', '.join(plugin)}) can also be served "
                  f"through DRA on pools {', '.join(dra)}: their gpu.nvidia.com DeviceClass names {GPU_RESOURCE} "
                  f"as its extended resource (DRAExtendedResource, on from Kubernetes 1.36)",
                  f"give plugin-style Pods a nodeSelector on {label}: device-plugin, and state the choice: "
                  f"{CHOICE}: true to let them use DRA pools{off}")
