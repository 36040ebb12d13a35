"""The plan is built once per run: a runner that already planned a stack hands the plan to the program."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from eks_devices.core import planner
from eks_devices.core.config import stack_file
from eks_devices.offline.preview import resources_data, run_program
from eks_devices.program import _HANDED
from support import stacks, verbs


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every planning.build call made from here on, by anyone."""
    calls: list[Any] = []
    original = planner.build

    def build(spec: Any) -> planner.Plan:
        calls.append(spec)
        return original(spec)

    monkeypatch.setattr(planner, "build", build)
    return calls


def test_the_program_takes_the_handed_plan_and_registers_the_same_resources(monkeypatch: pytest.MonkeyPatch) -> None:
    config = stacks.shipped("dev")
    plan = stacks.build(config)
    calls = _counted(monkeypatch)
    handed = run_program(stacks.ROOT, "dev", config, plan)
    assert calls == []  # the program did not plan again
    planned = run_program(stacks.ROOT, "dev", config)
    assert len(calls) == 1  # without a plan it plans itself
    assert resources_data(handed.recording) == resources_data(planned.recording)
    assert handed.recording.exports == planned.recording.exports
    assert _HANDED.get() is None  # nothing outlives the run


def test_a_plan_for_another_configuration_is_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    other = stacks.build(stacks.shipped("staging"))
    calls = _counted(monkeypatch)
    run = run_program(stacks.ROOT, "dev", stacks.shipped("dev"), None)
    base = len(calls)
    config = stacks.shipped("dev")
    from eks_devices.program import handed_plan  # the handed plan is checked against the running stack's config

    with handed_plan(stacks.shipped("staging"), other):
        again = run_program(stacks.ROOT, "dev", config)
    assert len(calls) == base + 1  # dev was planned: staging's plan does not fit its configuration
    assert resources_data(again.recording) == resources_data(run.recording)


@pytest.mark.parametrize("verb", ["preview", "render"])
def test_a_verb_running_the_program_reads_and_plans_the_stack_file_once(
        verb: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = verbs.project(tmp_path)
    verbs.write(folder, stacks.shipped("dev"))
    reads: list[Path] = []
    original = stack_file.read_config

    def read_config(path: Path) -> dict[str, Any]:
        reads.append(path)
        return original(path)

    monkeypatch.setattr(stack_file, "read_config", read_config)
    calls = _counted(monkeypatch)
    outcome = verbs.run(verb, folder)
    assert (outcome.code, outcome.crash) == (0, None)
    assert reads == [folder / "stacks" / f"Pulumi.{verbs.STACK}.yaml"]  # the program runs with the configuration read
    assert len(calls) == 1
