"""The overlap proof: which device managers a node of each pool would actually run, both ways.

The answer is computed from what would be deployed — each release's DaemonSets as their chart
templates render them from the merged values (`daemonsets.py`), placed as Kubernetes places them
(`knowledge/kube_scheduling.py`) on every node the plan creates: a node per pool, instance type
and zone, with the labels it really carries (`knowledge/node_labels.py`, plus the pool's own) and
the pool's taints, and the system node group's nodes — plus what the node image runs by itself
(Bottlerocket's bundled NVIDIA plugin, Auto Mode's built-in drivers). Not the configuration's
intent. Two sides:

- `overlaps`: no node runs two managers for a family, or one its pool did not choose (a `none`
  pool, the system nodes), and no release lost its scope label;
- `unserved`: every pool whose plan says family F is managed by M runs M's agent on every node
  of every instance type that has the device.
The `one-manager-per-node` and `device-software-unserved` rules read it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from eks_devices.core.config.stack import FAMILIES, Family
from eks_devices.core.derive import daemonsets
from eks_devices.core.families import DESCRIPTORS, FAMILY
from eks_devices.core.knowledge import catalog, charts, kube_scheduling, node_labels
from eks_devices.core.model import Plan, PoolPlan, Release
from eks_devices.core.names import SYSTEM_LABEL, eks_manager_label
from eks_devices.core.naming import KARPENTER_CAPACITY_TYPES as KARPENTER_CAPACITY
from eks_devices.core.naming import NODE_GROUP_CAPACITY_TYPES as NODE_GROUP_CAPACITY
from eks_devices.core.naming import node_group_name, node_pool_name
from eks_devices.core.values import dig

SYSTEM_NODES = "the system node group"


@dataclass(frozen=True)
class Running:
    """One device manager that runs on a pool's nodes, and what runs it."""

    family: Family
    manager: str
    source: str  # release key, "bottlerocket" or "auto-mode"


@dataclass(frozen=True)
class Node:
    """A node the plan creates: its pool (None for the system node group), type, labels and taints."""

    pool: str | None
    instance_type: str
    labels: dict[str, str]
    taints: tuple[dict[str, str], ...]

    def has(self, family: Family) -> bool:
        known = catalog.instance_types().get(self.instance_type)
        return bool(known and known.has(family))

    @property
    def where(self) -> str:
        zone = self.labels.get(node_labels.ZONE_LABEL)
        return f"{self.instance_type} nodes" + (f" in {zone}" if zone else "")


def _zones(plan: Plan, pool: PoolPlan | None) -> list[str | None]:
    """The zones a pool's nodes land in, where the stack names them (else one node, zone unknown)."""
    if pool is not None and pool.config.availability_zone:
        return [pool.config.availability_zone]
    listed = plan.spec.network.availability_zones
    return list(listed) if isinstance(listed, list) else [None]


def _mode_labels(plan: Plan, pool: PoolPlan, itype: catalog.InstanceType) -> dict[str, str]:
    if plan.mode == "karpenter":
        return node_labels.karpenter(itype, node_pool_name(pool), KARPENTER_CAPACITY[pool.capacity])
    if plan.mode == "managed-node-groups":
        return node_labels.node_group(node_group_name(pool), NODE_GROUP_CAPACITY[pool.capacity])
    return {}


def pool_nodes(plan: Plan, pool: PoolPlan, instance_type: str | None = None) -> list[Node]:
    """A node of each of the pool's instance types (or of one) in each of its zones."""
    out = []
    for name in [instance_type] if instance_type else pool.instance_types:
        itype = catalog.instance_types()[name]
        for zone in _zones(plan, pool):
            labels = {**pool.labels, **node_labels.common(itype.name, itype.architecture, plan.spec.region, zone),
                      **_mode_labels(plan, pool, itype), **node_labels.image(pool.ami, itype)}
            out.append(Node(pool.name, name, labels, (*pool.taints, *bottlerocket_taints(pool))))
    return out


def _planned_nodes(plan: Plan) -> dict[str, list[Node]]:
    """`pool_nodes` of every pool, made once per plan: both sides of the proof walk them."""
    if "scope.nodes" not in plan.derived:
        plan.derived["scope.nodes"] = {name: pool_nodes(plan, pool) for name, pool in plan.pools.items()}
    nodes: dict[str, list[Node]] = plan.derived["scope.nodes"]
    return nodes


class _Placed(NamedTuple):
    node: Node
    on: list[Running]  # every agent whose DaemonSet lands on the node
    managing: list[Running]  # of them, those that manage a device the node has, and what its image bundles


