"""How device software shows up in any Pulumi program: the chart names of the known device charts
and the container images of their device-managing DaemonSets.

The policy pack reads Helm releases and charts by chart name (the last path segment of `chart`, so
`oci://…/<chart>`, `<chart>` with a repository, and `repo/<chart>` all match) and raw DaemonSets by image
repository (the last path segment, without tag or digest); both are in the chart descriptors (`charts/`:
each chart's names and its agents' images, from the charts' values).
Installers that are not charts the toolkit installs (the NVIDIA GPU Operator) are described beside the chart
of the agents they run.
"""

from __future__ import annotations

import re

from eks_devices.core.knowledge.charts import CHARTS, ManagerName
from eks_devices.core.knowledge.charts.nvidia_device_plugin import (  # noqa: F401  (re-exported)
    CLUSTER_POLICY_AGENTS,
    GPU_CLUSTER_AGENTS,
    GPU_OPERATOR_AGENTS,
    GPU_OPERATOR_CHART,
    GPU_OPERATOR_CRS,
)
from eks_devices.core.vocabulary import Family


def _chart_keys() -> dict[str, str]:
    """Chart name (or a former one) → the chart key whose agents model it. The Neuron chart is one chart
    in two modes; both keys carry the same agents, so the first models a release of it."""
    out: dict[str, str] = {}
    for chart in CHARTS.values():
        for name in (chart.chart, *chart.former_names) if chart.agents else ():
            out.setdefault(name, chart.key)
    return out


CHART_KEYS = _chart_keys()
KARPENTER_CHART = CHARTS["karpenter"].chart

# Image repository name → the device manager a DaemonSet running it is (each chart's agents say).
IMAGES: dict[str, tuple[Family, ManagerName]] = {
    image: (agent.family, agent.manager) for c in CHARTS.values() for agent in c.agents for image in agent.images}


_PACKAGED = re.compile(r"^(?P<name>.+?)-v?\d+\.\d+\.\d+[^/]*?(\.tgz|\.tar\.gz)$")


def chart_name(chart: str) -> str:
    """The chart's name in a reference: `oci://…/name` (with a `:version` tag or an `@sha256:` digest, as
    Helm 3.18 takes them), `repo/name`, `name`, a local directory, or a packaged
    `./charts/name-1.2.3.tgz` (Helm's package file name is `<name>-<version>.tgz`)."""
    base = chart.rstrip("/").rsplit("/", 1)[-1]
    if chart.startswith("oci://"):
        base = base.split("@", 1)[0].split(":", 1)[0]
    packaged = _PACKAGED.match(base)
    if packaged:
        return packaged.group("name")
    for suffix in (".tgz", ".tar.gz"):
        base = base.removesuffix(suffix)
    return base


def chart_key(chart: str) -> str | None:
    """The chart key of a Helm chart reference (see `chart_name`), or None."""
    return CHART_KEYS.get(chart_name(chart))


def image_manager(image: str) -> tuple[Family, ManagerName] | None:
    """The (family, manager) a container image runs, from the last segment of its repository path
    (so any registry host or mirror prefix matches: `mirror.corp:5000/team/<repository>:v1`),
    or None."""
    repository = image.split("@", 1)[0]
    name = repository.rsplit("/", 1)[-1].split(":", 1)[0]
    return IMAGES.get(name)


def images_in(values: object) -> list[str]:
    """Every container image a chart's values name: `image: "<ref>"` strings, and `{repository,
    image?, tag?}` maps (the shapes the device charts and the GPU Operator use)."""
    out: list[str] = []
    if isinstance(values, dict):
        repository = values.get("repository")
        if isinstance(repository, str):
            image = values.get("image")
            out.append(f"{repository}/{image}" if isinstance(image, str) else repository)
        for key, value in values.items():
            if key == "image" and isinstance(value, str):
                out.append(value)
            else:
                out.extend(images_in(value))
    elif isinstance(values, list):
        for value in values:
            out.extend(images_in(value))
    return out
