"""Each device agent's DaemonSet scheduling fields as its chart template renders them.

From a release's merged values to what reaches the API server: whether the DaemonSet renders, its
`nodeSelector` (Helm drops null keys), its required node affinity (the chart's default affinity
with the value merged in as Helm merges it, the Neuron chart's placeholders filled in, or the
terms the eks-charts templates build from `supportedInstanceLabels`) and its tolerations (the
template's hard-coded ones plus the value, or the chart's default list while unset). Chart facts
come from the chart descriptors (`knowledge/charts/`); the overlap proof (`scope.py`) places the result on nodes.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from eks_devices.core.knowledge import charts, kube_scheduling, kube_validation
from eks_devices.core.names import COMPUTE_TYPE_LABEL, INSTANCE_TYPE_LABEL
from eks_devices.core.values import chart_value, dig

_UNSET = object()


@dataclass(frozen=True)
class DaemonSet:
    """One agent's rendered scheduling fields, and the values path each came from."""

    agent: charts.Agent
    enabled: bool
    node_selector: dict[str, Any]
    affinity: dict[str, Any] | None
    tolerations: list[Any]
    _placed: dict[Hashable, bool] = field(default_factory=dict, init=False, compare=False, repr=False)

    @cached_property
    def _read_labels(self) -> tuple[str, ...]:
        """Every label key the node selector and the affinity's expressions name: all the placement
        reads of a node's labels (a key named anywhere under `key` counts; more keys only split the memo)."""
        return tuple(sorted({str(k) for k in self.node_selector} | set(_expression_keys(self.affinity))))

    def lands_on(self, labels: dict[str, str], taints: tuple[dict[str, str], ...] | list[dict[str, str]]) -> bool:
        """Whether the DaemonSet controller puts a pod of it on a node with these labels and taints.
        Remembered per distinct (labels it reads, taints): the pools of a large stack repeat a few shapes."""
        try:
            memo = (tuple(map(labels.get, self._read_labels)), tuple(tuple(t.items()) for t in taints))
            placed = self._placed.get(memo)
        except (AttributeError, TypeError):  # a taint that is no mapping of plain values: judged afresh
            return self._lands_on(labels, taints)
        if placed is None:
            placed = self._placed[memo] = self._lands_on(labels, taints)
        return placed

    def _lands_on(self, labels: dict[str, str], taints: tuple[dict[str, str], ...] | list[dict[str, str]]) -> bool:
        if not self.enabled:
            return False
        selector = {k: str(v) for k, v in self.node_selector.items()}
        if not kube_scheduling.node_selector_matches(selector, labels):
            return False
        if not kube_scheduling.affinity_matches(self.affinity, labels):
            return False
        tolerations = kube_scheduling.daemonset_tolerations(
            [t for t in self.tolerations if isinstance(t, dict)], self.agent.host_network)
        return not kube_scheduling.blocking_taints(tolerations, list(taints))


def _expression_keys(value: Any) -> list[Any]:
    """The values of every `key` field in an affinity, however nested (its expressions' label keys)."""
    if isinstance(value, dict):
        return [v for k, item in value.items() for v in ([item] if k == "key" else _expression_keys(item))]
    if isinstance(value, list):
        return [v for item in value for v in _expression_keys(item)]
    return []


def coalesce(default: Any, value: Any) -> Any:
    """Helm's merge of a user value into a chart default: maps merge key by key, a null removes
    the key, anything else (lists included) replaces."""
    if value is _UNSET:
        return copy.deepcopy(default)
    if isinstance(default, dict) and isinstance(value, dict):
        out = copy.deepcopy(default)
        for key, item in value.items():
            if item is None:
                out.pop(key, None)
            else:
                out[key] = coalesce(out[key], item) if key in out else copy.deepcopy(item)
        return out
    return copy.deepcopy(value)


def enabled(agent: charts.Agent, values: dict[str, Any]) -> bool:
    return not agent.enabled or bool(chart_value(values, agent.enabled, agent.enabled_default))


def node_selector(values: dict[str, Any], path: str) -> dict[str, Any]:
    """The nodeSelector a template renders: Helm drops keys whose value is null."""
    selector = dig(values, path) or {}
    return {k: v for k, v in selector.items() if v is not None} if isinstance(selector, dict) else {}


def tolerations(agent: charts.Agent, values: dict[str, Any]) -> list[Any]:
    """The template's hard-coded tolerations, then the value's (the chart's default while unset)."""
    out: list[Any] = [{"key": key, "operator": "Exists"} for key in agent.builtin_tolerations]
    value = dig(values, agent.tolerations, _UNSET) if agent.tolerations else _UNSET
    if value is _UNSET:
        return out + [t.render() for t in agent.default_tolerations]
    return out + (list(value) if isinstance(value, list) else [])


