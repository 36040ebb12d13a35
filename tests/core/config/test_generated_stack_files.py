"""Property-based: stack files generated around the real schema (support/generated.py: composed, and
shipped or composed ones mutated) go through what the CLI does with them — read, parse, plan, report as
JSON — and end only in a plan (exit 0 or 1) or a ConfigError whose every problem names a config path
(exit 2), never a traceback. Fixed seed and budget, so the run is repeatable and fast."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings

from eks_devices import ConfigError, build
from eks_devices.cli.report import plan_data
from eks_devices.core.config import stack_file
from eks_devices.core.config.stack import parse
from support import generated


def run_as_the_cli(config: dict[str, Any], tmp: Path) -> int:
    """read → parse → plan → JSON report, as `eks-devices preview --json` starts; returns the exit code."""
    path = tmp / "Pulumi.fuzz.yaml"
    path.write_text(yaml.safe_dump({"config": config}, allow_unicode=True))
    try:
        plan = build(parse(stack_file.read_config(path), source=str(path)))
    except ConfigError as exc:
        assert exc.problems and all(p.path for p in exc.problems), exc
        return 2
    json.dumps(plan_data(plan), sort_keys=True)
    # what was accepted must reach Pulumi and the APIs intact: JSON-shaped config, names without whitespace
    json.dumps(config, allow_nan=False)
    names = [plan.spec.cluster.name, plan.spec.cluster.version, *plan.pools,
             *(k for p in plan.pools.values() for k in p.labels), *(v for p in plan.pools.values() for v in p.labels.values()),
             *(r for p in plan.pools.values() for r in p.config.capacity_reservation_ids)]
    assert not [n for n in names if any(c.isspace() for c in n)], names
    return 1 if plan.errors else 0


@settings(max_examples=250, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(config=generated.stacks())
def test_generated_stacks_end_in_a_plan_or_config_problems(config: dict[str, Any], tmp_path: Path) -> None:
    assert run_as_the_cli(config, tmp_path) in (0, 1, 2)


YAML_TEXTS = ["config:\n  eks-devices:cluster:\n    name: !!int c\n",
              "config:\n  eks-devices:helmValues:\n    karpenter: &a [*a]\n",
              "config:\n  eks-devices:helmValues:\n    karpenter: {~: 1}\n",
              "config:\n  eks-devices:cluster: {name: ml, version: '1.36', mode: karpenter}\n"
              "  eks-devices:helmValues: {karpenter: {x: .nan, y: 2026-01-01}}\n"]


def test_hand_written_yaml_edge_cases_are_config_problems(tmp_path: Path) -> None:
    for text in YAML_TEXTS:
        path = tmp_path / "Pulumi.t.yaml"
        path.write_text(text)
        try:
            build(parse(stack_file.read_config(path)))
        except ConfigError as exc:
            assert all(p.path for p in exc.problems)
        else:
            raise AssertionError(f"accepted: {text!r}")
