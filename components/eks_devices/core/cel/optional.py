"""CEL optional values (`cel.OptionalTypes()`, in Kubernetes' base environment since 1.28), for cel-python.

k8s.io/apiserver v0.36.3 `pkg/cel/environment/base.go` enables cel-go's optional library at its latest version
(cel-go v0.26.0 `cel/library.go` `optionalLib`): the syntax `x.?field`, `x[?key]`, `[?opt, ...]` and
`{?key: opt}` (celpy's grammar lacks it: `PARSER` is celpy's grammar with these four rules added), the functions
`optional.of`, `optional.ofNonZeroValue`, `optional.none`, `hasValue`, `value`, `or`, `orValue` (both short-
circuit, cel-go `decorateOptionalOr`), `first`, `last`, `optional.unwrap` / `unwrapOpt`, and the macros `optMap`
and `optFlatMap`. Selecting or indexing an optional gives an optional. The evaluator's part is in `macros.py`.
"""

from __future__ import annotations

import hashlib
import os
import re
from functools import cache
from pathlib import Path
from typing import Any

import celpy
import lark
from celpy import celtypes
from celpy.celparser import CELParseError, CELParser

from eks_devices.core.cel.errors import CelError
from eks_devices.core.cel.library import _equals


class Optional:
    """An optional value: `optional.of(v)` or `optional.none()`; equal when both are empty or hold equal values."""

    def __init__(self, value: Any = None, present: bool = False) -> None:
        self.value, self.present = value, present

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Optional) or self.present != other.present:
            return False
        return not self.present or bool(_equals(self.value, other.value))

    def __hash__(self) -> int:
        return hash(self.present)

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.present else "optional.none()"


NONE = Optional()


def of(value: Any) -> Optional:
    return Optional(value, True)


def _zero(value: Any) -> bool:
    """cel-go `traits.Zeroer`: the zero value of its type (false, 0, "", b"", an empty list or map)."""
    return value is None or (isinstance(value, bool | int | float | str | bytes | list | dict) and not value)


def _optional(value: Any, name: str) -> Optional:
    if not isinstance(value, Optional):
        raise TypeError(f"no such overload: {name} on {type(value).__name__}")
    return value


def _value(value: Any) -> Any:
    opt = _optional(value, "value")
    if not opt.present:
        raise ValueError("optional.none() dereference")
    return opt.value


def _list(value: Any, name: str) -> celtypes.ListType:
    if not isinstance(value, celtypes.ListType):
        raise TypeError(f"no such overload: {name} on {type(value).__name__}")
    return value


def _unwrap(value: Any) -> celtypes.ListType:
    """The values of a list of optionals, the empty ones left out."""
    items = _list(value, "optional.unwrap")
    return celtypes.ListType(_optional(o, "optional.unwrap").value for o in items
                             if _optional(o, "optional.unwrap").present)


def select(target: Any, key: Any) -> Any:
    """`target.?key` / `target[?key]`: an optional of the entry where the map has it (or the list the index),
    empty otherwise; on an optional, the same inside it."""
    if isinstance(target, Optional):
        return select(target.value, key) if target.present else NONE
    if isinstance(target, celtypes.MapType):
        # `device.attributes` and `device.capacity` find every domain, an unknown one as an empty map
        # (k8s.io/dynamic-resource-allocation v0.36.3 `cel/compile.go` `mapper.Find`): their `__missing__`
        return of(target[key]) if key in target or hasattr(target, "__missing__") else NONE
    if isinstance(target, celtypes.ListType):
        if not isinstance(key, celtypes.IntType):
            raise TypeError(f"no such overload: a list index of {type(key).__name__}")
        return of(target[int(key)]) if 0 <= int(key) < len(target) else NONE
    raise TypeError(f"no such overload: optional selection on {type(target).__name__}")


