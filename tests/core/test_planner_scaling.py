"""Planning grows linearly with the number of node pools: no rule or derivation walks pairs of pools.

The work is counted as Python function calls (deterministic, unlike time on a shared machine) for
the benchmark's synthetic stacks (bench/preview.py) at N, 2N and 4N pools: linear growth adds the
same work per doubling twice, a pairwise walk adds four times as much the second time.
"""

from __future__ import annotations

import cProfile
import pstats

import pytest

from bench.preview import stack
from eks_devices.core import planner
from eks_devices.core.config.stack import parse

SIZES = (20, 40, 80)


def calls(config: dict) -> int:
    """Function calls made by planning `config` (parse excluded)."""
    spec = parse(config, source="scaling")
    profile = cProfile.Profile()
    profile.runcall(planner.build, spec)
    return pstats.Stats(profile).total_calls  # type: ignore[attr-defined]


@pytest.mark.parametrize("mode", ["karpenter", "auto-mode", "managed-node-groups"])
def test_planning_grows_linearly_with_pools(mode: str) -> None:
    counts = []
    for size in SIZES:
        config = stack(size)["config"]
        config["eks-devices:cluster"]["mode"] = mode
        if mode == "managed-node-groups":  # node groups are static: a node count each
            for pool in config["eks-devices:nodePools"].values():
                pool.setdefault("replicas", 1)
        counts.append(calls(config))
    first, second = counts[1] - counts[0], counts[2] - counts[1]
    assert first > 0
    # twice the pools added: linear work doubles the increment, quadratic work quadruples it
    assert second <= 2.15 * first, f"{mode}: calls at {SIZES} pools: {counts} (grows faster than the pools)"
