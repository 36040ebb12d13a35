"""Capacity checks: the capacity reservations and capacity blocks a reserved pool names exist, are
active or scheduled, hold the pool's instance type in one of its zones, and cover its static replicas."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from eks_devices.core.model import PoolPlan
from eks_devices.core.names import POOL_LABEL
from eks_devices.core.vocabulary import reserves
from eks_devices.preflight.model import CheckResult, Context

CAPACITY = "capacity.reservations"
USABLE = frozenset({"active", "scheduled"})  # scheduled: usable once it starts, which fails the check until then
WAITING = frozenset({"pending", "payment-pending", "assessing", "delayed"})


def capacity(ctx: Context) -> list[CheckResult]:
    pools = [p for p in ctx.plan.pools.values() if reserves(p.capacity)]
    if not pools:
        return [CheckResult(CAPACITY, "node pools", "pass", "no pool draws on reserved capacity")]
    results: list[CheckResult] = []
    for pool in pools:
        total = 0
        for rid in pool.config.capacity_reservation_ids:
            result, count = _reservation(ctx, pool, rid)
            results.append(result)
            total += count
        if pool.provisioning == "static" and pool.replicas:
            results.append(_coverage(pool, total))
    return results


def _reservation(ctx: Context, pool: PoolPlan, rid: str) -> tuple[CheckResult, int]:
    """The verdict on one reservation, and how many instances it contributes (0 unless usable)."""
    subject = f"pool {pool.name} / {rid}"
    found = ctx.aws.capacity_reservation(rid)
    if found is None:
        return CheckResult(CAPACITY, subject, "fail",
                           f"{rid} does not exist in {ctx.region} (or is not shared with this account)",
                           "correct nodePools.*.capacityReservationIds, or purchase the reservation / capacity "
                           "block in this region"), 0
    problems = _problems(ctx, pool, found)
    if problems:
        return CheckResult(CAPACITY, subject, "fail", "; ".join(d for d, _ in problems),
                           "; ".join(f for _, f in problems)), 0
    state = found.get("State")
    summary = _describe(found)
    start = found.get("StartDate")
    if state == "scheduled" or (isinstance(start, datetime) and start > datetime.now(UTC)):
        return CheckResult(CAPACITY, subject, "fail",
                           f"{summary}; it starts {start or 'later'}: no node can launch on it before then, so "
                           "pulumi up would wait on the pool until it fails",
                           "run pulumi up once the block has started (or pick one that is active now)"), 0
    available = found.get("AvailableInstanceCount")
    if isinstance(available, int) and available == 0 and not _serves_this_stack(ctx, pool):
        return CheckResult(CAPACITY, subject, "fail",
                           f"{summary}; every instance is in use, and no node group of this stack runs on it",
                           "free instances of the reservation (stop what runs on it) or name another one"), 0
    if state in WAITING:
        return CheckResult(CAPACITY, subject, "warn", f"{summary}; nodes can launch once it is active",
                           "wait for the reservation to become active (or scheduled) before pulumi up"), 0
    return CheckResult(CAPACITY, subject, "pass", summary), int(found.get("TotalInstanceCount") or 0)


def _serves_this_stack(ctx: Context, pool: PoolPlan) -> bool:
    """Whether the stack's cluster exists with the pool's nodes on it (its own nodes may be what
    holds the reservation's instances): a node group or a NodePool of the pool, as EKS lists them."""
    cluster = ctx.aws.cluster(ctx.spec.cluster.name)
    if cluster is None:
        return False
    if ctx.plan.mode != "managed-node-groups":
        return True  # Karpenter / Auto Mode nodes are not visible to EKS APIs: assume they hold it
    return any((g.get("labels") or {}).get(POOL_LABEL) == pool.name for g in ctx.aws.nodegroups(str(cluster["name"])))


def _describe(found: dict[str, Any]) -> str:
    text = (f"{found.get('State')}: {found.get('TotalInstanceCount')} x {found.get('InstanceType')} in "
            f"{found.get('AvailabilityZone')} ({found.get('AvailableInstanceCount')} free now)")
    if found.get("EndDate"):
        text += f", ends {found['EndDate']}"
    return text


def _problems(ctx: Context, pool: PoolPlan, found: dict[str, Any]) -> list[tuple[str, str]]:
    """(detail, fix) for each way a reservation cannot serve the pool."""
    problems = []
    state = found.get("State")
    if state not in USABLE | WAITING:
        problems.append((f"it is {state}", "use a reservation that is active or scheduled"))
    itype = found.get("InstanceType")
    if itype not in pool.instance_types:
        problems.append((f"it reserves {itype}, but the pool runs {', '.join(pool.instance_types)}",
                         f"set the pool's instanceTypes to [{itype}] or name a reservation for its type"))
    zone = found.get("AvailabilityZone")
    where = ctx.pool_zones(pool)
    if zone not in where.zones:
        problems.append((f"it is in {zone}, outside the pool's zones {', '.join(where.zones) or 'none'} "
                         f"({where.source})", f"pin the pool to {zone} (availabilityZone) and give it a subnet there"))
    kind = found.get("ReservationType")
    if kind and (kind == "capacity-block") != (pool.capacity == "capacity-block"):
        problems.append((f"it is a {kind} reservation but the pool says capacity: {pool.capacity}",
                         "set capacity: capacity-block for capacity blocks and capacity: reserved for on-demand "
                         "capacity reservations"))
    return problems


def _coverage(pool: PoolPlan, total: int) -> CheckResult:
    subject = f"pool {pool.name}"
    if total < (pool.replicas or 0):
        return CheckResult(CAPACITY, subject, "fail",
                           f"the usable reservations hold {total} instance(s); the static pool wants {pool.replicas}",
                           "lower replicas or add reservations / a larger capacity block")
    return CheckResult(CAPACITY, subject, "pass",
                       f"the usable reservations hold {total} instance(s), covering {pool.replicas} replicas")