def _placed(plan: Plan, releases: dict[str, Release] | None) -> dict[str, list[_Placed]]:
    """Each pool's nodes with the agents placed on each: made once per plan for its own releases (both
    sides of the proof ask), afresh for others."""
    if releases is None and "scope.placed" in plan.derived:
        known: dict[str, list[_Placed]] = plan.derived["scope.placed"]
        return known
    agents = rendered(plan, releases)
    made: dict[str, list[_Placed]] = {}
    for name, nodes in _planned_nodes(plan).items():
        made[name] = []
        for node in nodes:
            on = agents_on(plan, node, agents=agents)
            made[name].append(_Placed(node, on, [r for r in on if node.has(r.family)]
                                      + _bundled(plan.pools[name], node.instance_type)))
    if releases is None:
        plan.derived["scope.placed"] = made
    return made


def bottlerocket_taints(pool: PoolPlan) -> tuple[dict[str, str], ...]:
    """The taints a Bottlerocket pool's own `kubernetes.node-taints` setting puts on its nodes besides the
    pool's: a table of key → "value:Effect" entries (a list, or one text) that the kubelet registers with
    (bottlerocket-os/bottlerocket, "settings.kubernetes.node-taints"). Agents must tolerate them too."""
    if pool.ami != "bottlerocket":
        return ()
    table = dig(pool.config.bottlerocket_settings, "kubernetes.node-taints", None)
    out: list[dict[str, str]] = []
    for key, entries in (table.items() if isinstance(table, dict) else ()):
        for entry in [entries] if isinstance(entries, str) else entries if isinstance(entries, list) else ():
            if isinstance(entry, str) and ":" in entry:
                value, _, effect = entry.rpartition(":")
                taint = {"key": str(key), "effect": effect, **({"value": value} if value else {})}
                if taint not in pool.taints and taint not in out:
                    out.append(taint)
    return tuple(out)


def system_nodes(plan: Plan) -> list[Node]:
    """The system node group's nodes (karpenter and managed-node-groups modes): AL2023 without
    accelerators, labelled eks-devices.io/system, untainted. Its EKS-generated group name is not
    known to the plan, so the nodegroup label is left out."""
    if plan.mode == "auto-mode":
        return []
    name = plan.spec.cluster.system_node_group.instance_type
    arch = node_labels.architecture_of(name)
    return [Node(None, name, {SYSTEM_LABEL: "true", **node_labels.common(name, arch, plan.spec.region, zone),
                              node_labels.NODEGROUP_CAPACITY_LABEL: "ON_DEMAND"}, ())
            for zone in _zones(plan, None)]


def agent_runs_on(agent: charts.Agent, values: dict[str, Any], node: Node) -> bool:
    """Whether one chart DaemonSet, with these values, puts a pod on the node."""
    return daemonsets.render(agent, values).lands_on(node.labels, node.taints)


def rendered(plan: Plan, releases: dict[str, Release] | None = None) -> list[tuple[Running, daemonsets.DaemonSet]]:
    """Every agent of every release, with its DaemonSet as rendered (once per proof, not per node)."""
    return [(Running(agent.family, agent.manager, release.key), daemonsets.render(agent, release.values))
            for release in (releases if releases is not None else plan.releases).values()
            for agent in charts.CHARTS[release.key].agents]


def agents_on(plan: Plan, node: Node, releases: dict[str, Release] | None = None,
              agents: list[tuple[Running, daemonsets.DaemonSet]] | None = None) -> list[Running]:
    """Every device agent whose DaemonSet lands on the node, device or not."""
    agents = agents if agents is not None else rendered(plan, releases)
    return [r for r, ds in agents if ds.lands_on(node.labels, node.taints)]


def auto_mode_runs(labels: Mapping[str, str], provisioning: str, types: Sequence[str]) -> list[Running]:
    """Auto Mode's runtime picks one manager per family per node of `types`; the pool's label forces it."""
    out = []
    for family in FAMILIES:
        if not any(catalog.instance_types()[t].has(family) for t in types):
            continue
        if not FAMILY[family].auto_mode_dra:
            out.append(Running(family, "device-plugin", "auto-mode"))
        elif eks_manager_label(family) in labels:
            out.append(Running(family, labels[eks_manager_label(family)], "auto-mode"))
        elif provisioning == "static":
            out.append(Running(family, "device-plugin", "auto-mode"))  # no label: plugin (EKS-DM)
        else:
            out.append(Running(family, "inferred", "auto-mode"))  # no label: one manager per node, from its Pods
    return out


