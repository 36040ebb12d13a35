"""Device-manager rules: one manager per node, every chosen manager served, installable releases, unused values."""

from __future__ import annotations

from collections.abc import Iterator

from eks_devices.core.config.stack import FAMILIES
from eks_devices.core.derive import daemonsets, scope, shape_scope
from eks_devices.core.derive.resources import Facts, nodes
from eks_devices.core.families import FAMILY
from eks_devices.core.knowledge import catalog, charts
from eks_devices.core.model import Plan
from eks_devices.core.names import (
    eks_manager_label,
    manager_label,
)
from eks_devices.core.rules.registry import (
    Blame,
    Verdict,
    at,
    auto_mode_plugin_only,
    error,
    on_resources,
    rule,
    values_at,
    warning,
)
from eks_devices.core.values import dig

_UNSET = object()


@rule("one-manager-per-node", "the overlap proof, both sides, from the charts' rendered DaemonSets (overrides "
      "included) placed as Kubernetes places them on every pool × instance type: no node runs two managers for a "
      "family or an agent its pool did not choose (`none` pools, system nodes); `device-software-unserved` "
      "reports pools left without theirs")
def _one_manager_per_node(plan: Plan) -> Iterator[Verdict]:
    for overlap in scope.overlaps(plan):
        pool = plan.pools.get(overlap.pool)  # None for a release that lost its scope ("*")
        if any(r.source == "bottlerocket" for r in overlap.running) and pool and pool.manager(overlap.family) == "dra":
            continue  # reported by bottlerocket-bundled-plugin with its own fix
        if plan.mode == "auto-mode":
            if pool and auto_mode_plugin_only(plan, pool, overlap.family):
                continue  # the family's Auto Mode plugin-only rule says why and what applies
            # Auto Mode installs nothing: a pool label that contradicts the plan picks another manager
            label = eks_manager_label(overlap.family) if FAMILY[overlap.family].auto_mode_label else None
            if pool and label and label in pool.config.labels:
                sets = (f"sets none for devices.{overlap.family}: inferred (Auto Mode picks per node)"
                        if pool.manager(overlap.family) == "inferred" else
                        f"sets them from devices.{overlap.family}")
                yield error(f"nodePools.{overlap.pool}.labels.{label}", overlap.problem,
                            f"remove the device-manager labels from nodePools.{overlap.pool}.labels; the toolkit "
                            f"{sets}")
            else:  # no label of the pool's to remove: Auto Mode cannot run what devices.<family> asks for
                runs = sorted({r.manager for r in overlap.running}) or ["device-plugin"]
                yield error(f"nodePools.{overlap.pool}.devices.{overlap.family}", overlap.problem,
                            f"set nodePools.{overlap.pool}.devices.{overlap.family}: {runs[0]} (what Auto Mode "
                            "runs on these nodes)")
            continue
        serving = pool.releases.get(overlap.family) if pool else None
        overridden = [r.source for r in overlap.running if r.source in plan.spec.helm_values] + (
            [serving] if serving in plan.spec.helm_values else [])
        path = f"helmValues.{overridden[0]}" if overridden else f"nodePools.{overlap.pool}.devices.{overlap.family}"
        # outside Auto Mode every overlap names what runs (two managers, the wrong one, a stray or a release
        # out of scope); a pool whose nodes run nothing is device-software-unserved's
        yield error(path, overlap.problem,
                    "keep each release's nodeSelector on its eks-devices.io/device-manager-<family> label "
                    "(do not override nodeSelector/affinity/enabled in helmValues) and keep the pool's "
                    "device-manager labels as planned")


