"""What `eks-devices:digests` pins, release by release: the chart reference Helm pulls and the image tag
values the chart templates write. The pins are merged after the stack's `helmValues`, so a pinned image
runs by digest whatever the overrides say (the rules in `rules/digests.py` report a pin that does not
match what the stack installs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eks_devices.core.config.digests import split
from eks_devices.core.config.stack import Spec
from eks_devices.core.knowledge import charts, registries
from eks_devices.core.knowledge.charts.base import Chart, Image, switched_on
from eks_devices.core.values import dig, merge, nested


@dataclass(frozen=True)
class RunImage:
    """An image a release runs, by the repository its values name."""

    chart: Chart
    image: Image
    repository: str | None  # None: nothing names one (a region without an EKS registry, no override)


def pinned_reference(reference: str, pin: str) -> str:
    """An OCI chart reference pulled by the pin's digest (`oci://…/chart@sha256:…`; the release keeps
    the version, which Helm resolves and compares with the digest)."""
    return f"{reference}@{split(pin)[1]}"


def chart_reference(spec: Spec, key: str) -> str:
    """What Helm pulls for the chart: its reference, by digest when the stack pins it."""
    chart = charts.CHARTS[key]
    pin = spec.digests.charts.get(key)
    return pinned_reference(chart.reference, pin) if pin else chart.reference


def images(spec: Spec, key: str, values: dict[str, Any]) -> list[RunImage]:
    """The images a release of `key` runs with `values`, each under the repository it is pulled from."""
    chart = charts.CHARTS[key]
    out = []
    for image in chart.images:
        if not switched_on(values, image.enabled):
            continue
        named = dig(values, image.repository)
        repository = named if isinstance(named, str) and named else image.default
        if repository is None and chart.eks_image:
            registry = registries.eks_registry(spec.region)
            repository = f"{registry}/{chart.eks_image}" if registry else None
        out.append(RunImage(chart, image, repository))
    return out


def pinned(spec: Spec, key: str, values: dict[str, Any]) -> dict[str, Any]:
    """`values` with the stack's image pins written into the chart's tag (and digest) values."""
    pins: dict[str, Any] = {}
    for run in images(spec, key, values):
        pin = spec.digests.images.get(run.repository or "")
        if not pin:
            continue
        if run.image.digest:
            tag, digest = split(pin)
            pins = merge(merge(pins, nested(run.image.tag, tag)), nested(run.image.digest, digest))
        else:
            pins = merge(pins, nested(run.image.tag, pin))
    return merge(values, pins) if pins else values
