"""Digest rules: what `eks-devices:digests` pins must be what the stack installs (a pin for another
version or tag would be pulled as written, or refused at install), and a stack that pins some of what it
installs should pin all of it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from eks_devices.core.config.digests import split
from eks_devices.core.derive import digests
from eks_devices.core.knowledge import charts
from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, error, rule, warning
from eks_devices.core.values import dig

_UNSET = object()


@dataclass(frozen=True)
class Installed:
    """A chart release the stack installs, at its version, with its merged values."""

    key: str
    version: str
    values: dict[str, Any]


def installed(plan: Plan) -> list[Installed]:
    """The device releases, and Karpenter's two charts when the toolkit installs them."""
    out = [Installed(r.key, r.version, r.values) for r in plan.releases.values()]
    if plan.karpenter is not None and plan.karpenter.installed:
        out += [Installed("karpenter-crd", plan.karpenter.version, {}),
                Installed("karpenter", plan.karpenter.version, plan.karpenter.values)]
    return out


def _run_images(plan: Plan) -> dict[str, tuple[Installed, digests.RunImage]]:
    """Every image the installed charts run, by repository."""
    return {run.repository: (release, run) for release in installed(plan)
            for run in digests.images(plan.spec, release.key, release.values) if run.repository}


@rule("digest-pins-installed", "each chart and image pinned by digest is one the stack installs, at its version "
      "and tag, and helmValues do not set a pinned image's tag")
def _pins_installed(plan: Plan) -> Iterator[Verdict]:
    pins = plan.spec.digests
    releases = {r.key: r for r in installed(plan)}
    for key, pin in sorted(pins.charts.items()):
        version = split(pin)[0]
        release = releases.get(key)
        if release is None:
            yield error(f"digests.charts.{key}", f"pins chart {key}, which this stack does not install",
                        f"remove the pin (the stack installs {', '.join(sorted(releases)) or 'no chart'})")
        elif version.removeprefix("v") != release.version.removeprefix("v"):
            chart = charts.CHARTS[key]
            yield error(f"digests.charts.{key}", f"pins {key} {version}, but the stack installs {release.version}: "
                        "Helm would refuse the chart (its digest is another version's)",
                        f"pin {release.version}@<its digest> (`helm pull {chart.reference} --version "
                        f"{release.version}` prints it), or install {version}")
    running = _run_images(plan)
    for repository, pin in sorted(pins.images.items()):
        tag = split(pin)[0]
        if repository not in running:
            yield error(f"digests.images.{repository}", "pins an image none of the stack's releases runs",
                        "pin one of the repositories they run: " + (", ".join(sorted(running)) or "none"))
            continue
        release, run = running[repository]
        expected = run.image.tag_of(release.version) if run.image.tag_of else None
        if expected is not None and dig(plan.spec.helm_values.get(release.key) or {},  # type: ignore[call-overload]
                                        run.image.tag, _UNSET) is _UNSET and tag != expected:
            yield error(f"digests.images.{repository}",
                        f"pins tag {tag}, but {release.key} {release.version} runs {expected}: the digest would run "
                        "another release's image under this one's chart",
                        f"pin {expected}@<its digest>, or set chartVersions.{release.key} to the release of {tag}")
        override = plan.spec.helm_values.get(release.key) or {}  # type: ignore[call-overload]
        for path in (run.image.tag, run.image.digest):
            if path and dig(override, path, _UNSET) is not _UNSET:
                yield error(f"helmValues.{release.key}.{path}",
                            f"sets the tag of an image that digests.images pins ({repository}): the pin writes it",
                            f"remove helmValues.{release.key}.{path}; the pin names the tag ({pin})")


@rule("digests-complete", "a stack that pins charts or images by digest pins every one it installs that can be "
      "(warning)")
def _complete(plan: Plan) -> Iterator[Verdict]:
    pins = plan.spec.digests
    if not (pins.charts or pins.images):
        return
    charts_left = sorted({r.key for r in installed(plan) if charts.CHARTS[r.key].is_oci} - set(pins.charts))
    images_left = sorted(set(_run_images(plan)) - set(pins.images))
    for missing in [*(f"digests.charts.{k}" for k in charts_left), *(f"digests.images.{r}" for r in images_left)]:
        yield warning(missing, f"the stack pins some of what it installs but not {missing}: it is pulled by tag, "
                               "which the registry can move",
                      f"add {missing} (docs/security.md says how to read each digest)")