def listed_types(agent: charts.Agent, values: dict[str, Any]) -> list[str]:
    """The chart's instance-type list as its template renders it (Inferentia dropped where the
    template drops it)."""
    listed = dig(values, agent.instance_types) if agent.instance_types else None
    if not isinstance(listed, list):
        return []
    return [str(t) for t in listed if not str(t).startswith(agent.excluded_prefixes)]


def _fill_placeholders(agent: charts.Agent, values: dict[str, Any], affinity: Any) -> Any:
    """The Neuron chart's affinity with its instance-type key and list placeholders filled in."""
    terms = kube_scheduling.required_terms(affinity)
    if not terms:
        return affinity
    filled = []
    for term in terms:
        if not isinstance(term, dict):
            filled.append(term)
            continue
        exprs = []
        for e in term.get("matchExpressions") or []:
            if isinstance(e, dict):
                e = dict(e)
                if e.get("key") == charts.NEURON_INSTANCE_TYPE_KEY:
                    e["key"] = INSTANCE_TYPE_LABEL
                if e.get("values") == charts.NEURON_INSTANCES:
                    e["values"] = listed_types(agent, values)
            exprs.append(e)
        filled.append({**term, "matchExpressions": exprs})
    out = copy.deepcopy(affinity)
    out["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] = filled
    return out


def _instance_label_terms(agent: charts.Agent, values: dict[str, Any]) -> dict[str, Any]:
    """The eks-charts templates' affinity: for each key of `supportedInstanceLabels.keys` a term
    `key In supportedInstanceLabels.values`, and `eks.amazonaws.com/compute-type NotIn [auto]`
    rendered after the loop, so into the last term — or, with no keys, as a term of its own that
    has no matchExpressions (the API server refuses its fields; as a term it matches nothing)."""
    keys = dig(values, agent.instance_label_keys, _UNSET) if agent.instance_label_keys else _UNSET
    keys = list(agent.default_instance_label_keys) if keys is _UNSET else (keys if isinstance(keys, list) else [])
    listed = dig(values, agent.instance_types) if agent.instance_types else None
    listed = [str(t) for t in listed] if isinstance(listed, list) else []
    auto = {"key": COMPUTE_TYPE_LABEL, "operator": "NotIn", "values": ["auto"]}
    terms: list[dict[str, Any]] = [{"matchExpressions": [{"key": str(k), "operator": "In", "values": listed}]}
                                   for k in keys]
    if terms:
        terms[-1]["matchExpressions"].append(auto)
    else:
        terms = [auto]
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}}


def affinity(agent: charts.Agent, values: dict[str, Any]) -> dict[str, Any] | None:
    """The affinity the template renders (None: no affinity, every node admitted)."""
    if agent.instance_label_keys:
        return _instance_label_terms(agent, values)
    value = dig(values, agent.affinity, _UNSET) if agent.affinity else _UNSET
    rendered = coalesce(agent.default_affinity, value) if agent.default_affinity is not None else (
        None if value is _UNSET else value)
    if not rendered or not isinstance(rendered, dict):  # `with` renders nothing for null or {}
        return None
    return _fill_placeholders(agent, values, rendered) if agent.instance_types_in_affinity else rendered


def render(agent: charts.Agent, values: dict[str, Any]) -> DaemonSet:
    return DaemonSet(agent, enabled(agent, values), node_selector(values, agent.node_selector),
                     affinity(agent, values), tolerations(agent, values))


def invalid_fields(agent: charts.Agent, values: dict[str, Any]) -> list[tuple[str, str]]:
    """(values path, problem) for every scheduling field of the agent's rendered DaemonSet that the
    API server refuses (nothing when the DaemonSet does not render)."""
    if not enabled(agent, values):
        return []
    rendered = render(agent, values)
    out = [(f"{agent.node_selector}.{key}", problem)
           for key, problem in kube_validation.node_selector_problems(rendered.node_selector)]
    own = rendered.tolerations[len(agent.builtin_tolerations):]
    out += [(f"{agent.tolerations}{at}", problem) for at, problem in kube_validation.toleration_problems(own)]
    for at, problem in kube_validation.affinity_problems(rendered.affinity):
        if agent.instance_label_keys:  # the template built the terms: blame the value it built them from
            path = agent.instance_types if at.endswith(".values") else agent.instance_label_keys
            out.append((path or "", f"the affinity the template builds: {at}: {problem}"))
        else:
            out.append((f"{agent.affinity}.{at}", problem))
    return out
