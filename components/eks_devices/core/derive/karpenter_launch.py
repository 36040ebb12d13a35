"""What Karpenter's provisioning scheduler launches for a claim's Pod on a dynamic NodePool.

Karpenter 1.15 simulates a pending Pod's ResourceClaims against the devices its AWS provider says an
instance type will publish (the metadata of the release the stack runs, `karpenter_metadata`), before any
node exists (sigs.k8s.io/karpenter v1.15.0
`pkg/controllers/provisioning/scheduling/scheduler.go` with its `dynamicresources` allocator): whole GPUs
(no MIG, no ComputeDomain channels), an EFA on every EFA-capable card, consumable GPU shares from the
EC2NodeClass annotation (a GPU with shares may serve several requests of one claim while they last, which
the scheduler on the node never does), and only for the drivers whose gate is on (karpenter-provider-aws v1.15.0
`pkg/cloudprovider/dynamicresources.go` `populateDynamicResources`, `pkg/providers/nvidiadra`,
`pkg/providers/efadra`). The chart turns its values into those gates (`charts/karpenter/templates/
_helpers.tpl`, `karpenter.dra`). The node it then launches may publish other devices (a MIG layout, fewer
EFA interfaces): `claim_fit` judges that node; this module judges the launch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from eks_devices.core.derive.claim_fit import consumable_shares
from eks_devices.core.derive.fit import describe, fit_node
from eks_devices.core.derive.karpenter_gates import GATES, dra_gates
from eks_devices.core.knowledge import catalog, karpenter_metadata
from eks_devices.core.knowledge.devices import DRANET_DRIVER, PCIE_ROOT, Device, inventory
from eks_devices.core.knowledge.karpenter_metadata import Metadata
from eks_devices.core.model import UNSETTLED, ClaimPlan, NodeFit, Plan, PoolPlan


@dataclass(frozen=True)
class Launch:
    """A claim's Pod on one dynamic Karpenter pool: the instance types Karpenter may launch for it."""

    pool: str
    instance_types: tuple[str, ...]
    reason: str = ""  # why it launches none
    cause: str = ""  # ignored (no DRA gate) | selector (node labels) | refused (claim validation) | devices
    settled: bool = True  # False: a type failed where the model cannot stand behind it (`model.UNSETTLED`)

    @property
    def launches(self) -> bool:
        return bool(self.instance_types)


def ignores_dra(settings: Mapping[str, Any] | None) -> bool:
    """Whether Karpenter runs with ignoreDRARequests: the chart sets it unless a DRA gate is on, and it
    defaults to true (`karpenter.dra`: `and (not $anyGate) (ignoreDRARequests | default true)`)."""
    settings = settings or {}
    ignore = settings.get("ignoreDRARequests")
    return not dra_gates(dict(settings)) and (True if ignore is None else bool(ignore))


def as_described(device: Device, instance_type: str, metadata: Metadata) -> Device:
    """A device as the release's metadata describes it where its scrape differs from the node's layout: the
    GPUs' `memory` of that scrape, EFAs without the PCIe root, NUMA node and Neuron groups it did not record."""
    if device.driver == DRANET_DRIVER and device.name.startswith("efa") and metadata.bare_efas(
            catalog.instance_types()[instance_type]):
        kept = {k: v for k, v in device.attributes.items()
                if k not in (PCIE_ROOT, "dra.net/numaNode") and not k.startswith("resource.aws.com/devicegroup")}
        return replace(device, attributes=kept)
    memory = metadata.gpu_memory.get(instance_type)
    if memory is not None and "memory" in device.capacity:
        return replace(device, capacity={**device.capacity, "memory": memory})
    return device


def assumed_devices(pool: PoolPlan, instance_type: str, gated: set[str], metadata: Metadata) -> tuple[Device, ...]:
    """The devices Karpenter assumes one node of the type publishes: the release's metadata for the gated
    drivers only."""
    itype = catalog.instance_types()[instance_type]
    if not metadata.launchable(itype):
        return ()
    families = tuple(f for f in GATES if f in gated)
    shares = consumable_shares(pool) if "nvidia" in gated else None
    return tuple(as_described(d, instance_type, metadata) for d in inventory(itype, families, gpu_shares=shares))


