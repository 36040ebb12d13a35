"""EFA rules: interface layouts, subnets, topology alignment."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from eks_devices.core.knowledge import catalog
from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, at, dra_pools, error, pool_types, rule, warning


@rule("efa-interfaces-dynamic-aligned", "dynamic + static interface layout + aligned EFA is undefined")
def _efa_interfaces_dynamic_aligned(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        if (pool.provisioning == "dynamic" and pool.config.efa.network_interfaces is not None
                and pool.config.efa.align_with != "none"):
            yield error(at(pool, "efa.networkInterfaces"),
                        "dynamic provisioning with a static network-interface layout and topology-aligned "
                        "EFA is undefined: nodes launch but aligned pods stay Pending",
                        "remove efa.networkInterfaces (an EFA on every card is assumed), or make the pool static")


def efa_shortfall(interface_types: Iterable[str], types: Iterable[catalog.InstanceType]) -> tuple[int, int] | None:
    """(EFA interfaces in a layout, the most the instance types support) when the layout has fewer: the
    scheduler's DRA metadata assumes an EFA on every card (shared with the policy pack)."""
    efas = sum(1 for t in interface_types if t in ("efa", "efa-only"))
    most = max((t.max_efa_interfaces for t in types), default=0)
    return (efas, most) if efas < most else None


@rule("efa-partial-interfaces", "dynamic EFA DRA pools should have an EFA on every card (warning)")
def _efa_partial_interfaces(plan: Plan) -> Iterator[Verdict]:
    for pool, _ in dra_pools(plan, ("efa",)):
        layout = pool.config.efa.network_interfaces
        if pool.provisioning != "dynamic" or layout is None:
            continue
        shortfall = efa_shortfall([n.interface_type for n in layout], pool_types(pool))
        if shortfall:
            efas, most = shortfall
            yield warning(at(pool, "efa.networkInterfaces"),
                          f"the layout has {efas} EFA interface(s) but the instance types support up to {most}; "
                          "the scheduler assumes all of them and can launch nodes that cannot satisfy claims",
                          "remove efa.networkInterfaces, or make the pool static")


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
        align = pool.config.efa.align_with
        if align == "none":
            continue
        other = "nvidia" if align == "gpu" else "neuron"
        # inferred: Auto Mode launches a DRA node for both families for the Pods of an aligned claim
        wrong = [f"{f} is {pool.manager(f)}" for f in ("efa", other) if not pool.serves(f, "dra")]  # type: ignore[arg-type]
        if wrong:
            yield error(at(pool, "efa.alignWith"),
                        f"topology-aligned EFA with {align} needs DRA for both, but {' and '.join(wrong)} "
                        "(the EFA device plugin publishes no PCIe topology)",
                        f"set devices.efa and devices.{other} to dra (or auto on a version that supports it)")


@rule("placement-group-with-reservation", "no auto-created placement group on reserved / capacity-block EFA pools "
      "(warning)")
def _placement_group_with_reservation(plan: Plan) -> Iterator[Verdict]:
    for pool in plan.pools.values():
        reserved = pool.capacity in ("reserved", "capacity-block")
        if reserved and pool.manager("efa") != "none" and pool.config.placement_group:
            yield warning(at(pool, "placementGroup"),
                          f"a {pool.capacity} pool with an auto-created cluster placement group can hit "
                          "insufficient-capacity errors: the reservation already places its instances",
                          "set placementGroup: false on this pool")
