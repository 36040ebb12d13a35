"""Configuration problems: one per thing wrong in a stack file, each with its config path, what was
given and what is accepted, raised together as one ConfigError (the CLI's exit 2)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from eks_devices.core.config.base import known_keys


def did_you_mean(word: str, candidates: Iterable[str], cutoff: float = 0.6, spelled: str = "{!r}") -> str:
    """"did you mean X? " for the candidate nearest a word that was not accepted, or "" when none is
    near enough: one wording for every near miss (keys, arguments, config namespaces)."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=cutoff)
    return f"did you mean {spelled.format(close[0])}? " if close else ""


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


def _unwrapped(annotation: Any) -> Any:
    """An optional's type (`X | None` is X); a union of several types stays as it is."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    return _unwrapped(args[0]) if get_origin(annotation) in (Union, UnionType) and len(args) == 1 else annotation


def _section_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys the section at `loc` (a validation error's location below `model`) accepts; empty where
    the location leads to no single model (a union of shapes, a field of another type)."""
    current: Any = model
    for part in loc:
        current = _unwrapped(current)
        if get_origin(current) in (dict, list, tuple):  # the part is a key or an index: step to the value
            current = get_args(current)[-1]
        elif isinstance(current, type) and issubclass(current, BaseModel):
            fields = {field.alias or name: field.annotation for name, field in current.model_fields.items()}
            if str(part) not in fields:
                return []
            current = fields[str(part)]
        else:
            return []
    current = _unwrapped(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(field.alias or name for name, field in current.model_fields.items())
    return []


def _accepted(err: Any, model: type[BaseModel] | None = None) -> str:
    kind = err["type"]
    if kind == "missing":
        return "a value (this field is required)"
    if kind == "extra_forbidden":
        key = str(err["loc"][-1])
        here = _section_keys(model, err["loc"][:-1]) if model is not None else []
        # a key refused as given is no suggestion for itself, even where another section accepts it
        # (`instanceType` is the system node group's; a pool's is `instanceTypes`)
        candidates = here or sorted(known_keys() - {key})
        hint = did_you_mean(to_camel(key), candidates, cutoff=0.6 if here else 0.75)
        if here:
            return f"{hint}the keys of this section: {', '.join(here)}"
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


def from_validation(exc: ValidationError, root: str = "", model: type[BaseModel] | None = None) -> list[ConfigProblem]:
    """One problem per error; `model`, the model validated, lets an unknown key's problem list its section's keys."""
    problems = []
    for err in exc.errors():
        path = _path(err["loc"])
        if err["type"] == "missing":
            given = "nothing"
        elif err["type"] == "extra_forbidden":
            given = f"unknown key {str(err['loc'][-1])!r}"
        else:
            given = show(err.get("input"))
        problems.append(ConfigProblem(f"{root}{path}", given, _accepted(err, model)))
    return problems
