"""Property-based: stack files generated around the real schema (the shipped stacks, mutated) go
through what the CLI does with them — read, parse, plan, report as JSON — and end only in a plan
(exit 0 or 1) or a ConfigError whose every problem names a config path (exit 2), never a
traceback. Fixed seed and budget, so the run is repeatable and fast."""

from __future__ import annotations

import copy
import datetime
import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from eks_devices import ConfigError, build
from eks_devices.cli.report import plan_data
from eks_devices.core.config import stack_file
from eks_devices.core.config.stack import parse

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = [yaml.safe_load(p.read_text())["config"] for p in sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 300), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["", "gpu\n", "1.36\n", "auto", "dra", "device-plugin", "none", "static", "p5.48xlarge",
                     "g6e.xlarge", "trn1.32xlarge", "cr-0123456789abcdef0\n", "1.15.0", "bottlerocket",
                     "us-west-2a", "10.0.0.0/8", "spot", "x" * 300, "Ünïcode", "device.driver == 'x'",
                     "1" + "+1" * 1200 + " > 0"]),
    st.dates(min_value=datetime.date(2020, 1, 1), max_value=datetime.date(2030, 1, 1)),
    st.binary(max_size=4),
)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "instanceTypes", "devices", "nvidia", None]),
                                                 inner, max_size=3)), max_leaves=6)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for key, child in node.items():
            out += paths(child, (*prefix, key))
    elif isinstance(node, list):
        for i, child in enumerate(node):
            out += paths(child, (*prefix, i))
    return out


@st.composite
def raw_claims(draw: st.DrawFn, pools: list[str]) -> dict[str, Any]:
    """A claim in the raw request shape, its selector and opaque parameters drawn."""
    request = {"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com",
                                        "selectors": [{"cel": {"expression": draw(scalars)}}]}}
    claim: dict[str, Any] = {"pools": [draw(st.sampled_from(pools))], "requests": [request]}
    if draw(st.booleans()):
        claim["config"] = [{"opaque": {"driver": "gpu.nvidia.com", "parameters": {
            "apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig", "x": draw(values)}}}]
    return claim


@st.composite
def stacks(draw: st.DrawFn) -> dict[str, Any]:
    config = copy.deepcopy(draw(st.sampled_from(SHIPPED)))
    pools = sorted(config.get("eks-devices:nodePools") or {}) or ["none"]
    if draw(st.booleans()):
        config.setdefault("eks-devices:claims", {})["raw"] = draw(raw_claims(pools))
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["replace", "delete", "rename", "add", "suffix", "free-form", "free-form"]))
        if action == "free-form":  # helmValues are free-form: whatever YAML can hold arrives here
            chart = draw(st.sampled_from(["karpenter", "nvidia-dra-driver", "aws-dranet"]))
            config.setdefault("eks-devices:helmValues", {}).setdefault(chart, {})["x"] = draw(values)
            continue
        where = draw(st.sampled_from(paths(config)[1:]))
        parent = config
        for key in where[:-1]:
            parent = parent[key]
        last = where[-1]
        if action == "suffix":  # a valid value with something after it: a trailing newline or space
            if isinstance(parent, dict) and isinstance(last, str) and draw(st.booleans()):
                parent[last + draw(st.sampled_from(["\n", " "]))] = parent.pop(last)
            elif isinstance(parent[last], str):
                parent[last] += draw(st.sampled_from(["\n", " "]))
        elif action == "replace":
            parent[last] = draw(values)
        elif action == "delete" and isinstance(parent, dict):
            del parent[last]
        elif action == "rename" and isinstance(parent, dict) and isinstance(last, str):
            snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in last)
            parent[draw(st.sampled_from([snake, last.replace("eks-devices", "eks-device"), last + "s"]))] = \
                parent.pop(last)
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "gpuSharing", "labels", "replicas"]))] = draw(values)
    return config


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
@given(config=stacks())
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
