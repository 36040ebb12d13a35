"""Configuration problems: one per thing wrong in a stack file, each with its config path, what was
given and what is accepted, raised together as one ConfigError (the CLI's exit 2)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError
from pydantic.alias_generators import to_camel

from eks_devices.core.config.base import known_keys


@dataclass(frozen=True)
class ConfigProblem:
    """One thing wrong with a stack file."""

    path: str
    given: str
    accepted: str

    def __str__(self) -> str:
        return f"{self.path}: given {self.given}; accepted: {self.accepted}"


class ConfigError(Exception):
    """Every problem of a stack file at once."""

    def __init__(self, problems: list[ConfigProblem], source: str = "stack configuration"):
        self.problems = problems
        self.source = source
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{source}: {len(problems)} problem(s)\n{lines}")


def show(value: Any) -> str:
    text = repr(value) if not isinstance(value, dict) else "a mapping"
    return text if len(text) <= 60 else text[:57] + "..."


def _path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc if part not in ("str", "int", "list[str]", "function-after"))


def _accepted(err: Any) -> str:
    kind = err["type"]
    if kind == "missing":
        return "a value (this field is required)"
    if kind == "extra_forbidden":
        key = str(err["loc"][-1])
        # a key refused as given is no suggestion for itself, even where another section accepts it
        # (`instanceType` is the system node group's; a pool's is `instanceTypes`)
        candidates = sorted(known_keys() - {key})
        close = difflib.get_close_matches(to_camel(key), candidates, n=1, cutoff=0.75)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return f"no such key ({hint}keys are camelCase, as in docs/configuration.md)"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return "a mapping of keys to values"
    if kind == "list_type":
        return "a list"
    msg = err["msg"]
    for prefix in ("Value error, ", "Input should be "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    return msg


def from_validation(exc: ValidationError, root: str = "") -> list[ConfigProblem]:
    problems = []
    for err in exc.errors():
        path = _path(err["loc"])
        if err["type"] == "missing":
            given = "nothing"
        elif err["type"] == "extra_forbidden":
            given = f"unknown key {str(err['loc'][-1])!r}"
        else:
            given = show(err.get("input"))
        problems.append(ConfigProblem(f"{root}{path}", given, _accepted(err)))
    return problems
