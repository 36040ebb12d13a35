"""`eks-devices check`: parse, plan and rules for stack files, without running the program — the
fast path for editors, pre-commit hooks and CI. Exit codes as for `preview` (0 clean, 1 error
findings, 2 configuration problems), the worst over the stacks checked."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eks_devices.core import planner
from eks_devices.core.config import stack_file
from eks_devices.core.config.errors import ConfigError, ConfigProblem
from eks_devices.core.model import Finding


@dataclass(frozen=True)
class StackCheck:
    """One stack file's verdict: its configuration problems, or its plan's findings."""

    name: str
    path: Path
    problems: tuple[ConfigProblem, ...] = ()
    findings: tuple[Finding, ...] = ()
    missing: bool = False

    @property
    def code(self) -> int:
        if self.missing or self.problems:
            return 2
        return 1 if any(f.severity == "error" for f in self.findings) else 0

    @property
    def verdict(self) -> str:
        """What the check found, in words: "clean" only when there is nothing to report."""
        if self.missing:
            return "no stack file"
        if self.problems:
            return _count(len(self.problems), "configuration problem")
        errors = sum(f.severity == "error" for f in self.findings)
        warnings = len(self.findings) - errors
        if not self.findings:
            return "clean"
        return ", ".join(([_count(errors, "error")] if errors else ["no errors"])
                         + ([_count(warnings, "warning")] if warnings else []))

    def as_dict(self) -> dict[str, Any]:
        return {"stack": self.name, "file": str(self.path), "exitCode": self.code, "missing": self.missing,
                "problems": [{"path": p.path, "given": p.given, "accepted": p.accepted} for p in self.problems],
                "findings": [f.as_dict() for f in self.findings]}


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@dataclass
class Checked:
    stacks: list[StackCheck] = field(default_factory=list)

    @property
    def code(self) -> int:
        return max((s.code for s in self.stacks), default=0)


def check(names: list[str], directory: Path, project: Path | None = None) -> Checked:
    """Check the named stacks (every stack file in `directory` when none is named), each with the
    config `project`'s Pulumi.yaml declares merged in."""
    out = Checked()
    for name in names or stack_file.stack_names(directory):
        path = directory / f"Pulumi.{name}.yaml"
        try:
            spec = stack_file.load(name, directory, project)
        except stack_file.StackNotFound:
            out.stacks.append(StackCheck(name, path, missing=True))
        except ConfigError as exc:
            out.stacks.append(StackCheck(name, path, problems=tuple(exc.problems)))
        else:
            out.stacks.append(StackCheck(name, path, findings=planner.build(spec).findings))
    return out


def _escape(text: str, property_value: bool = False) -> str:
    """GitHub workflow-command escaping (`%`, CR, LF; also `:` and `,` in properties)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def github_annotations(checked: Checked, root: Path) -> list[str]:
    """One `::error` / `::warning` workflow command per problem and finding, at its stack file line."""
    lines = []
    for s in checked.stacks:
        try:
            shown = str(s.path.relative_to(root))
        except ValueError:
            shown = str(s.path)
        where = f"file={_escape(shown, True)}"
        if s.missing:
            lines.append(f"::error {where},line=1,title=eks-devices::{_escape(f'no stack file for {s.name}')}")
        for p in s.problems:
            line = p.line or stack_file.line_of(s.path, p.path)
            lines.append(f"::error {where},line={line},title={_escape('config ' + p.path, True)}::"
                         + _escape(f"given {p.given}; accepted: {p.accepted}"))
        for f in s.findings:
            line = stack_file.line_of(s.path, f.path)
            lines.append(f"::{f.severity} {where},line={line},title={_escape(f.slug, True)}::"
                         + _escape(f"{f.path}: {f.message} (fix: {f.fix})"))
    return lines
