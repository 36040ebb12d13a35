"""The overlap proof on a program's node shapes (`derive/resources.py`): which device managers their
nodes run, and where a release's node selection could put two managers on one node.

The same model as the plan's proof (`scope.py`): each DaemonSet as its template renders it
(`daemonsets.py`), placed by Kubernetes' rules on the nodes' real labels and taints, plus what the
node image runs by itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from eks_devices.core.derive import daemonsets, scope
from eks_devices.core.derive.resources import Installer, NodeShape, nodes
from eks_devices.core.knowledge import catalog, charts, kube_scheduling
from eks_devices.core.names import INSTANCE_TYPE_LABEL

Agents = list[tuple[scope.Running, daemonsets.DaemonSet]]


def agents(software: Iterable[Installer]) -> Agents:
    """Every agent of the program's device software, its DaemonSet rendered once."""
    return [(scope.Running(agent.family, agent.manager, inst.what), daemonsets.render(agent, inst.values))
            for inst in software for agent in inst.agents]


def on_node(shape: NodeShape, node: scope.Node, rendered: Agents) -> list[scope.Running]:
    """The device managers one node runs: the DaemonSets that land on it, and its image's own."""
    types = [node.instance_type]
    image = (scope.auto_mode_runs(shape.labels, shape.provisioning, types) if shape.auto_mode
             else scope.bundled_runs(shape.ami, shape.bottlerocket_settings, types))
    return [r for r, ds in rendered if ds.lands_on(node.labels, node.taints)] + image


def running(shape: NodeShape, software: Iterable[Installer], itype: str) -> list[scope.Running]:
    """Every device manager some node of `itype` launched by `shape` would run."""
    rendered = agents(software)
    return list(dict.fromkeys(r for node in nodes(shape, itype) for r in on_node(shape, node, rendered)))


def selection(agent: charts.Agent, values: dict[str, Any]) -> dict[str, set[str]] | None:
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


def could_share(a: dict[str, set[str]], b: dict[str, set[str]]) -> bool:
    """Whether two selections admit a common node: every key both require allows a common value."""
    return all(a[k] & b[k] for k in a.keys() & b.keys())