@on_resources("one-manager-per-node")
def _one_manager_per_node_resources(facts: Facts) -> Iterator[Blame]:
    """Per node shape: two managers for a family on some node; per pair of releases: a node selection
    that admits a common node, whatever pools exist today; and releases whose values could not be read."""
    for shape in facts.shapes:
        for family in FAMILIES:
            seen: set[tuple[scope.Running, ...]] = set()
            for itype in shape.instance_types:
                mine = tuple(sorted((r for r in shape_scope.running(shape, facts.installers, itype)
                                     if r.family == family), key=lambda r: (r.manager, r.source)))
                if len(mine) > 1 and mine not in seen:
                    seen.add(mine)
                    listing = ", ".join(f"{r.manager} ({r.source})" for r in mine)
                    yield Blame(shape.urn, f"{shape.source} {shape.name}: {itype} nodes would run {len(mine)} "
                                f"{family} device managers: {listing}. Each allocates the devices on its own, so "
                                "they are oversubscribed; scope each by a node label (nodeSelector) to disjoint "
                                "nodes")
    agents = [(inst, agent, sel) for inst in facts.installers for agent in inst.agents
              if daemonsets.enabled(agent, inst.values) and (sel := shape_scope.selection(agent, inst.values))
              is not None]
    for i, (inst_a, a, sel_a) in enumerate(agents):
        for inst_b, b, sel_b in agents[i + 1:]:
            if a.family == b.family and shape_scope.could_share(sel_a, sel_b):
                message = (f"{inst_a.what} runs the {a.family} {a.manager} and {inst_b.what} the {b.family} "
                           f"{b.manager} on nodes their node selection does not keep apart: a node with the device "
                           "and the labels both require would run two managers. Give each a nodeSelector on a label "
                           "with different values (eks-devices uses eks-devices.io/device-manager-<family>: dra | "
                           "device-plugin)")
                for urn in dict.fromkeys((inst_a.urn, inst_b.urn)):
                    yield Blame(urn, message)
    for inst in facts.installers:
        if inst.unread:
            yield Blame(inst.urn, f"{inst.what}: its valueYamlFiles {', '.join(inst.unread)} could not be read (a "
                        "local file the policy pack cannot open, or not a YAML mapping), so where its device managers "
                        "run cannot be checked; give those values inline (values) or make the file readable from "
                        "the program's folder")


@rule("device-software-unserved", "every pool that chose a DRA driver or a device plugin for a family runs that "
      "agent on every instance type with the device (the other side of `one-manager-per-node`)",
      modes=("karpenter", "managed-node-groups"))
def _device_software_unserved(plan: Plan) -> Iterator[Verdict]:
    grouped: dict[tuple[str, str, str, str, tuple[str, ...]], list[str]] = {}
    for gap in scope.unserved(plan):
        grouped.setdefault((gap.pool, gap.family, gap.manager, gap.release, gap.reasons), []).append(gap.instance_type)
    for (pool, family, manager, release, reasons), types in grouped.items():
        gap = scope.Unserved(pool, family, manager, ", ".join(types), release, reasons)
        override = _scope_override(plan, gap)
        path = (f"helmValues.{gap.release}.{override}" if override
                else at(plan.pools[gap.pool], "bottlerocketSettings") if gap.release == "bottlerocket"
                else f"nodePools.{gap.pool}.devices.{gap.family}")
        yield error(path, gap.problem, _unserved_fix(plan, gap, override))


def _scope_override(plan: Plan, gap: scope.Unserved) -> str | None:
    """The first value of the release's override that places its DaemonSet (node selector, affinity,
    tolerations, instance list and its label keys), the key to edit; None when the override sets none of
    them (the gap is then the chart's own)."""
    override = plan.spec.helm_values.get(gap.release) or {}  # type: ignore[call-overload]
    agents = [a for a in charts.CHARTS[gap.release].agents if (a.family, a.manager) == (gap.family, gap.manager)] \
        if gap.release in charts.CHARTS else []
    placing = [p for a in agents for p in (a.node_selector, a.affinity, a.tolerations, a.instance_types,
                                           a.instance_label_keys) if p]
    return next((p for p in placing if dig(override, p, _UNSET) is not _UNSET), None)


def _unserved_fix(plan: Plan, gap: scope.Unserved, override: str | None) -> str:
    """What reaches the pool again: the user's override, the pool's Bottlerocket settings, or (where the
    chart's own node selection leaves the types out) another manager or other instance types."""
    other = f"nodePools.{gap.pool}.devices.{gap.family}"
    if gap.release == "bottlerocket":
        switch = FAMILY[gap.family].bottlerocket_bundled[1]  # type: ignore[index]
        return (f"remove {switch}: false from nodePools.{gap.pool}.bottlerocketSettings "
                f"(the bundled plugin is the pool's device plugin), or choose another manager in {other}")
    if override:
        return (f"let release {gap.release}'s DaemonSet reach the pool: drop or fix the override in "
                f"helmValues.{gap.release} of its nodeSelector, affinity, tolerations or instance list (a node "
                "selector term needs at least one expression; labels a node carries are listed in "
                f"docs/device-software.md), or choose another manager in {other}")
    alternative = "device-plugin" if gap.manager == "dra" else "dra"
    return (f"the {gap.release} chart itself does not run on {gap.instance_type}: set {other}: {alternative} "
            "(or none), or allow only instance types the chart runs on")