def bundled_runs(ami: str, bottlerocket_settings: Mapping[str, Any], types: Sequence[str]) -> list[Running]:
    """The managers Bottlerocket bundles (`DeviceFamily.bottlerocket_bundled`) on nodes of `types` with
    the family's devices, unless the node settings switch them off."""
    if ami != "bottlerocket":
        return []
    return [Running(d.name, d.bottlerocket_bundled[0], "bottlerocket") for d in DESCRIPTORS
            if d.bottlerocket_bundled and dig(bottlerocket_settings, d.bottlerocket_bundled[1], True) is not False
            and any(catalog.instance_types()[t].has(d.name) for t in types)]


def _types(pool: PoolPlan, instance_type: str | None) -> list[str]:
    return [instance_type] if instance_type else list(pool.instance_types)


def _auto_mode(pool: PoolPlan, instance_type: str | None) -> list[Running]:
    return auto_mode_runs(pool.labels, pool.provisioning, _types(pool, instance_type))


def _bundled(pool: PoolPlan, instance_type: str | None) -> list[Running]:
    return bundled_runs(pool.ami, pool.bottlerocket_settings, _types(pool, instance_type))


def running_on(plan: Plan, pool: PoolPlan, releases: dict[str, Release] | None = None,
               instance_type: str | None = None) -> list[Running]:
    """Every device manager that manages a device on some node of `pool` (of `instance_type`, or
    of any of its types): an agent counts for a family on the nodes that have the device."""
    if plan.mode == "auto-mode":
        return _auto_mode(pool, instance_type)
    out: list[Running] = []
    agents = rendered(plan, releases)
    for node in pool_nodes(plan, pool, instance_type):
        for r in agents_on(plan, node, agents=agents):
            if node.has(r.family) and r not in out:
                out.append(r)
    return out + _bundled(pool, instance_type)


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


@dataclass(frozen=True)
class Unserved:
    """A pool that chose `manager` for `family` whose nodes of `instance_type` get no agent of it."""

    pool: str
    family: Family
    manager: str
    instance_type: str
    release: str
    reasons: tuple[str, ...]

    @property
    def problem(self) -> str:
        return (f"pool {self.pool}: its {self.instance_type} nodes get no {self.family} {self.manager} "
                f"from release {self.release}: {'; '.join(self.reasons)}")


def _requires(agent: charts.Agent, values: dict[str, Any], key: str, value: str) -> bool:
    """Whether the agent's rendered node selection admits only nodes labelled key=value."""
    rendered = daemonsets.render(agent, values)
    if str(rendered.node_selector.get(key)) == value:
        return True
    terms = kube_scheduling.required_terms(rendered.affinity)
    return bool(terms) and all(
        isinstance(term, dict) and any(
            isinstance(e, dict) and e.get("key") == key and e.get("operator") == "In"
            and [str(v) for v in e.get("values") or []] == [value]
            for e in term.get("matchExpressions") or [])
        for term in terms)


def scope_problems(plan: Plan, releases: dict[str, Release] | None = None) -> list[Overlap]:
    """Releases whose values no longer confine them to their scope label, whatever pools exist
    today: an enabled DaemonSet of another (family, manager), or a nodeSelector/affinity that a
    override removed or widened. A pool added later would silently get two managers."""
    out = []
    for release in (releases if releases is not None else plan.releases).values():
        for agent in charts.CHARTS[release.key].agents:
            if not daemonsets.enabled(agent, release.values):
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


def _strays(plan: Plan, releases: dict[str, Release] | None) -> list[Overlap]:
    """Agents that land where no pool chose them: on a pool's nodes without the device when the pool
    chose `none` for the family (with the device it is an overlap), or on the system nodes."""
    out = []
    placed = _placed(plan, releases)
    for pool in plan.pools.values():
        for node, on, _ in placed[pool.name]:
            for r in on:
                if pool.manager(r.family) == "none" and not node.has(r.family):
                    out.append(Overlap(pool.name, r.family, "none", (r,), instance_type=node.instance_type))
    agents = rendered(plan, releases)
    for node in system_nodes(plan):
        for r in agents_on(plan, node, agents=agents):
            out.append(Overlap("*", r.family, "none", (r,),
                               f"release {r.source} would run its {r.family} {r.manager} on {SYSTEM_NODES} "
                               f"({node.where}), which has no {r.family} device", node.instance_type))
    return list(dict.fromkeys(out))


