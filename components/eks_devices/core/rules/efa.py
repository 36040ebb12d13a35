"""EFA rules: instance types with EFA, interface layouts, subnets, topology alignment, unshared claims."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from eks_devices.core.derive import shape_scope
from eks_devices.core.derive.pools import efa_layouts
from eks_devices.core.derive.resources import Facts
from eks_devices.core.families import DESCRIPTORS, EFA, FAMILY, NVIDIA
from eks_devices.core.knowledge import catalog, devices
from eks_devices.core.knowledge.device_classes import EFA_CLASS
from eks_devices.core.manifests.nodes import uses_placement_group
from eks_devices.core.model import Plan, PoolPlan
from eks_devices.core.rules.registry import (
    Blame,
    Verdict,
    at,
    claim_at,
    dra_fix,
    dra_pools,
    error,
    on_resources,
    pool_types,
    rule,
    stack_claims,
    warning,
)
from eks_devices.core.values import dig
from eks_devices.core.vocabulary import EFA_INTERFACE, EFA_ONLY, reserves


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


@rule("efa-interfaces-dynamic-aligned", "dynamic + static interface layout + aligned EFA is undefined")
def _efa_interfaces_dynamic_aligned(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if (pool.provisioning == "dynamic" and pool.config.fabric.network_interfaces is not None
                and pool.config.fabric.align_with != "none"):
            yield error(at(pool, "efa.networkInterfaces"),
                        "dynamic provisioning with a static network-interface layout and topology-aligned "
                        "EFA is undefined: nodes launch but aligned pods stay Pending",
                        "remove efa.networkInterfaces (an EFA on every card is assumed), or make the pool static")


def efa_shortfall(interface_types: Iterable[str], types: Iterable[catalog.InstanceType]) -> tuple[int, int] | None:
    """(EFA interfaces in a layout, the most the instance types support) when the layout has fewer: the
    scheduler's DRA metadata assumes an EFA on every card."""
    efas = sum(1 for t in interface_types if t in (EFA_INTERFACE, EFA_ONLY))
    most = max((t.max_efa_interfaces for t in types), default=0)
    return (efas, most) if efas < most else None


@rule("efa-partial-interfaces", "dynamic EFA DRA pools should have an EFA on every card (warning)")
def _efa_partial_interfaces(plan: Plan) -> Iterator[Verdict]:
    for pool, _ in dra_pools(plan, ("efa",)):
        layout = pool.config.fabric.network_interfaces
        if pool.provisioning != "dynamic" or layout is None:
            continue
        shortfall = efa_shortfall([n.interface_type for n in layout], pool_types(pool))
        if shortfall:
            efas, most = shortfall
            yield warning(at(pool, "efa.networkInterfaces"),
                          f"the layout has {efas} EFA interface(s) but the instance types support up to {most}; "
                          "the scheduler assumes all of them and can launch nodes that cannot satisfy claims",
                          "remove efa.networkInterfaces, or make the pool static")


@on_resources("efa-partial-interfaces", "warning")
def _efa_partial_interfaces_resources(facts: Facts) -> Iterator[Blame]:
    for shape in facts.shapes:
        if shape.provisioning != "dynamic" or shape.interface_types is None:
            continue
        if not any(r.family == "efa" and r.manager in ("dra", "inferred")
                   for t in shape.instance_types for r in shape_scope.running(shape, facts.installers, t)):
            continue
        shortfall = efa_shortfall(shape.interface_types, [catalog.instance_types()[t] for t in shape.instance_types])
        if shortfall:
            efas, most = shortfall
            yield Blame(shape.urn, f"{shape.source} {shape.name}: its NodeClass lists {efas} EFA interface(s) but "
                        f"the instance types support up to {most}; the scheduler assumes all of them and can launch "
                        "nodes that cannot satisfy claims. Remove the interface list, or make the pool static")


