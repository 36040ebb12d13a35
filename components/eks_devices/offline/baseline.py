"""The baseline `eks-devices diff` compares a stack with: a stack file, the stack's file at a git
revision, or the JSON of a deployed stack's `devicePlan` output (which carries the stack's config).

Whatever its form, the baseline becomes a stack `config:` mapping, and this checkout's program runs
for it: the diff shows what the configuration change does, under the toolkit version in hand. A git
revision's Pulumi.yaml `config:` is merged into it, as that revision was deployed with.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eks_devices.core.config import stack_file
from eks_devices.core.config.stack import ConfigProblem

ACCEPTED = ("a stack file, a git revision of the stack's file (HEAD~1, origin/main, a tag or commit), "
            "or the JSON of `pulumi stack output devicePlan --json`")


class BaselineError(Exception):
    """The baseline cannot be used; `problems` say why, each with what was given and what is accepted."""

    def __init__(self, problems: list[ConfigProblem]):
        self.problems = problems
        super().__init__("; ".join(f"{p.path}: {p.given} ({p.accepted})" for p in problems))


@dataclass(frozen=True)
class Baseline:
    config: dict[str, Any]
    source: str  # how the report names it: the path, `<rev>:<path>`, or `devicePlan output <path>`
    kind: str  # stack-file | git-revision | device-plan
    # a git revision's Pulumi.yaml and how to name it: its `config:` is what that revision's stack was
    # deployed with (None: the project's Pulumi.yaml on disk, also when the revision has none there)
    pulumi_yaml: tuple[bytes, str] | None = None


def resolve(against: str, stack: str, project: Path, cwd: Path | None = None) -> Baseline:
    """Read the baseline named by `--against`: an existing file is a stack file or devicePlan JSON;
    anything else is a git revision of `<stackConfigDir>/Pulumi.<stack>.yaml`."""
    path = Path(against) if Path(against).is_absolute() else (cwd or Path.cwd()) / against
    if against and path.is_file():
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise BaselineError([ConfigProblem("--against", f"{against} (unreadable: {exc.strerror})",
                                               ACCEPTED)]) from None
        if raw.lstrip()[:1] == b"{":
            return Baseline(device_plan_config(raw, against), f"devicePlan output {against}", "device-plan")
        return Baseline(stack_file.config_of(raw, against), against, "stack-file")
    return _git_revision(against, stack, project)


def device_plan_config(raw: bytes, source: str) -> dict[str, Any]:
    """The stack config a `devicePlan` output carries (its `stackConfig` key)."""
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BaselineError([ConfigProblem("--against", f"{source}: not JSON ({exc})", ACCEPTED)]) from None
    config = data.get("stackConfig") if isinstance(data, dict) else None
    if not isinstance(config, dict) or not all(isinstance(k, str) for k in config):
        raise BaselineError([ConfigProblem(
            "--against", f"{source}: JSON without a stackConfig mapping",
            "the devicePlan output of a stack deployed with this toolkit version or later (it exports the "
            "stack's config as devicePlan.stackConfig); for an older deployment, pass the stack file or "
            "the git revision it was deployed from")])
    return config


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60, check=False)


def _git_revision(revision: str, stack: str, project: Path) -> Baseline:
    if not revision or revision.startswith("-") or any(c in revision for c in "\0\n"):
        raise BaselineError([ConfigProblem("--against", repr(revision), ACCEPTED)])
    if shutil.which("git") is None:
        raise BaselineError([ConfigProblem("--against", f"{revision!r}, no file of that name, and git is not "
                                                        "installed to read it as a revision", ACCEPTED)])
    top = _git(["rev-parse", "--show-toplevel"], project)
    if top.returncode != 0:
        raise BaselineError([ConfigProblem("--against", f"{revision!r}: no file of that name, and the project "
                                                        "is not in a git repository", ACCEPTED)])
    root = Path(top.stdout.decode().strip()).resolve()
    stack_path = (stack_file.stacks_dir(project) / f"Pulumi.{stack}.yaml").resolve()
    try:
        relative = stack_path.relative_to(root).as_posix()
    except ValueError:
        raise BaselineError([ConfigProblem("--against", f"{revision!r}: the stack file is outside the git "
                                                        "repository", ACCEPTED)]) from None
    commit = _git(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{revision}^{{commit}}"], root)
    if commit.returncode != 0:
        raise BaselineError([ConfigProblem("--against", f"{revision!r}: neither a file nor a git revision",
                                           ACCEPTED)])
    sha = commit.stdout.decode().strip()
    shown = _git(["show", f"{sha}:{relative}"], root)
    if shown.returncode != 0:
        raise BaselineError([ConfigProblem("--against", f"{revision} ({sha[:12]}) has no {relative}",
                                           "a revision at which the stack file exists")])
    source = f"{revision}:{relative}"
    return Baseline(stack_file.config_of(shown.stdout, source), source, "git-revision",
                    _pulumi_yaml_at(revision, sha, project, root))


def _pulumi_yaml_at(revision: str, sha: str, project: Path, root: Path) -> tuple[bytes, str] | None:
    """The project's Pulumi.yaml as the revision has it, named `<rev>:<path>`; None when it has none there."""
    try:
        relative = (project / "Pulumi.yaml").resolve().relative_to(root).as_posix()
    except ValueError:
        return None
    shown = _git(["show", f"{sha}:{relative}"], root)
    return (shown.stdout, f"{revision}:{relative}") if shown.returncode == 0 else None
