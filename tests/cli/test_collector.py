"""`preview` runs the program with the cyclic collector off, but for the young generation while the
program's registrations resolve (`cli/collector.py`): the SDK's garbage cycles are made then."""

from __future__ import annotations

import gc
from typing import Any

import pytest
from typer.testing import CliRunner

from eks_devices import Platform
from eks_devices.cli import collector
from eks_devices.cli.app import app
from eks_devices.offline import engine, preview
from support.stacks import ROOT


def _collector() -> tuple[bool, tuple[int, int, int]]:
    return gc.isenabled(), gc.get_threshold()


def test_the_collector_walks_the_young_generation_only_while_the_registrations_resolve(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, list[tuple[bool, tuple[int, int, int]]]] = {"body": [], "registering": [], "output": []}
    from_plan, register, resources_data = Platform.from_plan.__func__, engine.RecordingMonitor.RegisterResource, \
        preview.resources_data

    def planned(cls: type[Platform], *args: Any, **kwargs: Any) -> Platform:
        seen["body"].append(_collector())
        return from_plan(cls, *args, **kwargs)

    def registering(self: engine.RecordingMonitor, request: Any) -> Any:
        seen["registering"].append(_collector())
        return register(self, request)

    def output(recording: engine.Recording) -> list[dict[str, Any]]:
        seen["output"].append(_collector())
        return resources_data(recording)

    monkeypatch.setattr(Platform, "from_plan", classmethod(planned))
    monkeypatch.setattr(engine.RecordingMonitor, "RegisterResource", registering)
    monkeypatch.setattr(preview, "resources_data", output)
    try:
        result = CliRunner().invoke(app, ["preview", "dev", "--json", "--project-dir", str(ROOT)])
        after = _collector()
    finally:
        gc.unfreeze()
        gc.enable()
    assert result.exit_code == 0, result.output
    young = (True, (collector._YOUNG, collector._NEVER, collector._NEVER))
    assert seen["body"] == [(False, collector._DEFAULT)]
    # the body's own calls to the engine (the stack, providers, invokes) let some registrations through early
    registering = seen["registering"]
    resolving = registering.index(young)
    assert set(registering[:resolving]) <= {(False, collector._DEFAULT)} and set(registering[resolving:]) == {young}
    assert seen["output"] == [(False, collector._DEFAULT)] and after == (False, collector._DEFAULT)
