"""The overlap proof: which device managers a node of each pool would actually run.

The answer is computed from what would be deployed — each release's merged values (node
selector, required node affinity, tolerations, enabled switches) matched against each pool's
node labels and taints, plus what the node image runs by itself (Bottlerocket's bundled NVIDIA
plugin, Auto Mode's built-in drivers) — not from the configuration's intent. The
`one-manager-per-node` rule and the preview both read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import charts
from .plan import Plan, PoolPlan, Release, eks_manager_label
from .spec import FAMILIES, Family
from .values import dig


@dataclass(frozen=True)
class Running:
    """One device manager that runs on a pool's nodes, and what runs it."""

    family: Family
    manager: str
    source: str  # release key, "bottlerocket" or "auto-mode"


def _expression_matches(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op, wanted = expr.get("key"), expr.get("operator"), [str(v) for v in expr.get("values") or []]
    present = key in labels
    if op == "In":
        return present and labels[key] in wanted
    if op == "NotIn":
        return not present or labels[key] not in wanted
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    return False  # Gt/Lt on pool labels are not modelled: treat as not matching


def affinity_matches(affinity: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """Required node affinity: any term matches when all its expressions match."""
    terms = dig(affinity or {}, "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")
    if not terms:
        return True
    return any(all(_expression_matches(e, labels) for e in term.get("matchExpressions") or [])
               for term in terms)


def tolerates(tolerations: list[dict[str, Any]], builtin: tuple[str, ...], taint: dict[str, str]) -> bool:
    if taint["effect"] == "PreferNoSchedule" or taint["key"] in builtin:
        return True
    for tol in tolerations:
        if tol.get("effect") not in (None, "", taint["effect"]):
            continue
        if tol.get("operator") == "Exists" and tol.get("key") in (None, "", taint["key"]):
            return True
        if tol.get("key") == taint["key"] and tol.get("value") == taint.get("value"):
            return True
    return False


def agent_runs_on(agent: charts.Agent, values: dict[str, Any], pool: PoolPlan) -> bool:
    """Whether one chart DaemonSet, with these values, lands on the pool's nodes."""
    if agent.enabled and not dig(values, agent.enabled, agent.enabled_default):
        return False
    if not pool.has_hardware(agent.family):
        return False  # every chart's built-in affinity requires the device to be present
    selector = dig(values, agent.node_selector) or {}
    if any(pool.labels.get(k) != str(v) for k, v in selector.items()):
        return False
    affinity = dig(values, agent.affinity) if agent.affinity else None
    if affinity and not affinity_matches(affinity, pool.labels):
        return False
    tolerations = (dig(values, agent.tolerations) if agent.tolerations else None) or []
    return all(tolerates(tolerations, agent.builtin_tolerations, t) for t in pool.taints)


def running_on(plan: Plan, pool: PoolPlan, releases: dict[str, Release] | None = None) -> list[Running]:
    """Every device manager a node of `pool` runs."""
    out: list[Running] = []
    if plan.mode == "auto-mode":
        # Auto Mode's runtime picks one manager per family per node; the pool's label forces it.
        for family in FAMILIES:
            if not pool.has_hardware(family):
                continue
            if family == "neuron":
                out.append(Running(family, "device-plugin", "auto-mode"))
            elif eks_manager_label(family) in pool.labels:
                out.append(Running(family, pool.labels[eks_manager_label(family)], "auto-mode"))
            elif pool.provisioning == "static":
                out.append(Running(family, "device-plugin", "auto-mode"))  # no label: plugin (EKS-DM)
        return out
    for release in (releases if releases is not None else plan.releases).values():
        for agent in charts.CHARTS[release.key].agents:
            if agent_runs_on(agent, release.values, pool):
                out.append(Running(agent.family, agent.manager, release.key))
    if pool.ami == "bottlerocket" and pool.has_hardware("nvidia"):
        enabled = dig(pool.bottlerocket_settings, "kubelet-device-plugins.nvidia.enabled", True)
        if enabled is not False:
            out.append(Running("nvidia", "device-plugin", "bottlerocket"))
    return out


@dataclass(frozen=True)
class Overlap:
    pool: str
    family: Family
    expected: str
    running: tuple[Running, ...]

    @property
    def problem(self) -> str:
        found = ", ".join(f"{r.manager} ({r.source})" for r in self.running) or "nothing"
        return f"pool {self.pool}: {self.family} expects {self.expected}, nodes would run {found}"


def overlaps(plan: Plan, releases: dict[str, Release] | None = None) -> list[Overlap]:
    """Pools where a family runs more than one manager, another manager than planned, or none."""
    out = []
    for pool in plan.pools.values():
        running = running_on(plan, pool, releases)
        for family in FAMILIES:
            expected = pool.manager(family)
            mine = tuple(r for r in running if r.family == family)
            managers = {r.manager for r in mine}
            ok = (len(mine) <= 1 and managers <= {expected}) if expected == "none" else (
                len(mine) == 1 and managers == {expected})
            if plan.mode == "auto-mode" and expected == "none":
                ok = True
            if not ok:
                out.append(Overlap(pool.name, family, expected, mine))
    return out
