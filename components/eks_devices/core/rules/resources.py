"""The rules that can be read from any Pulumi program's resources: what the policy pack enforces.

Each check reads `derive.resources.Facts` (node shapes, device software, Karpenter's settings,
claims) and returns violations naming the resource to blame. They share their slugs and summaries
with the rule catalogue, and their logic with it: the overlap proof (`derive/scope.py`) decides where
each DaemonSet lands, `derive/karpenter_gates.py` reads Karpenter's DRA gates and
`derive/pools.karpenter_dra_settings` says which gates the dynamic pools need.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from eks_devices.core.config.stack import FAMILIES, Family
from eks_devices.core.derive import daemonsets, scope
from eks_devices.core.derive.karpenter_gates import dra_gates, gate_clashes
from eks_devices.core.derive.pools import karpenter_dra_settings
from eks_devices.core.derive.resources import KARPENTER_POOL, Facts, Installer, NodeShape, Resource, nodes, read
from eks_devices.core.knowledge import catalog, chart_refusals, charts, kube_scheduling
from eks_devices.core.knowledge.device_classes import EFA_CLASS
from eks_devices.core.model import Severity
from eks_devices.core.names import INSTANCE_TYPE_LABEL, manager_label
from eks_devices.core.rules.efa import efa_shortfall
from eks_devices.core.values import dig


@dataclass(frozen=True)
class Violation:
    """One broken rule: its slug, the resource to blame (its URN) and what is wrong."""

    slug: str
    urn: str
    message: str


@dataclass(frozen=True)
class Check:
    """A rule checked on resources, with the severity its findings have in the rule catalogue."""

    run: Callable[[Facts], list[Violation]]
    severity: Severity


def _agents(software: Iterable[Installer]) -> list[tuple[scope.Running, daemonsets.DaemonSet]]:
    """Every agent of the program's device software, its DaemonSet rendered once."""
    return [(scope.Running(agent.family, agent.manager, inst.what), daemonsets.render(agent, inst.values))
            for inst in software for agent in inst.agents]


def _on_node(shape: NodeShape, node: scope.Node, agents: list[tuple[scope.Running, daemonsets.DaemonSet]]
             ) -> list[scope.Running]:
    """The device managers one node runs: the DaemonSets that land on it, and its image's own."""
    return [r for r, ds in agents if ds.lands_on(node.labels, node.taints)] + scope.image_runs(
        shape, shape.auto_mode, node.instance_type)


def running(shape: NodeShape, software: Iterable[Installer], itype: str) -> list[scope.Running]:
    """Every device manager some node of `itype` launched by `shape` would run: each DaemonSet as its
    template renders it, placed by Kubernetes' rules on the node's real labels and taints, and what
    the node image runs by itself (Auto Mode's managers, Bottlerocket's bundled NVIDIA plugin)."""
    agents = _agents(software)
    return list(dict.fromkeys(r for node in nodes(shape, itype) for r in _on_node(shape, node, agents)))


def _per_node(facts: Facts) -> list[Violation]:
    out = []
    for shape in facts.shapes:
        for family in FAMILIES:
            seen: set[tuple[scope.Running, ...]] = set()
            for itype in shape.instance_types:
                mine = tuple(sorted((r for r in running(shape, facts.installers, itype) if r.family == family),
                                    key=lambda r: (r.manager, r.source)))
                if len(mine) > 1 and mine not in seen:
                    seen.add(mine)
                    listing = ", ".join(f"{r.manager} ({r.source})" for r in mine)
                    out.append(Violation("one-manager-per-node", shape.urn,
                                         f"{shape.source} {shape.name}: {itype} nodes would run {len(mine)} "
                                         f"{family} device managers: {listing}. Each allocates the devices on "
                                         "its own, so they are oversubscribed; scope each by a node label "
                                         "(nodeSelector) to disjoint nodes"))
    return out