@rule("efa-static-layout-uniform", "a static EFA pool's instance types share one EFA interface layout")
def _efa_static_layout_uniform(plan: Plan) -> Iterator[Verdict]:
    """A static pool lists one interface layout on its NodeClass or launch template. Karpenter leaves out
    the types a layout does not fit (v1.14.1 `pkg/providers/instancetype/compatibility/compatibility.go`),
    and a type with more EFA-capable cards than the layout names launches with fewer EFAs than it has."""
    for pool in plan.pools.values():
        if (pool.provisioning != "static" or pool.manager("efa") == "none"
                or pool.config.fabric.network_interfaces is not None):
            continue
        groups = efa_layouts(pool_types(pool))
        if len(groups) > 1:
            listing = "; ".join(f"{', '.join(names)}: {sum(t != 'interface' for *_, t in key)} EFA interface(s)"
                                for key, names in groups.items())
            yield error(at(pool, "instanceTypes"),
                        f"the pool is static, so the toolkit lists one EFA interface layout for all its nodes, but "
                        f"its instance types need different ones ({listing}): some would launch with fewer EFAs "
                        "than they have, or not at all",
                        "list only instance types with the same EFA network cards in instanceTypes (one pool per "
                        "layout), or set efa.networkInterfaces to a layout every type of the pool has")


