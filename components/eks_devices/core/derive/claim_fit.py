"""Claims against pools: each declared claim built, and checked on every pool it targets.

The pool-level half of the fit check (the node-level allocator is `eks_devices.core.derive.fit`): a pool whose
manager for a claimed family is not DRA cannot serve a DRA claim at all; otherwise every instance
type the pool allows is tried with the devices its DRA drivers would publish. Extended-resource
claims are counted against the hardware on device-plugin pools, and on DRA pools served only by a
DeviceClass with that `extendedResourceName`. A failure is settled unless the search gave up or
it depends only on a modelled device layout.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eks_devices.core.config.claims import EXTENDED_RESOURCES
from eks_devices.core.config.stack import FAMILIES, Family, Spec
from eks_devices.core.derive import claims
from eks_devices.core.derive.fit import describe, fit_node, walk
from eks_devices.core.families import FAMILY
from eks_devices.core.knowledge import catalog, versions
from eks_devices.core.knowledge.device_classes import EXTENDED_RESOURCE_KUBERNETES
from eks_devices.core.knowledge.devices import SIMULATED, Device, inventory
from eks_devices.core.model import ClaimPlan, DeviceClassPlan, NodeFit, PoolFit, PoolPlan
from eks_devices.core.names import CONSUMABLE_CAPACITY_ANNOTATION, manager_label


def _blocked(pool: PoolPlan, families: Sequence[Family], manager: str = "dra") -> str:
    for family in families:
        actual = pool.manager(family)
        if actual == "none":
            return f"pool {pool.name} has no {family} devices ({', '.join(pool.instance_types)})"
        if not pool.serves(family, manager):
            return (f"pool {pool.name} runs the {family} {actual}, so no DRA driver publishes its devices "
                    f"there (devices.{family} is {actual})")
    return ""


def consumable_shares(pool: PoolPlan) -> int | None:
    """The GPU shares the pool's EC2NodeClass gives each GPU (Karpenter's consumable-capacity annotation)."""
    shares = pool.node_class_annotations.get(CONSUMABLE_CAPACITY_ANNOTATION)
    return int(shares) if shares and shares.isdigit() else None


def _node_kwargs(pool: PoolPlan, kubernetes: tuple[int, int]) -> dict[str, Any]:
    """What shapes a node's devices: MIG, consumable GPU shares (only where the cluster's API server keeps a
    device's `allowMultipleAllocations`: DRAConsumableCapacity), ComputeDomains, EFA interfaces."""
    sharing = pool.config.gpu_sharing
    consumable = kubernetes >= versions.CONSUMABLE_CAPACITY_KUBERNETES
    return {"mig_profile": sharing.profile if sharing.strategy == "mig" else None,
            "gpu_shares": consumable_shares(pool) if consumable else None,
            "compute_domains": pool.config.compute_domains,
            "efa_interfaces": efa_interfaces(pool)}


def node_devices(pool: PoolPlan, instance_type: str, kubernetes: tuple[int, int]) -> tuple[Device, ...]:
    """The devices the pool's DRA drivers publish on one node of `instance_type`, as a cluster of Kubernetes
    `kubernetes` stores them (what the fit check allocates)."""
    dra = tuple(f for f in FAMILIES if pool.serves(f, "dra"))  # inferred: Auto Mode launches a DRA node
    return inventory(instance_type, dra, **_node_kwargs(pool, kubernetes))


def efa_interfaces(pool: PoolPlan) -> int | None:
    """The EFA interfaces a node of the pool really gets: those of its layout (configured, or
    generated for a static pool: the same on every type the pool may launch, or refused), else
    None, meaning one on every EFA-capable card (what Karpenter and Auto Mode attach on dynamic
    pools for the pods that request EFA)."""
    layout = pool.network_interfaces
    return None if layout is None else sum(n["interfaceType"] != "interface" for n in layout)


def _not_launched(instance_type: str) -> NodeFit | None:
    """On a pool where Auto Mode infers the manager, it launches a DRA node only of a type it has DRA device
    metadata for (EKS user guide: g7e is not supported); other types serve device-plugin Pods only."""
    if catalog.instance_types()[instance_type].auto_mode_dra_metadata:
        return None
    return NodeFit(instance_type, 0, f"Auto Mode has no DRA device metadata for {instance_type}: it launches "
                   "it for device-plugin Pods only", "no-devices")


def fit_pool(built: claims.BuiltClaim, pool: PoolPlan, classes: Mapping[str, Sequence[str]],
             kubernetes: tuple[int, int]) -> PoolFit:
    """The claim on every instance type of the pool, with the devices its DRA drivers publish on a cluster of
    Kubernetes `kubernetes`."""
    blocked = _blocked(pool, built.families)
    if blocked:
        return PoolFit(pool.name, (), f"does not fit: {blocked}", blocked)
    unmodelled = [FAMILY[f].title for f in built.families if f not in SIMULATED]
    if unmodelled:  # a family another distribution adds: what its driver publishes is not simulated
        nodes = tuple(NodeFit(t, 0, f"what the {' and '.join(unmodelled)} DRA driver publishes is not modelled",
                              "undetermined") for t in pool.instance_types)
        return PoolFit(pool.name, nodes, describe(nodes, built.shared))
    inferred = any(pool.manager(f) == "inferred" for f in built.families)
    nodes = tuple((inferred and _not_launched(t))
                  or fit_node(built.devices, classes, node_devices(pool, t, kubernetes), t, built.shared)
                  for t in pool.instance_types)
    return PoolFit(pool.name, nodes, describe(nodes, built.shared))