def _selection(agent: charts.Agent, values: dict[str, Any]) -> dict[str, set[str]] | None:
    """The node labels an agent's rendered DaemonSet requires (key → allowed values), or None when
    it can land on no node with the device at all. A key counts from the affinity when every
    required term has an `In` on it (terms are alternatives: the union of their values)."""
    rendered = daemonsets.render(agent, values)
    required: dict[str, set[str]] = {k: {str(v)} for k, v in rendered.node_selector.items()}

    def narrow(key: str, allowed: Iterable[str]) -> None:
        required[key] = required.get(key, set(allowed)) & set(allowed)

    if agent.instance_types:  # the chart's instance-type list, whichever label keys its terms use
        narrow(INSTANCE_TYPE_LABEL, daemonsets.listed_types(agent, values))
    terms = kube_scheduling.required_terms(rendered.affinity)
    if terms is not None:
        if not any(isinstance(t, dict) and t.get("matchExpressions") for t in terms):
            return None  # no terms, or only empty ones: no node at all
        ins = [{str(e.get("key")): {str(v) for v in e.get("values") or []}
                for e in (t.get("matchExpressions") or []) if isinstance(e, dict) and e.get("operator") == "In"}
               if isinstance(t, dict) else {} for t in terms]
        for key in set.intersection(*(set(i) for i in ins)):
            narrow(key, set().union(*(i[key] for i in ins)))
    types = required.get(INSTANCE_TYPE_LABEL)
    if types is not None and not any(t in catalog.instance_types() and catalog.instance_types()[t].has(agent.family)
                                     for t in types):
        return None
    return required


def _could_share(a: dict[str, set[str]], b: dict[str, set[str]]) -> bool:
    return all(a[k] & b[k] for k in a.keys() & b.keys())


def _per_release(facts: Facts) -> list[Violation]:
    """Pairs of device managers for one family whose node selection admits a common node, whatever
    node pools exist today: a pool added later would get both."""
    agents = [(inst, agent, sel) for inst in facts.installers for agent in inst.agents
              if daemonsets.enabled(agent, inst.values) and (sel := _selection(agent, inst.values)) is not None]
    out = []
    for i, (inst_a, a, sel_a) in enumerate(agents):
        for inst_b, b, sel_b in agents[i + 1:]:
            if a.family == b.family and _could_share(sel_a, sel_b):
                message = (f"{inst_a.what} runs the {a.family} {a.manager} and {inst_b.what} the {b.family} "
                           f"{b.manager} on nodes their node selection does not keep apart: a node with the device "
                           "and the labels both require would run two managers. Give each a nodeSelector on a label "
                           "with different values (eks-devices uses eks-devices.io/device-manager-<family>: dra | "
                           "device-plugin)")
                blamed = dict.fromkeys((inst_a.urn, inst_b.urn))
                out += [Violation("one-manager-per-node", urn, message) for urn in blamed]
    return out


def _unread(facts: Facts) -> list[Violation]:
    """Device software whose valueYamlFiles could not be read: where it runs cannot be proved."""
    return [Violation("one-manager-per-node", inst.urn,
                      f"{inst.what}: its valueYamlFiles {', '.join(inst.unread)} could not be read (a local file "
                      "the policy pack cannot open, or not a YAML mapping), so where its device managers run cannot "
                      "be checked; give those values inline (values) or make the file readable from the program's "
                      "folder") for inst in facts.installers if inst.unread]


def one_manager_per_node(facts: Facts) -> list[Violation]:
    return _per_node(facts) + _per_release(facts) + _unread(facts)


def karpenter_dra_gates_exclusive(facts: Facts) -> list[Violation]:
    out = []
    for release in facts.karpenter:
        clash = gate_clashes(dig(release.props, "values.settings"))
        if clash:
            out.append(Violation("karpenter-dra-gates-exclusive", release.urn,
                                 "settings.enableDRA is set together with "
                                 f"{', '.join('settings.' + c for c in clash)}: the Karpenter chart fails to render; "
                                 "keep only settings.enableDRA"))
    return out


