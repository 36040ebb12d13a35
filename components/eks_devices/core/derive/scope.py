"""The overlap proof: which device managers a node of each pool would actually run.

The answer is computed from what would be deployed — each release's merged values (node
selector, required node affinity, tolerations, enabled switches, instance-type lists) matched
against each pool's node labels, taints and instance types, plus what the node image runs by
itself (Bottlerocket's bundled NVIDIA plugin, Auto Mode's built-in drivers) — not from the
configuration's intent. Values follow Helm's merge: a `null` deletes a key, so a nodeSelector
entry set to null no longer scopes anything. The `one-manager-per-node` rule and the preview
both read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eks_devices.core.knowledge import catalog, charts
from eks_devices.core.model import Plan, PoolPlan, Release
from eks_devices.core.names import eks_manager_label
from eks_devices.core.spec.stack import FAMILIES, Family
from eks_devices.core.values import dig

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


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
    """Kubernetes' toleration match: an `Exists` toleration on the key (or on every key), or an
    `Equal` one with the taint's value (a missing value is the empty string), of the taint's effect
    or of every effect. PreferNoSchedule taints never keep a pod off."""
    if taint["effect"] == "PreferNoSchedule" or taint["key"] in builtin:
        return True
    for tol in tolerations:
        if tol.get("effect") not in (None, "", taint["effect"]):
            continue
        if tol.get("operator") == "Exists":
            if tol.get("key") in (None, "", taint["key"]):
                return True
        elif tol.get("key") == taint["key"] and (tol.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def node_selector(values: dict[str, Any], path: str) -> dict[str, str]:
    """The nodeSelector a template renders: Helm drops keys whose value is null."""
    selector = dig(values, path) or {}
    return {k: str(v) for k, v in selector.items() if v is not None}


def agent_enabled(agent: charts.Agent, values: dict[str, Any]) -> bool:
    return not agent.enabled or bool(dig(values, agent.enabled, agent.enabled_default))


_UNSET = object()


def agent_tolerations(agent: charts.Agent, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The tolerations list the template renders: the value, or the chart's default while unset."""
    value = dig(values, agent.tolerations, _UNSET) if agent.tolerations else _UNSET
    if value is _UNSET:
        return [t.render() for t in agent.default_tolerations]
    return list(value or [])


def _required_terms(affinity: Any) -> list[dict[str, Any]] | None:
    terms = dig(affinity, "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms") \
        if isinstance(affinity, dict) else None
    return terms if isinstance(terms, list) else None


def _listed_types(agent: charts.Agent, values: dict[str, Any]) -> list[str] | None:
    """The chart's instance-type list as its template renders it (Inferentia dropped where the
    template drops it), or None when the values carry no list."""
    listed = dig(values, agent.instance_types) if agent.instance_types else None
    if listed is None:
        return None
    return [t for t in listed if not str(t).startswith(agent.excluded_prefixes)]


