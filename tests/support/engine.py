"""The mock-engine harness: run the real program (`__main__.py`) or a callable under
`eks_devices.offline.engine`'s mocks and return the recording, plus small queries over recordings."""

from __future__ import annotations

import json
import runpy
from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from eks_devices.cli.report import plan_data
from eks_devices.offline import engine as offline
from eks_devices.offline.engine import ACCOUNT_ID, OfflineMocks, Recording, Registered
from support import stacks
from support.stacks import ROOT

MAIN = ROOT / "__main__.py"

__all__ = ["ACCOUNT_ID", "MAIN", "OfflineMocks", "Recording", "Registered", "ancestors", "counts_under", "ints",
           "keyed", "main", "of_type", "one", "refused", "registrations", "run", "run_and_plan"]

_RUNS: dict[str, tuple[Recording, dict[str, Any]]] = {}


def run(program: Callable[[], Any], config: dict[str, Any], *, stack: str = "test",
        project: str = "eks-devices", mocks: offline.OfflineMocks | None = None) -> Recording:
    """Run `program` (registering resources) under the mock engine with `config` (and `mocks`);
    exceptions it raises propagate."""
    return offline.run(program, config, stack=stack, project=project, mocks=mocks)


def main(config: dict[str, Any], *, stack: str = "test", path: Path = MAIN,
         then: Callable[[dict[str, Any]], Any] | None = None, project: str = "eks-devices",
         mocks: offline.OfflineMocks | None = None) -> Recording:
    """Run a program file (the root `__main__.py` unless `path` says) under the mock engine; `then`
    gets the program's globals inside the run (to export probes of what it built)."""

    def program() -> None:
        namespace = runpy.run_path(str(path))
        if then is not None:
            then(namespace)

    return run(program, config, stack=stack, project=project, mocks=mocks)


def raising(program: Callable[[], Any], config: dict[str, Any], error: type[BaseException], *,
            stack: str = "test") -> tuple[Recording, BaseException]:
    """Run `program` expecting it to raise `error`: what was registered, and the error (an
    AssertionError if the program finished)."""
    caught: list[BaseException] = []

    def guarded() -> None:
        try:
            program()
        except error as exc:
            caught.append(exc)

    rec = run(guarded, config, stack=stack)
    assert caught, f"the program did not raise {error.__name__}"
    return rec, caught[0]


def refused(config: dict[str, Any], error: type[BaseException], *, stack: str = "test",
            path: Path = MAIN) -> tuple[Recording, BaseException]:
    """Run a program file expecting it to raise `error` (see `raising`)."""
    return raising(lambda: runpy.run_path(str(path)), config, error, stack=stack)


def of_type(rec: Recording, *types: str) -> list[Registered]:
    """Resources of any of `types`, in registration order."""
    return [r for r in rec.resources if r.type in types]


def one(resources: Iterable[Registered]) -> Registered:
    """The single resource of a selection (an AssertionError naming the count otherwise)."""
    found = list(resources)
    assert len(found) == 1, f"{len(found)} resources: {[r.name for r in found]}"
    return found[0]


def keyed(resources: Iterable[Registered], prefix: str = "", suffix: str = "") -> dict[str, Registered]:
    """Resources by logical name without `prefix` and `suffix` (names must be distinct)."""
    out = {r.name.removeprefix(prefix).removesuffix(suffix): r for r in resources}
    return out


def registrations(rec: Recording, **left_out: None) -> list[dict[str, Any]]:
    """What the engine is told about each resource, in URN order: its inputs decoded (the bytes on the
    wire may order a map's keys differently), dependencies as a set, outputs left out, and each field
    named in `left_out` set to None."""
    out = [asdict(r) | {"wire": None, "inputs": r.inputs, "outputs": None, "depends_on": sorted(r.depends_on),
                        **left_out} for r in rec.resources]
    return sorted(out, key=lambda r: r["urn"])


def ancestors(rec: Recording, resource: Registered) -> list[str]:
    """Types of a resource's parents, nearest first (from the parents the engine was told)."""
    by_urn = {r.urn: r for r in rec.resources}
    out, parent = [], by_urn.get(resource.parent)
    while parent is not None:
        out.append(parent.type)
        parent = by_urn.get(parent.parent)
    return out


def counts_under(rec: Recording, owners: Iterable[str]) -> dict[str, int]:
    """Counts per type of the `owners` components and everything beneath them."""
    owners = set(owners)
    counts: dict[str, int] = {}
    for r in rec.resources:
        if r.type in owners or owners & set(ancestors(rec, r)):
            counts[r.type] = counts.get(r.type, 0) + 1
    return dict(sorted(counts.items()))


def ints(value: Any) -> Any:
    """`value` with integral floats as ints (the engine carries numbers as floats)."""
    if isinstance(value, dict):
        return {k: ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [ints(v) for v in value]
    return int(value) if isinstance(value, float) and value.is_integer() else value


def run_and_plan(config: dict[str, Any], stack: str) -> tuple[Recording, dict[str, Any]]:
    """The program's recording and the plan's data for a config, each config run once per test process (the
    baselines and after-states the diff tests compare)."""
    key = json.dumps([config, stack], sort_keys=True)
    if key not in _RUNS:
        _RUNS[key] = main(config, stack=stack), plan_data(stacks.build(config))
    return _RUNS[key]