@on_resources("device-software-unserved")
def _device_software_unserved_resources(facts: Facts) -> Iterator[Blame]:
    """Node shapes that carry the toolkit's device-manager label for a family — the pool's choice, as
    eks-devices writes it (a program without the label states no choice to check) — whose nodes of
    an instance type with the device run no agent of that manager. Auto Mode picks for itself."""
    agents = shape_scope.agents(facts.installers)
    for shape in (s for s in facts.shapes if not s.auto_mode):
        for family in FAMILIES:
            label = manager_label(family)
            wanted = shape.labels.get(label)
            if wanted not in ("dra", "device-plugin"):
                continue
            bare = [n for t in shape.instance_types if catalog.instance_types()[t].has(family)
                    for n in nodes(shape, t)
                    if (family, wanted) not in {(r.family, r.manager) for r in shape_scope.on_node(shape, n, agents)}]
            if not bare:
                continue
            node = bare[0]
            reasons = [f"{inst.what}: {why}" for inst in facts.installers for agent in inst.agents
                       if (agent.family, agent.manager) == (family, wanted)
                       for why in scope.why_not(agent, inst.values, node)] or [f"no {family} {wanted} is installed"]
            yield Blame(shape.urn, f"{shape.source} {shape.name}: its {node.instance_type} nodes are labelled "
                        f"{label}={wanted} but get no {family} {wanted}: {'; '.join(reasons)}. Let the DaemonSet "
                        "reach them (its nodeSelector, affinity, tolerations or instance list), or label the pool "
                        "for the manager that runs there")


@rule("device-software-installable", "device releases render DaemonSets the API server accepts "
      "(tolerations, node affinity, nodeSelector)", modes=("karpenter", "managed-node-groups"))
def _device_software_installable(plan: Plan) -> Iterator[Verdict]:
    """An override is reported at its values path. The toolkit's own values can be refused too: the
    Neuron chart fills its DRA affinity with the pools' Trainium types, and a list left empty (Inferentia
    only) is an `In` with no values, which the API server refuses (seen on kube-apiserver 1.36); that is
    reported at the pools that chose the release."""
    for release in plan.releases.values():
        overridden = release.key in plan.spec.helm_values
        served = [pool for pool in plan.pools.values() if pool.releases.get(release.family) == release.key]
        for agent in charts.CHARTS[release.key].agents:
            for field, problem in daemonsets.invalid_fields(agent, release.values):
                refused = (f"release {release.key} cannot install: the API server refuses its "
                           f"{agent.family} {agent.manager} DaemonSet ({problem})")
                if overridden:
                    yield error(values_at(release.key, field), refused,
                                f"fix {values_at(release.key, field)} so the rendered field is valid Kubernetes "
                                "(see the message), or remove it")
                    continue
                for pool in served:
                    yield error(at(pool, f"devices.{release.family}"),
                                f"{refused}: the chart renders it from these pools' instance types "
                                f"({', '.join(pool.instance_types)})",
                                f"choose another manager for {release.family} on pool {pool.name}, or give it "
                                "instance types the chart runs this DaemonSet on")


@on_resources("device-software-installable")
def _device_software_installable_resources(facts: Facts) -> Iterator[Blame]:
    """Device software whose DaemonSet, as its template renders it, the API server refuses."""
    for inst in facts.installers:
        for agent in inst.agents:
            for path, problem in daemonsets.invalid_fields(agent, inst.values):
                yield Blame(inst.urn, f"{inst.what} cannot install: the API server refuses its {agent.family} "
                            f"{agent.manager} DaemonSet ({path}: {problem}). Fix the value so the rendered field "
                            "is valid Kubernetes")


@rule("helm-values-unused", "overrides for charts the stack does not install (warning)")
def _helm_values_unused(plan: Plan) -> Iterator[Verdict]:
    installed = set(plan.releases) | ({"karpenter"} if plan.karpenter else set())
    for key in sorted(set(plan.spec.helm_values) - installed):
        why = ("Auto Mode runs its own device software" if plan.mode == "auto-mode"
               else "no pool uses that chart in this stack")
        yield warning(f"helmValues.{key}",
                      f"helmValues.{key} is ignored: {why}", f"remove helmValues.{key}")
