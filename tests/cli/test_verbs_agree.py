"""Property-based, over the whole CLI: generated stack files (support/generated.py) through `check`,
`preview` and `render` as a user runs them. No verb ends in a traceback, the three agree on the verdict
(render's schema validation included: a stack `check` accepts renders objects the schemas accept), and
render writes files exactly when it exits 0. Fixed seed and a small budget; `scripts/fuzz.py` runs the
same at scale."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from support import generated, verbs


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return verbs.project(tmp_path_factory.mktemp("project"))


def run_all(folder: Path, config: dict[str, Any]) -> dict[str, verbs.Outcome]:
    verbs.write(folder, config)
    outcomes = {verb: verbs.run(verb, folder) for verb in verbs.VERBS}
    crashes = [o.crash for o in outcomes.values() if o.crash]
    assert not crashes, crashes[0]
    assert verbs.mismatch(outcomes, config) is None, outcomes
    written = [p for p in (folder / "rendered").rglob("*") if p.is_file()] if (folder / "rendered").exists() else []
    assert bool(written) == (outcomes["render"].code == 0), (outcomes["render"], written[:3])
    return outcomes


@settings(max_examples=12, deadline=None, derandomize=True, database=None, phases=[Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(config=generated.stacks())
def test_check_preview_and_render_agree_without_a_traceback(folder: Path, config: dict[str, Any]) -> None:
    run_all(folder, config)


def test_the_verbs_agree_on_accepted_erroneous_refused_and_existing_cluster_stacks(folder: Path) -> None:
    """The property's verdicts each met at least once, so the property above cannot pass on refusals
    alone; an existing cluster's stack is refused by both verbs that run the program."""
    dev = generated.SHIPPED[0]
    existing = {"name": "x", "version": "1.35", "mode": "karpenter", "existing": True,
                "karpenter": {"version": "1.15.0", "settings": {"enableDRA": True}}}
    seen = [(o["check"].code, o["render"].code) for o in (run_all(folder, config) for config in (
        dev,
        {**dev, "eks-devices:nodePools": {"p": {"instanceTypes": ["g6.xlarge"], "devices": {"neuron": "dra"}}}},
        {**dev, "eks-devices:cluster": {"name": "x"}},
        {"eks-devices:cluster": existing, "eks-devices:nodePools": {"p": {"instanceTypes": ["g6.xlarge"]}}},
    ))]
    assert seen == [(0, 0), (1, 1), (2, 2), (0, 2)]


def test_the_generator_reaches_every_verdict() -> None:
    """Of the stacks the property draws, some are accepted, some carry error findings, some are refused."""
    from eks_devices import ConfigError, build, parse

    codes: set[int] = set()

    @settings(max_examples=60, deadline=None, derandomize=True, database=None, phases=[Phase.generate])
    @given(config=generated.stacks())
    def draw(config: dict[str, Any]) -> None:
        try:
            codes.add(1 if build(parse(config)).errors else 0)
        except ConfigError:
            codes.add(2)

    draw()
    assert codes == {0, 1, 2}

