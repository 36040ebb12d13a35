"""Configuration problems: one per thing wrong in a stack file, each with its config path, what was
given and what is accepted, raised together as one ConfigError (the CLI's exit 2)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
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
    line: int | None = field(default=None, compare=False)
    """The stack file's line, where the path alone does not find it (a key given twice: the second time)."""

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


def article(noun: str) -> str:
    """`noun` with its indefinite article: `an int`, `a str`."""
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


# What a Field's `pattern` accepts, in words (`worded`): a problem says these instead of the expression.
PATTERN_WORDS: dict[str, str] = {}


def worded(pattern: str, words: str) -> str:
    """`pattern`, a Field's regular expression, with the words a problem says it accepts."""
    PATTERN_WORDS[pattern] = words
    return pattern


# location parts pydantic adds that name no key: a union member's type, a validator, a mapping's key
_NOT_KEYS = ("str", "int", "list[str]", "function-after", "[key]")


def _path(loc: tuple[Any, ...]) -> str:
    return ".".join(str(part) for part in loc if part not in _NOT_KEYS)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _limit(ctx: dict[str, Any], kind: str) -> str:
    bounds = {"greater_than_equal": ("ge", "of at least"), "less_than_equal": ("le", "of at most"),
              "greater_than": ("gt", "above"), "less_than": ("lt", "below")}
    key, words = bounds[kind]
    return f"a number {words} {ctx[key]}"


def _unwrapped(annotation: Any) -> Any:
    """An optional's type (`X | None` is X); a union of several types stays as it is."""
    args = [a for a in get_args(annotation) if a is not type(None)]
    return _unwrapped(args[0]) if get_origin(annotation) in (Union, UnionType) and len(args) == 1 else annotation


SHOWN_KEYS = 6  # the keys a problem names when a section is given as something other than a mapping


def _section_keys(model: type[BaseModel], loc: tuple[Any, ...], declared: bool = False) -> list[str]:
    """The keys the section at `loc` (a validation error's location below `model`) accepts, sorted (or, with
    `declared`, the required ones first, then in the order the model declares them); empty where the
    location leads to no single model (a union of shapes, a field of another type)."""
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
        fields = current.model_fields
        if declared:
            return [fields[name].alias or name for name in sorted(fields, key=lambda n: not fields[n].is_required())]
        return sorted(field.alias or name for name, field in fields.items())
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
        keys = _section_keys(model, err["loc"], declared=True) if model is not None and kind != "dict_type" else []
        shown = ", ".join(keys[:SHOWN_KEYS]) + (", ..." if len(keys) > SHOWN_KEYS else "")
        return f"a mapping of keys to values (keys: {shown})" if keys else "a mapping of keys to values"
    if kind == "list_type":
        return "a list" + (" (in brackets: [a, b])" if isinstance(err.get("input"), str) else "")
    ctx = err.get("ctx") or {}
    given = err.get("input")
    if kind == "string_type":
        return (f"text in quotes (unquoted, YAML reads {given!r} as a number)" if _number(given) else "text")
    if kind in ("bool_type", "bool_parsing"):
        return "true or false"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return "a whole number"
    if kind in ("float_type", "float_parsing"):
        return "a number"
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        return _limit(ctx, kind)
    if kind == "too_short":
        return f"a list of at least {ctx['min_length']} item{'s' if ctx['min_length'] != 1 else ''}"
    if kind == "too_long":
        return f"a list of at most {ctx['max_length']} items"
    if kind == "string_too_short":
        return f"text of at least {ctx['min_length']} character{'s' if ctx['min_length'] != 1 else ''}"
    if kind == "string_too_long":
        return f"text of at most {ctx['max_length']} characters"
    if kind == "string_pattern_mismatch":
        return PATTERN_WORDS.get(ctx.get("pattern", ""), f"text matching {ctx.get('pattern')}")
    msg = err["msg"]
    if kind == "literal_error" and isinstance(given, str):
        options = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        exact = [o for o in options if o.lower() == given.lower().replace("_", "-")]
        if hint := (f"did you mean {exact[0]!r}? " if exact else did_you_mean(given, options)):
            return hint + msg.removeprefix("Input should be ")
    for prefix in ("Value error, ", "Input should be "):
        if msg.startswith(prefix):
            msg = msg[len(prefix):]
    return msg


def from_validation(exc: ValidationError, root: str = "", model: type[BaseModel] | None = None) -> list[ConfigProblem]:
    """One problem per error (the errors of a union's members at one path are one problem, accepting any
    of them); `model`, the model validated, lets an unknown key's problem list its section's keys."""
    problems: list[ConfigProblem] = []
    for err in exc.errors():
        path = _path(err["loc"])
        if err["type"] == "missing":
            given = "nothing"
        elif err["type"] == "extra_forbidden" or err["loc"][-1:] == ("[key]",):
            given = f"unknown key {str(err['loc'][-2 if err['loc'][-1:] == ('[key]',) else -1])!r}"
        else:
            given = show(err.get("input"))
        accepted = _accepted(err, model)
        last = problems[-1] if problems else None
        if last is not None and last.path == f"{root}{path}" and last.given == given and _member(err):
            problems[-1] = ConfigProblem(last.path, given, f"{last.accepted}, or {accepted}")
            continue
        problems.append(ConfigProblem(f"{root}{path}", given, accepted))
    return problems


def _member(err: Any) -> bool:
    """Whether an error is one of a union's members' (its location ends in the member's type)."""
    return bool(err["loc"]) and err["loc"][-1] in _NOT_KEYS[:3]
