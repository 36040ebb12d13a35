"""The CLI's verbs run in this process on one stack file, as a user runs them, for the property-based CLI
test and `scripts/fuzz.py`: a scratch project (this checkout's Pulumi.yaml and program), the stack written
as YAML, `check`, `preview` and `render` invoked through the Typer app, and what each ended with."""

from __future__ import annotations

import gc
import shutil
import time
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from eks_devices.cli.app import app
from eks_devices.core.vocabulary import NAMESPACE
from support.stacks import ROOT

STACK = "fuzz"
VERBS = ("check", "preview", "render")


@dataclass(frozen=True)
class Outcome:
    """How one verb ended: its exit code, the traceback of an exception that escaped it, its seconds."""

    verb: str
    code: int
    crash: str | None
    seconds: float


def project(folder: Path) -> Path:
    """A scratch Pulumi project in `folder`: this checkout's Pulumi.yaml and program, an empty stacks folder."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copyfile(ROOT / name, folder / name)
    (folder / "stacks").mkdir(exist_ok=True)
    return folder


def write(folder: Path, config: Mapping[str, Any]) -> None:
    """The stack file of `config` in the project at `folder`, as YAML."""
    text = yaml.safe_dump({"config": dict(config)}, allow_unicode=True, sort_keys=False)
    (folder / "stacks" / f"Pulumi.{STACK}.yaml").write_text(text, encoding="utf-8")


def arguments(verb: str, folder: Path) -> list[str]:
    """The command line of `verb` on the scratch stack, with JSON output."""
    tail = ["--project-dir", str(folder)]
    if verb == "check":
        return ["check", STACK, "--format", "json", *tail]
    if verb == "render":
        return ["render", STACK, "--out", str(folder / "rendered"), "--json", *tail]
    return [verb, STACK, "--json", *tail]


def run(verb: str, folder: Path) -> Outcome:
    """Run `verb` on the stack written in `folder`; the collector the verbs switch off is switched back
    on after (a process runs many stacks here, not one)."""
    shutil.rmtree(folder / "rendered", ignore_errors=True)
    started = time.perf_counter()
    try:
        result = CliRunner().invoke(app, arguments(verb, folder), catch_exceptions=True)
    finally:
        gc.unfreeze()
        gc.enable()
    crash = None
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        crash = "".join(traceback.format_exception(result.exception))
    return Outcome(verb, result.exit_code, crash, time.perf_counter() - started)


def mismatch(outcomes: Mapping[str, Outcome], config: Mapping[str, Any]) -> str | None:
    """What is inconsistent between the verbs' verdicts on the stack `config`, else None. `check` is the
    reference: `preview` and `render` end as it does, except that they refuse a stack describing an
    existing cluster with 2 (the project's program would create one)."""
    check = outcomes["check"].code
    cluster = config.get(f"{NAMESPACE}:cluster")
    program = 2 if isinstance(cluster, dict) and cluster.get("existing") is True else check
    expected = {"preview": program, "render": program}
    wrong = [f"{verb} exited {o.code}" for verb, o in outcomes.items()
             if verb in expected and o.code != expected[verb]]
    return f"check exited {check} but " + ", ".join(wrong) if wrong else None
