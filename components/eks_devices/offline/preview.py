"""The offline preview: the project's real Pulumi program (`__main__.py`) run under the mock engine
with a stack's configuration, and the resulting resource tree.

Because the resources come from running the program itself, the preview cannot drift from what
`pulumi up` would register.
"""

from __future__ import annotations

import contextlib
import copy
import os
import runpy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eks_devices.core.config import stack_file
from eks_devices.core.model import Plan
from eks_devices.offline import engine as offline
from eks_devices.program import PlanRejected, handed_plan

if TYPE_CHECKING:
    from rich.console import Console

REMOTE_NOTE = "remote component: its provider expands it into more resources at deploy time"


@dataclass
class ProgramRun:
    recording: offline.Recording
    rejected: str | None  # the program's refusal (error findings), when it refused


def run_program(project_dir: Path, stack: str, config: dict[str, Any], plan: Plan | None = None,
                after_body: Callable[[], None] | None = None) -> ProgramRun:
    """Run the project's program (`<project_dir>/__main__.py`, or where Pulumi.yaml's `main` points)
    for `stack` of the project Pulumi.yaml names (`stack_file.ProjectInvalid` if it names none) under
    the mock engine; `plan`, when the caller already built it from `config`, is handed to the program
    (`program.handed_plan`) so it is not built twice; `after_body` as `engine.run` takes it."""
    entry = stack_file.program_entry(project_dir)
    main = entry / "__main__.py" if entry.is_dir() else entry
    if not main.is_file():
        raise FileNotFoundError(f"no Pulumi program: {main} does not exist")
    rejected: list[str] = []

    def program() -> None:
        try:
            runpy.run_path(str(entry), run_name="__main__")
        except PlanRejected as exc:
            rejected.append(str(exc))

    project = stack_file.project_name(project_dir)
    # as Pulumi's Python language host runs a program (pulumi/pulumi sdk/python/cmd/pulumi-language-python-exec):
    # in its folder, the whole run long (callbacks run after its body), which a folder entry also puts first
    # on sys.path (`runpy.run_path`)
    here = os.getcwd()
    os.chdir(entry if entry.is_dir() else entry.parent)
    try:
        with handed_plan(config, plan) if plan is not None else contextlib.nullcontext():
            recording = offline.run(program, config, stack=stack, project=project, after_body=after_body)
    finally:
        os.chdir(here)
    return ProgramRun(recording, rejected[0] if rejected else None)


def _key(r: offline.Registered) -> str:
    return r.urn


def _masked(inputs: dict[str, Any], secrets: list[tuple[str | int, ...]]) -> dict[str, Any]:
    """`inputs` with each secret shown as `[secret]`, as Pulumi shows one: a preview is read in
    reviews and CI logs, and the recording keeps the values for `diff` to compare."""
    if not secrets:
        return inputs
    out = copy.deepcopy(inputs)
    for *parents, last in secrets:
        holder: Any = out
        for step in parents:
            holder = holder[step]
        holder[last] = offline.SECRET
    return out


def resources_data(recording: offline.Recording) -> list[dict[str, Any]]:
    """Every registered resource, sorted by URN, with its parent, aliases and options."""
    by_urn = {r.urn: r for r in recording.resources}
    out = []
    for r in sorted(recording.resources, key=_key):
        parent = by_urn.get(r.parent)
        out.append({
            "type": r.type, "name": r.name, "urn": r.urn,
            "parent": f"{parent.type}::{parent.name}" if parent else None,
            # the URNs it waits for (explicit dependsOn and through its inputs), and its provider's URN
            "dependsOn": sorted(set(r.depends_on)), "provider": r.provider.rpartition("::")[0] if r.provider else None,
            "component": not r.custom, "remote": r.remote,
            "aliases": sorted(r.aliases),  # the old URNs it answers to: no replacement when only the URN moved
            "options": {"replaceOnChanges": sorted(r.replace_on_changes),
                        "deleteBeforeReplace": r.delete_before_replace, "protect": r.protect,
                        "retainOnDelete": r.retain_on_delete, "ignoreChanges": sorted(r.ignore_changes)},
            "inputs": _masked(r.inputs, r.secrets),
        })
    return out


def _children(recording: offline.Recording) -> dict[str, list[offline.Registered]]:
    known = {r.urn for r in recording.resources}
    children: dict[str, list[offline.Registered]] = {}
    for r in sorted(recording.resources, key=_key):
        children.setdefault(r.parent if r.parent in known else "", []).append(r)
    return children


def print_tree(console: Console, recording: offline.Recording, title: str) -> None:
    """Components as branches, their resources counted per type, like `pulumi preview`."""
    from rich.tree import Tree  # rich loads for the text report only, not for `--json`

    children = _children(recording)
    root = Tree(f"[bold]{title}[/bold]: {len(recording.resources)} resources")

    def add(branch: Tree, parent_urn: str, counts: dict[str, int] | None = None) -> None:
        own = counts is None
        counts = {} if counts is None else counts
        for r in children.get(parent_urn, []):
            if r.remote:
                branch.add(f"{r.type} [cyan]{r.name}[/cyan] [dim]({REMOTE_NOTE})[/dim]")
            elif not r.custom:
                add(branch.add(f"{r.type} [cyan]{r.name}[/cyan]"), r.urn)
            else:  # custom resources (and their own children) are counted on the component's branch
                counts[r.type] = counts.get(r.type, 0) + 1
                add(branch, r.urn, counts)
        if own:
            for type_, count in sorted(counts.items()):
                branch.add(f"{type_} x{count}")

    add(root, "")
    console.print(root)