def metadata_of(plan: Plan) -> Metadata:
    """The DRA device metadata of the Karpenter release the stack runs (the nearest known for another)."""
    return karpenter_metadata.for_version(plan.spec.cluster.karpenter.version)


def _selector_gap(claim: ClaimPlan, pool: PoolPlan) -> str:
    wrong = {k: v for k, v in claim.node_selector.items() if pool.labels.get(k) != v}
    if not wrong:
        return ""
    given = ", ".join(f"{k}: {pool.labels[k]}" if k in pool.labels else f"no {k}" for k in sorted(wrong))
    return (f"the claim's Pods select {', '.join(f'{k}: {v}' for k, v in sorted(wrong.items()))}, and pool "
            f"{pool.name}'s nodes carry {given}")


def _refused(claim: ClaimPlan) -> str:
    """What Karpenter's claim validation refuses before trying any instance type (sigs.k8s.io/karpenter
    v1.15.0 `pkg/scheduling/dynamicresources/request.go` ValidateClaimRequest)."""
    assert claim.built is not None
    distinct = [i for i, c in enumerate(claim.built.devices.get("constraints", [])) if "distinctAttribute" in c]
    if distinct:
        return (f"Karpenter 1.15 refuses a claim with a distinctAttribute constraint (constraints.{distinct[0]}): "
                "it launches no node for it")
    return ""


def launch(plan: Plan, claim: ClaimPlan, pool: PoolPlan) -> Launch | None:
    """What Karpenter launches on `pool` for one Pod of the DRA `claim`; None where it simulates nothing
    (not Karpenter, a static pool, an extended-resource claim)."""
    if plan.mode != "karpenter" or plan.karpenter is None or pool.provisioning != "dynamic" or claim.built is None:
        return None
    settings = plan.karpenter.values.get("settings")
    if ignores_dra(settings):
        return Launch(pool.name, (), "Karpenter runs with ignoreDRARequests (no DRA gate is on): it launches "
                      "no node for a Pod with ResourceClaims", "ignored")
    for cause, why in (("selector", _selector_gap(claim, pool)), ("refused", _refused(claim))):
        if why:
            return Launch(pool.name, (), why, cause)
    gated = dra_gates(settings)
    metadata = metadata_of(plan)
    classes = {c.name: [c.expression] for c in plan.device_classes}
    fits: list[NodeFit] = []
    for t in pool.instance_types:
        devices = assumed_devices(pool, t, gated, metadata)
        if not devices:
            why = (f"Karpenter {metadata.release} ships no DRA device metadata for it"
                   if not metadata.launchable(catalog.instance_types()[t]) else "no gated driver's metadata covers it")
            fits.append(NodeFit(t, 0, f"{t}: {why}", "no-devices"))
            continue
        fits.append(fit_node(claim.built.devices, classes, devices, t, claim.built.shared, reuse_shared=True))
    launched = tuple(f.instance_type for f in fits if f.fits)
    # a selector naming a PCIe root is judged against the names Karpenter scraped, which `device_layouts` keeps
    # for every type Karpenter has metadata for; a failure the model cannot stand behind leaves the launch open
    settled = not any(f.cause in UNSETTLED for f in fits if not f.fits)
    return Launch(pool.name, launched, "" if launched else describe(tuple(fits), claim.built.shared),
                  "" if launched else "devices", settled)


def launches(plan: Plan, claim: ClaimPlan) -> dict[str, Launch]:
    """The claim's launch on each dynamic Karpenter pool it targets."""
    out = {}
    for name in claim.config.pools:
        pool = plan.pools.get(name)
        found = launch(plan, claim, pool) if pool is not None else None
        if found is not None:
            out[name] = found
    return out