def device_software_unserved(facts: Facts) -> list[Violation]:
    """Node shapes that carry the toolkit's device-manager label for a family — the pool's choice, as
    eks-devices writes it (a program without the label states no choice to check) — whose nodes of
    an instance type with the device run no agent of that manager. Auto Mode picks for itself."""
    agents = _agents(facts.installers)
    out = []
    for shape in (s for s in facts.shapes if not s.auto_mode):
        for family in FAMILIES:
            label = manager_label(family)
            wanted = shape.labels.get(label)
            if wanted not in ("dra", "device-plugin"):
                continue
            bare = [n for t in shape.instance_types if catalog.instance_types()[t].has(family)
                    for n in nodes(shape, t)
                    if not any((r.family, r.manager) == (family, wanted) for r in _on_node(shape, n, agents))]
            if not bare:
                continue
            node = bare[0]
            reasons = [f"{inst.what}: {why}" for inst in facts.installers for agent in inst.agents
                       if (agent.family, agent.manager) == (family, wanted)
                       for why in scope.why_not(agent, inst.values, node)] or [f"no {family} {wanted} is installed"]
            out.append(Violation("device-software-unserved", shape.urn,
                                 f"{shape.source} {shape.name}: its {node.instance_type} nodes are labelled "
                                 f"{label}={wanted} but get no {family} {wanted}: {'; '.join(reasons)}. Let the "
                                 "DaemonSet reach them (its nodeSelector, affinity, tolerations or instance "
                                 "list), or label the pool for the manager that runs there"))
    return out


def device_software_installable(facts: Facts) -> list[Violation]:
    """Device software whose DaemonSet, as its template renders it, the API server refuses."""
    return [Violation("device-software-installable", inst.urn,
                      f"{inst.what} cannot install: the API server refuses its {agent.family} {agent.manager} "
                      f"DaemonSet ({path}: {problem}). Fix the value so the rendered field is valid Kubernetes")
            for inst in facts.installers for agent in inst.agents
            for path, problem in daemonsets.invalid_fields(agent, inst.values)]


def chart_render_refused(facts: Facts) -> list[Violation]:
    """Releases of a known chart whose values hit the chart's own `fail` (`knowledge/chart_refusals.py`); an
    unpinned release is judged by the newest template modelled."""
    return [Violation("chart-render-refused", inst.urn,
                      f"{inst.what} cannot install: the chart refuses to render ({refusal.problem}). Set "
                      f"{refusal.accepted}")
            for inst in facts.installers if inst.chart_key is not None
            for refusal in chart_refusals.refusals(inst.chart_key, inst.version or "999.0.0", inst.values)]


@dataclass(frozen=True)
class _PoolManagers:
    """A Karpenter NodePool's device managers as the proof finds them: a `pools.ManagedPool`, what
    `karpenter_dra_settings` reads (provisioning, manager per family)."""

    provisioning: str
    managers: dict[Family, str]

    def manager(self, family: Family) -> str:
        return self.managers.get(family, "none")


def karpenter_dra_gates_match_drivers(facts: Facts) -> list[Violation]:
    pools = [s for s in facts.shapes if s.source == KARPENTER_POOL]
    if not pools:
        return []
    found = {}
    for shape in pools:
        runs = [r for t in shape.instance_types for r in running(shape, facts.installers, t)]
        managers = {r.family: "dra" if any(o.family == r.family and o.manager == "dra" for o in runs) else r.manager
                    for r in runs}
        found[shape.name] = _PoolManagers(shape.provisioning, managers)
    needed = dra_gates(karpenter_dra_settings(found))
    out = []
    for release in facts.karpenter:
        enabled = dra_gates(dig(release.props, "values.settings"))
        if enabled != needed:
            out.append(Violation("karpenter-dra-gates-match-drivers", release.urn,
                                 f"Karpenter's DRA gates cover {sorted(enabled) or 'nothing'} but dynamic NodePools "
                                 f"run DRA drivers for {sorted(needed) or 'nothing'}: Karpenter would launch nodes "
                                 "that cannot serve the claims, or ignore claims it should serve. Set "
                                 "settings.enableDRA (NVIDIA and EFA) or settings.awsFeatureGates.draNVIDIAGPU / "
                                 "draEFA to match"))
    return out