def _hardware(itype: catalog.InstanceType, family: Family, pool: PoolPlan) -> int:
    """The devices of a family one node of the type offers its device plugin (interfaces as the pool attaches them)."""
    have = itype.count(family)
    attached = efa_interfaces(pool) if FAMILY[family].interfaces else None
    return have if attached is None else min(have, attached)


def fit_extended(resources: Mapping[str, int], pool: PoolPlan, device_classes: Sequence[DeviceClassPlan],
                 kubernetes: tuple[int, int], served: bool = True) -> PoolFit:
    """Extended resources: counted against the hardware on device-plugin pools; on DRA pools only a
    DeviceClass with that `extendedResourceName` serves them (DRAExtendedResource, on from 1.36), and only
    when the stack chose it (`served`: cluster.draExtendedResources)."""
    per_type: dict[str, list[NodeFit]] = {t: [] for t in pool.instance_types}
    classes = {c.name: [c.expression] for c in device_classes}
    for resource, count in sorted(resources.items()):
        family: Family = EXTENDED_RESOURCES[resource]  # type: ignore[assignment]
        manager = pool.manager(family)
        if manager == "inferred":  # Auto Mode launches a device-plugin node for a plugin-style Pod
            manager = "device-plugin"
        if manager == "none":
            blocked = _blocked(pool, [family])
            return PoolFit(pool.name, (), f"does not fit: {blocked}", blocked)
        serving = [c for c in device_classes if c.extended_resource_name == resource]
        if manager == "dra" and (not serving or kubernetes < EXTENDED_RESOURCE_KUBERNETES or not served):
            why = ("cluster.draExtendedResources is false" if not served else "the cluster is below 1.36"
                   if kubernetes < EXTENDED_RESOURCE_KUBERNETES else f"no DeviceClass names {resource}")
            blocked = (f"pool {pool.name} runs the {family} DRA driver: {resource} is served there only through a "
                       f"DeviceClass with extendedResourceName on Kubernetes 1.36+ ({why})")
            return PoolFit(pool.name, (), f"does not fit: {blocked}", blocked)
        for t in pool.instance_types:
            if manager == "dra":
                request = {"requests": [claims.exact("extended", serving[0].name, count)]}
                per_type[t].append(fit_node(request, classes, node_devices(pool, t, kubernetes), t))
                continue
            have = _hardware(catalog.instance_types()[t], family, pool)
            sharing = pool.config.gpu_sharing
            if FAMILY[family].pool_sharing and sharing.strategy == "time-slicing" and sharing.replicas:
                have *= sharing.replicas
            per_type[t].append(NodeFit(t, have // count, "" if have >= count else
                                       f"{t} offers {have} {resource}, the request needs {count}", "too-few"))
    nodes = tuple(min(fits, key=lambda f: f.per_node) for fits in per_type.values())
    return PoolFit(pool.name, nodes, describe(nodes))


def _dra_selector(built: claims.BuiltClaim, targets: Sequence[PoolPlan]) -> dict[str, str]:
    """The claim's nodeSelector (`eks-devices.io/device-manager-<family>: dra`), without the families a
    target pool leaves to Auto Mode: those nodes carry no such label, and a DRA Pod needs none there (Auto
    Mode launches a DRA node for it; a device-plugin node publishes no devices it could be allocated)."""
    inferred = {manager_label(f) for p in targets for f in built.families if p.manager(f) == "inferred"}
    return {k: v for k, v in built.node_selector.items() if k not in inferred}


def plan_claims(spec: Spec, pools: Mapping[str, PoolPlan],
                device_classes: Sequence[DeviceClassPlan]) -> tuple[ClaimPlan, ...]:
    """Build every declared claim and check it against each pool it targets."""
    drivers = {c.name: c.driver for c in device_classes}
    classes = {c.name: [c.expression] for c in device_classes}
    out = []
    for name, claim in sorted(spec.claims.items()):
        built = claims.from_config(name, claim, drivers)
        targets = [pools[p] for p in claim.pools if p in pools]
        if built is None:
            families = claims.extended_families(claim.extended_resources)
            fits = {p.name: fit_extended(claim.extended_resources, p, device_classes, spec.cluster.kubernetes,
                                         spec.cluster.serves_extended_resources) for p in targets}
            managers = {pools[p].manager(f) for p in claim.pools for f in families if p in pools}
            # one manager for every family on every target pool: Pods select it; otherwise no selector
            only = next(iter(managers)) if len(managers) == 1 and managers <= {"dra", "device-plugin"} else None
            selector = {claims.manager_label(f): only for f in families} if only else {}
            out.append(ClaimPlan(name, claim, None, families, selector, fits))
            continue
        missing = tuple(sorted({c for _, c in walk(built.devices["requests"]) if c not in classes}))
        fits = {p.name: fit_pool(built, p, classes, spec.cluster.kubernetes) for p in targets}
        out.append(ClaimPlan(name, claim, built, built.families, _dra_selector(built, targets), fits, missing))
    return tuple(out)
