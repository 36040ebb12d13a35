"""The rule registry: findings, the `@rule` decorator, and helpers the rule modules share."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from eks_devices.core.knowledge import catalog
from eks_devices.core.model import Finding, Plan, PoolPlan
from eks_devices.core.spec.stack import FAMILIES


@dataclass(frozen=True)
class Rule:
    slug: str
    summary: str
    check: Callable[[Plan], Iterable[Finding]]


RULES: dict[str, Rule] = {}


Check = Callable[[Plan], Iterable[Finding]]


def rule(slug: str, summary: str) -> Callable[[Check], Check]:
    """Register a check under a stable slug."""

    def register(check: Check) -> Check:
        RULES[slug] = Rule(slug, summary, check)
        return check
    return register


def evaluate(plan: Plan) -> list[Finding]:
    """Run every rule; findings sorted errors first, then by path, for stable output."""
    found = [f for r in RULES.values() for f in r.check(plan)]
    return sorted(found, key=lambda f: (f.severity != "error", f.path, f.slug))


def at(pool: PoolPlan, field: str) -> str:
    return f"nodePools.{pool.name}.{field}"


def dra_pools(plan: Plan, families: Iterable[str] = FAMILIES) -> Iterator[tuple[PoolPlan, str]]:
    for pool in plan.pools.values():
        for family in families:
            if pool.manager(family) == "dra":  # type: ignore[arg-type]
                yield pool, family


def refused_labels(plan: Plan, modes: Iterable[str], refused: Callable[[str], bool]) -> Iterator[tuple[PoolPlan, str]]:
    """(pool, label key) for every pool label the mode's API refuses, pools of other modes skipped."""
    if plan.mode not in modes:
        return
    for pool in plan.pools.values():
        for key in sorted(k for k in pool.labels if refused(k)):
            yield pool, key


def pool_types(pool: PoolPlan) -> list[catalog.InstanceType]:
    return [catalog.instance_types()[t] for t in pool.instance_types]