@rule("efa-private-subnets", "EFA pools need private subnets with a NAT route")
def _efa_private_subnets(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if pool.manager("efa") == "none":
            continue
        if pool.config.subnets == "public":
            yield error(at(pool, "subnets"),
                        "multi-interface EFA nodes get no public IP: on a public subnet they join but "
                        "cannot pull images", "set subnets: private")
        elif not plan.spec.network.has_nat:
            yield error("network.natGateways",
                        f"EFA pool {pool.name} runs on private subnets with no NAT route",
                        "set network.natGateways to one-per-az or single")


@rule("topology-alignment-needs-dra", "aligned GPU/Neuron + EFA needs DRA for both families")
def _topology_alignment_needs_dra(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        align = pool.config.fabric.align_with
        if align == "none":
            continue
        other = ALIGNED[align]
        # inferred: Auto Mode launches a DRA node for both families for the Pods of an aligned claim
        wrong = [f for f in ("efa", other) if not pool.serves(f, "dra")]  # type: ignore[arg-type]
        if wrong:
            yield error(at(pool, "efa.alignWith"),
                        f"topology-aligned EFA with {align} needs DRA for both device types: {ALIGNMENT_WHY}; "
                        f"here {not_dra(pool, wrong)}", alignment_fix(plan, pool, other, "remove efa.alignWith"))


@rule("efa-alignment-shared-root", "a pool aligning EFA with GPUs runs instance types where a GPU shares a PCIe root "
      "with an EFA")
def _efa_alignment_shared_root(plan: Plan) -> Iterator[Verdict]:
    """What the NVIDIA DRA driver and DRANET publish on running instances (Karpenter's scraped DRA metadata,
    `device_layouts`): on g6 and g6e no GPU shares a PCIe root with an EFA, so a claim aligning the two on
    `resource.kubernetes.io/pcieRoot` never fits there. Types whose layout is only modelled are not judged."""
    for pool in plan.pools.values():
        if pool.config.fabric.align_with != NVIDIA.efa_alignment:
            continue
        apart = [t.name for t in pool_types(pool) if t.has_nvidia and t.has_efa and devices.topology_published(t.name)
                 and not any(gpus and efas for _, gpus, efas in devices.gpu_efa_roots(t))]
        if apart:
            yield error(at(pool, "instanceTypes"),
                        f"no GPU of {', '.join(apart)} shares a PCIe root with an EFA (the devices the NVIDIA DRA "
                        "driver and DRANET publish on running instances, as Karpenter found them), so a claim "
                        "aligning GPUs with EFAs never fits there and its Pods stay Pending",
                        "remove them from this pool's instanceTypes (p4d, p5, p5e, p5en and p6 types pair GPUs "
                        "with EFAs on a root), or remove efa.alignWith")


# The family whose devices each `alignWith` word aligns with EFA (the first, GPUs, is the claims' default).
ALIGNED = {d.efa_alignment: d.name for d in DESCRIPTORS if d.efa_alignment}
# EKS user guide, "Manage hardware devices on Amazon EKS" (How EKS Auto Mode keeps DRA and device plugins apart).
ALIGNMENT_WHY = ("the alignment matches topology attributes, a PCIe root or a Neuron device group, that only DRA "
                 "drivers publish (the EFA device plugin publishes none)")


def not_dra(pool: PoolPlan, families: Iterable[str]) -> str:
    """'efa is device-plugin (aws-dranet needs Kubernetes 1.35 ...)': each family's manager and why."""
    out = []
    for family in families:
        res = pool.managers[family]  # type: ignore[index]
        why = f" because {res.reason}" if res.requested == "auto" else " as the stack sets it"
        out.append(f"{family} is {res.manager}{why}")
    return "; ".join(out)


def alignment_fix(plan: Plan, pool: PoolPlan, other: str, drop: str) -> str:
    """A fix that can be applied: DRA where the pool can have it, else what can (`drop`: removing the alignment)."""
    title = FAMILY[other].title  # type: ignore[index]
    if plan.mode == "auto-mode" and not FAMILY[other].auto_mode_dra:  # type: ignore[index]
        return (f"{drop}: Auto Mode runs {title} on the device plugin only (aligned {title} + EFA needs "
                "a static Karpenter pool or a managed node group)")
    return f"{dra_fix(plan, pool, ('efa', other))}; or {drop}"


@rule("placement-group-with-reservation", "no auto-created placement group on reserved / capacity-block EFA pools "
      "(warning)")
def _placement_group_with_reservation(plan: Plan) -> Iterator[Verdict]:
    """Only pools that really get a group (`uses_placement_group`): a Karpenter or Auto Mode pool
    without `availabilityZone` spans zones and gets none, so there is nothing to turn off."""
    for pool in plan.pools.values():
        if reserves(pool.capacity) and uses_placement_group(plan.mode, pool):
            yield warning(at(pool, "placementGroup"),
                          f"a {pool.capacity} pool with an auto-created cluster placement group can hit "
                          "insufficient-capacity errors: the reservation already places its instances",
                          "set placementGroup: false on this pool")


@rule("efa-not-shareable", "no shared ResourceClaim with EFA devices (one Pod per EFA)")
def _efa_not_shareable(plan: Plan) -> Iterator[Verdict]:
    for claim in stack_claims(plan):
        if claim.shared and "efa" in claim.families:
            yield error(claim_at(claim, "kind"),
                        "a shared ResourceClaim includes EFA devices, but an EFA is allocated to one Pod at a "
                        "time: the second Pod naming the claim never starts",
                        "use kind: template (one claim per Pod), or move the EFA request to its own template")


@on_resources("efa-not-shareable")
def _efa_not_shareable_resources(facts: Facts) -> Iterator[Blame]:
    """ResourceClaims (shared by every Pod naming them) that request the upstream EFA class or a program's
    own class selecting DRANET's EFA devices."""
    efa = {EFA_CLASS} | {str(dig(c.props, "metadata.name")) for c in facts.device_classes if _selects_efa(c.props)}
    for claim in facts.claims:
        requests = [r for r in dig(claim.props, "spec.devices.requests") or [] if isinstance(r, dict)]
        if any(c in efa for r in requests for c in _request_classes(r)):
            yield Blame(claim.urn, f"ResourceClaim {dig(claim.props, 'metadata.name') or claim.name} includes EFA "
                        "devices, but an EFA is allocated to one Pod at a time: the second Pod naming the claim "
                        "never starts. Use a ResourceClaimTemplate (one claim per Pod)")


def _selects_efa(device_class: dict[str, Any]) -> bool:
    cel = " ".join(str(dig(s, "cel.expression") or "") for s in dig(device_class, "spec.selectors") or [])
    return EFA.dra_driver in cel and "efa" in cel.lower()


def _request_classes(request: dict[str, Any]) -> list[str]:
    """A request's DeviceClass names: `exactly` (v1), the flat form (v1beta1), each `firstAvailable`."""
    found = [request.get("deviceClassName"), dig(request, "exactly.deviceClassName")]
    found += [s.get("deviceClassName") for s in request.get("firstAvailable") or [] if isinstance(s, dict)]
    return [str(c) for c in found if c]