def _auto_mode_overlaps(plan: Plan) -> list[Overlap]:
    """Auto Mode picks per node from the pool's labels: a pool's label must name its manager (a
    pool label that contradicts it, or a dynamic pool without one, is caught here)."""
    out = []
    for pool in plan.pools.values():
        for family in FAMILIES:
            expected = pool.manager(family)
            for itype in pool.instance_types:
                if expected == "none" or not catalog.instance_types()[itype].has(family):
                    continue
                mine = tuple(r for r in _auto_mode(pool, itype) if r.family == family)
                if [r.manager for r in mine] != [expected]:
                    out.append(Overlap(pool.name, family, expected, mine, instance_type=itype))
                    break
    return out


def overlaps(plan: Plan, releases: dict[str, Release] | None = None) -> list[Overlap]:
    """Nodes where a family runs more than one manager or another manager than planned (a `none`
    pool's included) — checked on a node of each of the pool's instance types and zones — agents
    on nodes that chose none of them, and releases that lost their scope. (In Auto Mode: pools
    whose labels do not give them the planned manager.)"""
    if plan.mode == "auto-mode":
        return _auto_mode_overlaps(plan)
    out = []
    placed = _placed(plan, releases)
    for pool in plan.pools.values():
        for family in FAMILIES:
            expected = pool.manager(family)
            seen: set[tuple[Running, ...]] = set()
            for node, _, managing in placed[pool.name]:
                if not node.has(family):
                    continue
                mine = tuple(r for r in managing if r.family == family)
                wrong = len(mine) > 1 or any(r.manager != expected for r in mine)
                if wrong and mine not in seen:
                    seen.add(mine)
                    out.append(Overlap(pool.name, family, expected, mine, instance_type=node.instance_type))
    return out + _strays(plan, releases) + scope_problems(plan, releases)


def why_not(agent: charts.Agent, values: dict[str, Any], node: Node) -> list[str]:
    """Why the agent's DaemonSet puts no pod on the node, in the scheduler's terms."""
    rendered = daemonsets.render(agent, values)
    if not rendered.enabled:
        return [f"{agent.enabled} is off"]
    out = []
    for key, value in rendered.node_selector.items():
        if node.labels.get(key) != str(value):
            have = node.labels.get(key)
            out.append(f"its nodeSelector {key}={value} does not match the node's "
                       + (f"{key}={have}" if have is not None else f"labels (no {key})"))
    if not kube_scheduling.affinity_matches(rendered.affinity, node.labels):
        terms = kube_scheduling.required_terms(rendered.affinity) or []
        empty = [i for i, t in enumerate(terms) if not (isinstance(t, dict) and t.get("matchExpressions"))]
        detail = (f"term {empty[0]} is null or empty, which matches no node" if empty and len(empty) == len(terms)
                  else "no term matches the node's labels" if terms else "it has no node selector terms")
        out.append(f"its required node affinity admits no such node ({detail})")
    tolerations = kube_scheduling.daemonset_tolerations(
        [t for t in rendered.tolerations if isinstance(t, dict)], agent.host_network)
    for taint in kube_scheduling.blocking_taints(tolerations, list(node.taints)):
        value = f"={taint['value']}" if taint.get("value") else ""
        out.append(f"no toleration at {agent.tolerations} for the pool's taint {taint['key']}{value}:{taint['effect']}")
    return out


def unserved(plan: Plan, releases: dict[str, Release] | None = None) -> list[Unserved]:
    """Pools (outside Auto Mode) whose nodes of some instance type with the device run no agent of
    the manager the pool chose, with the reasons from the serving release's DaemonSet."""
    if plan.mode == "auto-mode":
        return []
    releases = releases if releases is not None else plan.releases
    placed = _placed(plan, None if releases is plan.releases else releases)
    out: list[Unserved] = []
    reported: set[tuple[str, str, str]] = set()  # (pool, family, instance type): each once
    for pool in plan.pools.values():
        for family in FAMILIES:
            expected, key = pool.manager(family), pool.releases.get(family)
            if expected == "none" or key is None:
                continue
            for node, _, managing in placed[pool.name]:
                if not node.has(family):
                    continue
                if any(r.family == family for r in managing):
                    continue
                release = releases.get(key)
                serving = [a for a in charts.CHARTS[key].agents if (a.family, a.manager) == (family, expected)] \
                    if key in charts.CHARTS else []
                reasons = [r for a in serving for r in why_not(a, release.values, node)] if release else []
                if not reasons and key in charts.CHARTS:
                    reasons = ["the release is not installed"] if release is None else \
                        ["no DaemonSet of the chart manages it"]
                if key == "bottlerocket":
                    reasons = ["bottlerocketSettings turn the bundled NVIDIA plugin off"]
                if (pool.name, family, node.instance_type) not in reported:
                    reported.add((pool.name, family, node.instance_type))
                    out.append(Unserved(pool.name, family, expected, node.instance_type, key, tuple(reasons)))
    return out
