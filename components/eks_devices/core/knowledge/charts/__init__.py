"""The Helm charts the toolkit installs, one descriptor each (`base.Chart`): name, source, pinned version,
known releases, namespace, where each device-managing DaemonSet takes its node scope (`Agent`: what the
chart's templates do with the values, checked against the chart sources at the versions each module
names), what its templates refuse to render (`Refusal`), and what it brings that other objects wait for.

A stack overrides a pin with `eks-devices:chartVersions`; naming a release not in `releases` is a
finding (`chart-version-known`). The overlap proof in `scope.py` tells where each DaemonSet lands from
the merged values alone: the chart's default affinity as data, or the terms its template builds.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from eks_devices.core.families import DESCRIPTORS
from eks_devices.core.knowledge.charts import (
    eks_charts,
    karpenter,
    neuron_helm_chart,
    nvidia_device_plugin,
    nvidia_dra_driver,
)
from eks_devices.core.knowledge.charts.base import (
    Agent,
    Chart,
    ManagerName,
    Refusal,
    Releases,
    Toleration,
    Values,
    required,
    truthy,
)
from eks_devices.core.knowledge.charts.eks_charts import EKS_CHARTS_INSTANCE_KEYS
from eks_devices.core.knowledge.charts.neuron_helm_chart import (
    NEURON_AFFINITY,
    NEURON_INSTANCE_TYPE_KEY,
    NEURON_INSTANCES,
)
from eks_devices.core.knowledge.charts.nvidia_device_plugin import NVIDIA_PLUGIN_AFFINITY
from eks_devices.core.knowledge.charts.nvidia_dra_driver import (
    CONSUMABLE_SHARES_SINCE,
    DYNAMIC_MIG_GPU_MODELS,
    NVIDIA_DRA_AFFINITY,
)
from eks_devices.core.values import chart_value
from eks_devices.core.vocabulary import CHART_KEYS, CHART_PLUGINS, Family, PluginError, plugin_modules

# the charts of families other distributions add: `CHARTS` of each `eks_devices_charts.<family>` module
PLUGIN_CHARTS: tuple[Chart, ...] = tuple(
    chart for name in plugin_modules(CHART_PLUGINS)
    for chart in importlib.import_module(f"{CHART_PLUGINS}.{name}").CHARTS)
CHARTS: dict[str, Chart] = {c.key: c for c in (
    karpenter.KARPENTER_CRD, karpenter.KARPENTER, nvidia_dra_driver.CHART, nvidia_device_plugin.CHART,
    eks_charts.DRANET, eks_charts.EFA_DEVICE_PLUGIN, neuron_helm_chart.DRA_DRIVER, neuron_helm_chart.DEVICE_PLUGIN,
    *PLUGIN_CHARTS)}
_UNCHARTED = sorted(f"{d.name}: {key}" for d in DESCRIPTORS for key in d.releases.values() if key not in CHARTS)
if _UNCHARTED:  # an added family whose charts are missing from `eks_devices_charts.<family>.CHARTS`
    raise PluginError(f"{CHART_PLUGINS}: no chart descriptor for the releases {', '.join(_UNCHARTED)}; accepted: a "
                      f"module {CHART_PLUGINS}.<family> whose CHARTS describe every release its family names")
RELEASES: dict[str, Releases] = {key: c.releases for key, c in CHARTS.items()}
SETTING_KEYS: tuple[str, ...] = (*CHART_KEYS, *(c.key for c in PLUGIN_CHARTS))
"""The keys of per-chart settings (`helmValues`, `chartVersions`): the toolkit's releases, then added families'."""
REFUSALS: tuple[Refusal, ...] = tuple(r for c in CHARTS.values() for r in c.refusals)
# custom resources the toolkit creates → the chart key whose release installs their CRD
CRD_CHARTS: dict[str, str] = {crd: key for key, c in CHARTS.items() for crd in c.crds}

# Which chart key runs a (family, manager) in the self-managed modes: each family's descriptor says.
RELEASE_FOR: dict[tuple[Family, ManagerName], str] = {
    (d.name, manager): key for d in DESCRIPTORS for manager, key in d.releases.items()}  # type: ignore[misc]


def kept_off(family: str, manager: str, types: Iterable[str]) -> tuple[list[str], str]:
    """The instance types (sorted) whose names the chart running a family's manager keeps its DaemonSet off,
    and what that DaemonSet serves instead (`Agent.excluded_prefixes`, `Agent.serves_only`)."""
    chart = CHARTS.get(RELEASE_FOR.get((family, manager), ""))  # type: ignore[arg-type]
    for agent in chart.agents if chart else ():
        if agent.family == family and agent.manager == manager and agent.excluded_prefixes:
            return sorted(t for t in types if t.startswith(agent.excluded_prefixes)), agent.serves_only
    return [], ""


def refusals(chart: str, version: str, values: Values) -> list[Refusal]:
    """The refusals a release of `chart` at `version` with these merged values runs into."""
    return [r for r in CHARTS[chart].refusals if r.applies(version) and r.refuses(values)] if chart in CHARTS else []


def runs_deployment(chart_key: str, values: dict[str, Any]) -> bool:
    """Whether a release of the chart with these merged values renders a Deployment (its install then
    waits for a node to run it, while a DaemonSet-only release installs before any node exists); a chart
    whose switches are not modelled is assumed to."""
    switches = CHARTS[chart_key].deployment_switches if chart_key in CHARTS else None
    if switches is None:
        return True
    return any(bool(chart_value(values, path, default)) for path, default in switches)


__all__ = ["CHARTS", "CONSUMABLE_SHARES_SINCE", "CRD_CHARTS", "DYNAMIC_MIG_GPU_MODELS", "EKS_CHARTS_INSTANCE_KEYS",
           "NEURON_AFFINITY", "NEURON_INSTANCES", "NEURON_INSTANCE_TYPE_KEY", "NVIDIA_DRA_AFFINITY",
           "NVIDIA_PLUGIN_AFFINITY", "REFUSALS", "RELEASES", "RELEASE_FOR", "SETTING_KEYS", "Agent", "Chart",
           "ManagerName", "Refusal", "Releases", "Toleration", "kept_off", "refusals", "required", "runs_deployment",
           "truthy"]
