"""Check results and the context every check reads: the plan, the account, and where pools land."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from eks_devices.core.config.stack import Spec
from eks_devices.core.config.subnets import pick_zones
from eks_devices.core.model import Plan, PoolPlan
from eks_devices.preflight.aws import AwsReader

Status = Literal["pass", "warn", "fail", "not-run"]
STATUSES: tuple[Status, ...] = ("pass", "warn", "fail", "not-run")


@dataclass(frozen=True)
class CheckResult:
    """One verdict: which check, about what (a pool, subnet, reservation…), and the fix.

    `iam_action` is set when the check did not run because the caller lacks that action; `blocked`
    when it did not run because a call was denied or failed (the exit code says so)."""

    check: str
    subject: str
    status: Status
    detail: str
    fix: str = ""
    iam_action: str | None = None
    blocked: bool = False  # not run because a call was denied or failed (not: nothing to check)

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.check, "subject": self.subject, "status": self.status, "detail": self.detail,
                "fix": self.fix, "iamAction": self.iam_action, "blocked": self.blocked}


@dataclass(frozen=True)
class PoolZones:
    """The availability zones a pool's nodes can land in, and how that was learnt."""

    zones: tuple[str, ...]
    source: str


@dataclass
class Context:
    """What the checks share: the plan, the account reader, and memoised answers about pools."""

    plan: Plan
    aws: AwsReader
    _zones: dict[str, PoolZones] = field(default_factory=dict)

    @property
    def spec(self) -> Spec:
        return self.plan.spec

    @property
    def region(self) -> str:
        return self.aws.region

    @property
    def brings_vpc(self) -> bool:
        return self.plan.spec.network.vpc_id is not None

    def pool_subnet_ids(self, pool: PoolPlan) -> tuple[str, ...]:
        """The brought subnets a pool draws on (its private or public list), before zone pinning."""
        network = self.plan.spec.network
        ids = network.public_subnet_ids if pool.config.subnets == "public" else network.private_subnet_ids
        return tuple(ids)

    def pool_subnets(self, pool: PoolPlan) -> list[dict[str, Any]]:
        """The existing brought subnets a pool can use: its list, in the brought VPC, in its pinned zone."""
        found = self.aws.subnets(self.pool_subnet_ids(pool))
        pinned = pool.config.availability_zone
        return [s for s in found.values()
                if s.get("VpcId") == self.plan.spec.network.vpc_id
                and (pinned is None or s.get("AvailabilityZone") == pinned)]

    def pool_zones(self, pool: PoolPlan) -> PoolZones:
        """Where a pool's nodes can land: its subnets' zones (brought VPC), its pinned zone, the
        configured zone list, or the region's first N zones (a stack-created VPC with a count)."""
        if pool.name not in self._zones:
            self._zones[pool.name] = self._pool_zones(pool)
        return self._zones[pool.name]

    def _pool_zones(self, pool: PoolPlan) -> PoolZones:
        network = self.plan.spec.network
        if self.brings_vpc:
            zones = sorted({s["AvailabilityZone"] for s in self.pool_subnets(pool)})
            kind = "public" if pool.config.subnets == "public" else "private"
            where = f" in {pool.config.availability_zone}" if pool.config.availability_zone else ""
            return PoolZones(tuple(zones), f"the zones of its {kind} subnets{where}")
        if pool.config.availability_zone:
            return PoolZones((pool.config.availability_zone,), "nodePools.*.availabilityZone")
        if isinstance(network.availability_zones, list):
            return PoolZones(tuple(network.availability_zones), "network.availabilityZones")
        count = network.availability_zones
        pinned = list(self.plan.spec.pinned_zones)
        zones = pick_zones(self.aws.zones(), pinned, count)
        source = f"{count} zones: the pinned ones first, then the region's in name order" if pinned else \
            f"the region's first {count} availability zones"
        return PoolZones(tuple(zones), source)
