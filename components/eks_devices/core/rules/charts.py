"""Chart rules: overrides the upstream charts themselves refuse to render (each chart's `refusals` in
`knowledge/charts/`)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from eks_devices.core.derive.resources import Facts
from eks_devices.core.knowledge import charts, karpenter_metadata
from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Blame, Verdict, error, on_resources, rule, warning
from eks_devices.core.values import dig

_UNSET = object()


@rule("chart-render-refused", "no device release's merged values hit its chart's own `fail` (validation "
      "templates at the pinned version): such a release never installs and leaves its pools unserved",
      modes=("karpenter", "managed-node-groups"))
def _chart_render_refused(plan: Plan) -> Iterator[Verdict]:
    for release in plan.releases.values():
        override = plan.spec.helm_values.get(release.key) or {}  # type: ignore[call-overload]
        chart = charts.CHARTS[release.key].chart
        for refusal in charts.refusals(release.key, release.version, release.values):
            blamed = next((p for p in refusal.paths if dig(override, p, _UNSET) is not _UNSET), refusal.paths[0])
            value = dig(release.values, blamed, _UNSET)
            given = "unset" if value is _UNSET else json.dumps(value, sort_keys=True)
            yield error(f"helmValues.{release.key}.{blamed}",
                        f"chart {chart} {release.version} refuses to render: {refusal.problem} ({blamed} given "
                        f"{given}); release {release.key} never installs, so its pools ({', '.join(release.pools)}) "
                        f"get no {release.family} {release.manager}",
                        f"accepted: {refusal.accepted}; change or remove helmValues.{release.key}.{blamed}")


@on_resources("chart-render-refused")
def _chart_render_refused_resources(facts: Facts) -> Iterator[Blame]:
    """Releases of a known chart whose values hit the chart's own `fail`; an unpinned release is judged
    by the newest template modelled."""
    for inst in facts.installers:
        if inst.chart_key is None:
            continue
        for refusal in charts.refusals(inst.chart_key, inst.version or "999.0.0", inst.values):
            yield Blame(inst.urn, f"{inst.what} cannot install: the chart refuses to render ({refusal.problem}). "
                        f"Set {refusal.accepted}")


def _known(key: str, pinned: str) -> str:
    """The fix's list: the newest known releases of a chart, and the toolkit's pin."""
    releases = charts.RELEASES[key]
    shown = releases.versions[-6:]
    more = f" (and {len(releases.versions) - len(shown)} older)" if len(releases.versions) > len(shown) else ""
    return f"{', '.join(shown)}{more}; the toolkit pins {pinned}"


@rule("chart-version-known", "`chartVersions` and Karpenter's version name releases the toolkit knows "
      "(`charts.RELEASES`, read upstream); its models of each chart were checked against those (warning; for "
      "Karpenter it names the known release whose DRA device metadata it takes)")
def _chart_version_known(plan: Plan) -> Iterator[Verdict]:
    pinned: dict[str, str] = dict(plan.spec.chart_versions)
    if plan.mode == "karpenter" and plan.karpenter is not None:
        pinned["karpenter"] = plan.karpenter.version
    for key, version in sorted(pinned.items()):
        releases = charts.RELEASES[key]
        if releases.knows(version):
            continue
        path = "cluster.karpenter.version" if key == "karpenter" else f"chartVersions.{key}"
        metadata = (f"; Karpenter's DRA device metadata is taken from {karpenter_metadata.for_version(version).release}"
                    ", the nearest release the toolkit knows" if key == "karpenter" else "")
        yield warning(path, f"{charts.CHARTS[key].chart} {version} is not a release the toolkit knows (newest known: "
                      f"{releases.newest}): the chart's refusals, placement and values were checked against the "
                      f"known releases only{metadata}",
                      f"set {path} to a known release: {_known(key, charts.CHARTS[key].version)}"
                      + ("" if key == "karpenter" else f"; or remove {path}"))