def _fill_placeholders(agent: charts.Agent, values: dict[str, Any],
                       terms: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Affinity terms with the Neuron chart's placeholders filled in as its template does."""
    listed = _listed_types(agent, values) or []
    out = []
    for term in terms:
        exprs = []
        for e in term.get("matchExpressions") or []:
            e = dict(e)
            if e.get("key") == charts.NEURON_INSTANCE_TYPE_KEY:
                e["key"] = INSTANCE_TYPE_LABEL
            if e.get("values") == charts.NEURON_INSTANCES:
                e["values"] = listed
            exprs.append(e)
        out.append({**term, "matchExpressions": exprs})
    return out


def admits_type(agent: charts.Agent, values: dict[str, Any], labels: dict[str, str], itype: str) -> bool:
    """Whether the DaemonSet's required node affinity admits a node of `itype` with `labels`.

    Helm merges an affinity value into the chart's default, so the default's required terms stay
    unless the value brings its own list of terms (lists replace) or is null (no affinity at all).
    While they stay, the chart's affinity is modelled as "has the device" plus its instance-type
    list. A hard-coded list (the eks-charts templates) applies whatever the affinity value says."""
    if not catalog.instance_types()[itype].has(agent.family):
        return False
    if agent.instance_types and not agent.instance_types_in_affinity:
        listed = _listed_types(agent, values)
        if listed is not None and itype not in listed:
            return False
    affinity = dig(values, agent.affinity, _UNSET) if agent.affinity else _UNSET
    terms = _required_terms(affinity)
    if terms is not None:  # the value's own terms replace the chart's default ones
        if agent.instance_types_in_affinity:
            terms = _fill_placeholders(agent, values, terms)
        node = {**labels, INSTANCE_TYPE_LABEL: itype}
        return affinity_matches({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": terms}}}, node)
    if affinity is None:  # null: the template renders no affinity at all
        return True
    if agent.instance_types_in_affinity:  # the chart's default affinity with its list filled in
        listed = _listed_types(agent, values)
        if itype.startswith(agent.excluded_prefixes) or (listed is not None and itype not in listed):
            return False
    return True


def agent_runs_on(agent: charts.Agent, values: dict[str, Any], pool: PoolPlan,
                  instance_type: str | None = None) -> bool:
    """Whether one chart DaemonSet, with these values, lands on the pool's nodes (of one
    instance type, or of any of the pool's types when `instance_type` is None)."""
    if not agent_enabled(agent, values):
        return False
    if any(pool.labels.get(k) != v for k, v in node_selector(values, agent.node_selector).items()):
        return False
    if not all(tolerates(agent_tolerations(agent, values), agent.builtin_tolerations, t) for t in pool.taints):
        return False
    types = [instance_type] if instance_type else list(pool.instance_types)
    return any(admits_type(agent, values, pool.labels, t) for t in types)


def _auto_mode(pool: PoolPlan, instance_type: str | None) -> list[Running]:
    """Auto Mode's runtime picks one manager per family per node; the pool's label forces it."""
    types = [instance_type] if instance_type else list(pool.instance_types)
    out = []
    for family in FAMILIES:
        if not any(catalog.instance_types()[t].has(family) for t in types):
            continue
        if family == "neuron":
            out.append(Running(family, "device-plugin", "auto-mode"))
        elif eks_manager_label(family) in pool.labels:
            out.append(Running(family, pool.labels[eks_manager_label(family)], "auto-mode"))
        elif pool.provisioning == "static":
            out.append(Running(family, "device-plugin", "auto-mode"))  # no label: plugin (EKS-DM)
        else:
            out.append(Running(family, "inferred", "auto-mode"))  # no label: one manager per node, from its Pods
    return out


def running_on(plan: Plan, pool: PoolPlan, releases: dict[str, Release] | None = None,
               instance_type: str | None = None) -> list[Running]:
    """Every device manager a node of `pool` runs (a node of `instance_type`, or any node of the pool)."""
    if plan.mode == "auto-mode":
        return _auto_mode(pool, instance_type)
    out: list[Running] = []
    for release in (releases if releases is not None else plan.releases).values():
        for agent in charts.CHARTS[release.key].agents:
            if agent_runs_on(agent, release.values, pool, instance_type):
                out.append(Running(agent.family, agent.manager, release.key))
    types = [instance_type] if instance_type else list(pool.instance_types)
    if pool.ami == "bottlerocket" and any(catalog.instance_types()[t].has_nvidia for t in types):
        enabled = dig(pool.bottlerocket_settings, "kubelet-device-plugins.nvidia.enabled", True)
        if enabled is not False:
            out.append(Running("nvidia", "device-plugin", "bottlerocket"))
    return out


@dataclass(frozen=True)
class Overlap:
    """A pool (`pool`) or a release (`pool` is "*") that breaks one-manager-per-node for a family."""

    pool: str
    family: Family
    expected: str
    running: tuple[Running, ...]
    detail: str | None = None
    instance_type: str | None = None

    @property
    def problem(self) -> str:
        if self.detail:
            return self.detail
        found = ", ".join(f"{r.manager} ({r.source})" for r in self.running) or "nothing"
        nodes = f"{self.instance_type} nodes" if self.instance_type else "nodes"
        return f"pool {self.pool}: {self.family} expects {self.expected}, {nodes} would run {found}"


def _requires(agent: charts.Agent, values: dict[str, Any], key: str, value: str) -> bool:
    """Whether the agent's rendered node selection admits only nodes labelled key=value."""
    if node_selector(values, agent.node_selector).get(key) == value:
        return True
    affinity = dig(values, agent.affinity) if agent.affinity else None
    terms = dig(affinity or {}, "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms")
    return bool(terms) and all(
        any(e.get("key") == key and e.get("operator") == "In" and [str(v) for v in e.get("values") or []] == [value]
            for e in term.get("matchExpressions") or [])
        for term in terms)


def scope_problems(plan: Plan, releases: dict[str, Release] | None = None) -> list[Overlap]:
    """Releases whose values no longer confine them to their scope label, whatever pools exist
    today: an enabled DaemonSet of another (family, manager), or a nodeSelector/affinity that a
    override removed or widened. A pool added later would silently get two managers."""
    out = []
    for release in (releases if releases is not None else plan.releases).values():
        for agent in charts.CHARTS[release.key].agents:
            if not agent_enabled(agent, release.values):
                continue
            running = (Running(agent.family, agent.manager, release.key),)
            if (agent.family, agent.manager) != (release.family, release.manager):
                out.append(Overlap("*", agent.family, release.manager, running,
                                   f"release {release.key} would also run the {agent.family} {agent.manager} "
                                   f"({agent.enabled} is on)"))
                continue
            loose = [f"{k}={v}" for k, v in release.scope.items() if not _requires(agent, release.values, k, v)]
            if loose:
                out.append(Overlap("*", agent.family, release.manager, running,
                                   f"release {release.key} is no longer confined to nodes labelled "
                                   f"{', '.join(loose)} (its nodeSelector at {agent.node_selector} lost the "
                                   "scope): it would run on every node with the device"))
    return out


def overlaps(plan: Plan, releases: dict[str, Release] | None = None) -> list[Overlap]:
    """Pools where a family runs more than one manager, another manager than planned, or none —
    checked for a node of each of the pool's instance types — and releases that lost their scope."""
    out = []
    for pool in plan.pools.values():
        for family in FAMILIES:
            expected = pool.manager(family)
            seen: set[tuple[Running, ...]] = set()
            for itype in pool.instance_types:
                if not catalog.instance_types()[itype].has(family):
                    continue
                mine = tuple(r for r in running_on(plan, pool, releases, itype) if r.family == family)
                managers = {r.manager for r in mine}
                ok = (len(mine) <= 1 and managers <= {expected}) if expected == "none" else (
                    len(mine) == 1 and managers == {expected})
                if plan.mode == "auto-mode" and expected == "none":
                    ok = True
                if not ok and mine not in seen:
                    seen.add(mine)
                    out.append(Overlap(pool.name, family, expected, mine, instance_type=itype))
    return out + scope_problems(plan, releases)