def _efa_classes(facts: Facts) -> set[str]:
    """The upstream EFA class and the program's own classes that select DRANET's EFA devices."""
    out = {EFA_CLASS}
    for cls in facts.device_classes:
        cel = " ".join(str(dig(s, "cel.expression") or "") for s in dig(cls.props, "spec.selectors") or [])
        if "dra.net" in cel and "efa" in cel.lower():
            out.add(str(dig(cls.props, "metadata.name")))
    return out


def _request_classes(request: dict[str, Any]) -> list[str]:
    """A request's DeviceClass names: `exactly` (v1), the flat form (v1beta1), each `firstAvailable`."""
    found = [request.get("deviceClassName"), dig(request, "exactly.deviceClassName")]
    found += [s.get("deviceClassName") for s in request.get("firstAvailable") or [] if isinstance(s, dict)]
    return [str(c) for c in found if c]


def efa_not_shareable(facts: Facts) -> list[Violation]:
    efa = _efa_classes(facts)
    out = []
    for claim in facts.claims:
        requests = [r for r in dig(claim.props, "spec.devices.requests") or [] if isinstance(r, dict)]
        if any(c in efa for r in requests for c in _request_classes(r)):
            out.append(Violation("efa-not-shareable", claim.urn,
                                 f"ResourceClaim {dig(claim.props, 'metadata.name') or claim.name} includes EFA "
                                 "devices, but an EFA is allocated to one Pod at a time: the second Pod naming the "
                                 "claim never starts. Use a ResourceClaimTemplate (one claim per Pod)"))
    return out


def efa_partial_interfaces(facts: Facts) -> list[Violation]:
    out = []
    for shape in facts.shapes:
        if shape.provisioning != "dynamic" or shape.interface_types is None:
            continue
        if not any(r.family == "efa" and r.manager in ("dra", "inferred")
                   for t in shape.instance_types for r in running(shape, facts.installers, t)):
            continue
        shortfall = efa_shortfall(shape.interface_types, [catalog.instance_types()[t] for t in shape.instance_types])
        if shortfall:
            efas, most = shortfall
            out.append(Violation(
                "efa-partial-interfaces", shape.urn,
                f"{shape.source} {shape.name}: its NodeClass lists {efas} EFA interface(s) but the instance types "
                f"support up to {most}; the scheduler assumes all of them and can launch nodes that cannot satisfy "
                "claims. Remove the interface list, or make the pool static"))
    return out


CHECKS: dict[str, Check] = {
    "one-manager-per-node": Check(one_manager_per_node, "error"),
    "karpenter-dra-gates-exclusive": Check(karpenter_dra_gates_exclusive, "error"),
    "karpenter-dra-gates-match-drivers": Check(karpenter_dra_gates_match_drivers, "error"),
    "efa-not-shareable": Check(efa_not_shareable, "error"),
    "efa-partial-interfaces": Check(efa_partial_interfaces, "warning"),
    "device-software-unserved": Check(device_software_unserved, "error"),
    "device-software-installable": Check(device_software_installable, "error"),
    "chart-render-refused": Check(chart_render_refused, "error"),
}


def check(resources: list[Resource], slugs: Iterable[str] = CHECKS) -> list[Violation]:
    """Every violation of the named checks (all by default) in a program's resources."""
    facts = read(resources)
    return [v for slug in slugs for v in CHECKS[slug].run(facts)]
