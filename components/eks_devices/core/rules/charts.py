"""Chart rules: overrides the upstream charts themselves refuse to render (`knowledge/chart_refusals.py`)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from eks_devices.core.knowledge import chart_refusals, charts
from eks_devices.core.model import Plan
from eks_devices.core.rules.registry import Verdict, error, rule
from eks_devices.core.values import dig

_UNSET = object()


@rule("chart-render-refused", "no device release's merged values hit its chart's own `fail` (validation "
      "templates at the pinned version): such a release never installs and leaves its pools unserved",
      modes=("karpenter", "managed-node-groups"))
def _chart_render_refused(plan: Plan) -> Iterator[Verdict]:
    for release in plan.releases.values():
        override = plan.spec.helm_values.get(release.key) or {}  # type: ignore[call-overload]
        chart = charts.CHARTS[release.key].chart
        for refusal in chart_refusals.refusals(release.key, release.version, release.values):
            blamed = next((p for p in refusal.paths if dig(override, p, _UNSET) is not _UNSET), refusal.paths[0])
            value = dig(release.values, blamed, _UNSET)
            given = "unset" if value is _UNSET else json.dumps(value, sort_keys=True)
            yield error(f"helmValues.{release.key}.{blamed}",
                        f"chart {chart} {release.version} refuses to render: {refusal.problem} ({blamed} given "
                        f"{given}); release {release.key} never installs, so pools {', '.join(release.pools)} "
                        f"run no {release.family} {release.manager}",
                        f"accepted: {refusal.accepted}; change or remove helmValues.{release.key}.{blamed}")
