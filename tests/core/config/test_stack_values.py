"""Values JSON cannot carry, oversized or self-containing configurations and ill-formed YAML tags
are configuration problems with their path, never a traceback or a misleading exit code."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from eks_devices import ConfigError, parse
from eks_devices.core import cel
from eks_devices.core.config import stack_file
from eks_devices.core.config.values import MAX_VALUES, value_problems

CLUSTER = {"name": "ml", "version": "1.36", "mode": "karpenter"}


def cyclic() -> list[Any]:
    items: list[Any] = []
    items.append(items)
    return items


@pytest.mark.parametrize(("value", "path", "words"), [
    ({"startedAt": datetime.date(2026, 1, 1)}, "helmValues.karpenter.startedAt", "quote dates"),
    ({"ratio": float("nan")}, "helmValues.karpenter.ratio", "finite number"),
    ({"ratio": float("inf")}, "helmValues.karpenter.ratio", "finite number"),
    ({"blob": b"\x00\x01"}, "helmValues.karpenter.blob", "a bytes"),
    ({"tags": {"a", "b"}}, "helmValues.karpenter.tags", "a set"),
    ({None: 1}, "helmValues.karpenter.None", "text keys"),
    ({1: "x"}, "helmValues.karpenter.1", "text keys"),
    ({"loop": cyclic()}, "helmValues.karpenter.loop.0", "contains itself"),
])
def test_values_json_cannot_carry_are_problems_at_their_path(value: Any, path: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse({"eks-devices:cluster": CLUSTER, "eks-devices:helmValues": {"karpenter": value}})
    (problem,) = caught.value.problems
    assert problem.path == path
    assert words in f"{problem.given} {problem.accepted}"


def test_a_value_under_a_key_the_toolkit_ignores_is_checked_too() -> None:
    with pytest.raises(ConfigError) as caught:
        parse({"eks-devices:cluster": CLUSTER, "other:setting": {"x": float("nan")}})
    assert [p.path for p in caught.value.problems] == ["other:setting.x"]


def test_an_expanding_configuration_stops_at_the_bound() -> None:
    leaf: list[Any] = [1] * 10
    for _ in range(8):  # 10**8 values once expanded, from a few objects
        leaf = [leaf] * 10
    (problem,) = value_problems({"x": leaf}, "helmValues")
    assert problem.path == "helmValues" and str(MAX_VALUES) in problem.given


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


@pytest.mark.parametrize("line", ["name: !!int c", "name: !!float x"])
def test_a_tag_that_does_not_fit_its_value_is_a_problem(tmp_path: Path, line: str) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_file.read_config(write(tmp_path, f"config:\n  eks-devices:cluster:\n    {line}\n"))
    assert "YAML tag" in caught.value.problems[0].given


def test_an_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    lines = ["config:", "  eks-devices:cluster: {name: ml, version: '1.36', mode: karpenter}",
             "  eks-devices:helmValues:", "    karpenter:", "      a0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    lines += [f"      a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 12)]
    config = stack_file.read_config(write(tmp_path, "\n".join(lines) + "\n"))
    with pytest.raises(ConfigError) as caught:
        parse(config)
    assert "more than" in caught.value.problems[0].given


def test_too_many_aliases_are_refused_while_reading(tmp_path: Path) -> None:
    uses = ", ".join(["*x"] * (stack_file.MAX_ALIASES + 1))
    with pytest.raises(ConfigError) as caught:
        stack_file.read_config(write(tmp_path, f"base: &x 1\nconfig:\n  other:list: [{uses}]\n"))
    assert "aliases" in caught.value.problems[0].given


def test_an_oversized_file_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        stack_file.read_config(write(tmp_path, b"#" * (stack_file.MAX_BYTES + 1)))
    assert "bytes" in caught.value.problems[0].given


@pytest.mark.parametrize("expression", ["1" + "+1" * 1200 + " > 0", "1.5.map(x, x)"])
def test_cel_that_the_evaluator_cannot_run_is_a_cel_error(expression: str) -> None:
    with pytest.raises(cel.CelError):
        cel.evaluate(expression, cel.device("gpu.nvidia.com", {"type": "gpu"}))