FUNCTIONS: dict[str, Any] = {
    "optional.of": of,
    "optional.ofNonZeroValue": lambda v: NONE if _zero(v) else of(v),
    "optional.none": lambda: NONE,
    "hasValue": lambda v: celtypes.BoolType(_optional(v, "hasValue").present),
    "value": _value,
    "first": lambda v: of(_list(v, "first")[0]) if _list(v, "first") else NONE,
    "last": lambda v: of(_list(v, "last")[-1]) if _list(v, "last") else NONE,
    "optional.unwrap": _unwrap,
    "unwrapOpt": _unwrap,
}
NAMESPACED = {"optional.of", "optional.ofNonZeroValue", "optional.none", "optional.unwrap"}
MACROS = {"optMap", "optFlatMap"}
LAZY = {"or", "orValue"}  # evaluated in `macros.py`: the argument only when the optional is empty

# --- the grammar: celpy's, with cel-go's optional syntax (cel-go `parser/gen/CEL.g4`) ---------------------------
_RULES = (
    ("member         : member_dot | member_dot_arg | member_index | member_object | primary",
     "member         : member_dot | member_dot_arg | member_index | member_object | primary\n"
     "               | member_dot_opt | member_index_opt"),
    ("member_dot     : member \".\" IDENT",
     "member_dot     : member \".\" IDENT\nmember_dot_opt : member \".\" \"?\" IDENT\n"
     "member_index_opt : member \"[\" \"?\" expr \"]\""),
    ("expr           : conditionalor [\"?\" conditionalor \":\" expr]",
     "expr           : conditionalor [\"?\" conditionalor \":\" expr] | opt_marked\nopt_marked : \"?\" expr"),
)


def _table_file(grammar: str) -> str | bool:
    """Where lark keeps the grammar's parse table between runs: building it costs ~0.15 s of CPU, loading it
    ~0.01 s. In the user's cache folder (not lark's default, a shared temporary folder: the table is a pickle),
    named by the grammar's and lark's versions; lark also checks the grammar's hash on load and rebuilds a
    table that does not match or does not load. No table where the folder cannot be made."""
    try:
        folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "eks-devices"
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # RuntimeError: no home folder
        return False
    digest = hashlib.sha256(grammar.encode()).hexdigest()[:16]
    return str(folder / f"cel-grammar-{digest}-lark-{lark.__version__}.pickle")


@cache
def _grammar() -> lark.Lark:
    text = (Path(celpy.__file__).parent / "cel.lark").read_text()
    for old, new in _RULES:
        if old not in text:
            raise RuntimeError(f"celpy's grammar changed: {old!r} not found")  # a celpy upgrade to look at
        text = text.replace(old, new)
    return lark.Lark(text, cache=_table_file(text), parser="lalr", start="expr", g_regex_flags=re.M,
                     lexer_callbacks={"IDENT": CELParser.ambiguous_literals}, propagate_positions=True,
                     maybe_placeholders=False, priority="invert", tree_class=lark.Tree)


class Parser(CELParser):
    """celpy's parser on the grammar with optional syntax."""

    def __init__(self) -> None:
        pass

    def parse(self, text: str) -> lark.Tree:
        try:
            return _grammar().parse(text)
        except (lark.exceptions.UnexpectedToken, lark.exceptions.UnexpectedCharacters) as exc:
            raise CELParseError(exc.get_context(text), *exc.args, line=exc.line, column=exc.column) from None


class Marked:
    """The value of a `?`-marked list element or map key, for the literal to include only if present."""

    def __init__(self, value: Any) -> None:
        self.value = value


def check_markers(tree: lark.Tree) -> None:
    """A `?` marks only a list literal's element or a map literal's key (cel-go's grammar); CelError elsewhere."""
    allowed: set[int] = set()
    for node in tree.iter_subtrees():
        if node.data == "list_lit" and node.children and isinstance(node.children[0], lark.Tree):
            allowed.update(id(e) for e in node.children[0].children)
        elif node.data == "mapinits":
            allowed.update(id(k) for k in node.children[0::2])
    for node in tree.iter_subtrees():
        if node.data == "expr" and len(node.children) == 1 and isinstance(node.children[0], lark.Tree) \
                and node.children[0].data == "opt_marked" and id(node) not in allowed:
            raise CelError("unexpected '?': it marks an optional list element or map key only")
