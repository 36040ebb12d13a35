"""The list, set and string functions the Kubernetes CEL base environment adds to DRA selectors, for cel-python.

k8s.io/apiserver v0.36.3 `pkg/cel/environment/base.go` `baseOpts`, at the compatibility version a 1.35-1.36
API server checks new selectors with (its minor minus one, `DefaultCompatibilityVersion`):
- Kubernetes' own list library (`library.Lists`, since 1.0): `isSorted`, `sum`, `min`, `max`, `indexOf`,
  `lastIndexOf` on lists (`pkg/cel/library/lists.go`);
- cel-go's sets extension (`ext.Sets()`, since 1.29): `sets.contains`, `sets.equivalent`, `sets.intersects`;
- cel-go's strings extension at version 2 (`ext.StringsVersion(2)`, since 1.29): `strings.quote` here, the
  rest in `library.py`;
- cel-go's lists extension at version 3 (`ext.ListsVersion(3)`, introduced at 1.34, so a 1.34 API server,
  checking against 1.33, refuses it): `slice`, `flatten`, `sort`, `reverse`, `distinct`, `lists.range`
  (cel-go v0.26.0 `ext/lists.go`; its `sortBy` macro is in `macros.py`).
Behaviour follows cel-go v0.26.0 `ext/lists.go`, `ext/sets.go`, `ext/strings.go` (`quote`).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

from celpy import celtypes

from eks_devices.core.cel.library import _equals
from eks_devices.core.cel.named_formats import ACCEPTED_FROM as NAMED_FORMATS_ACCEPTED_FROM

# The namespaced functions: CEL parses `sets.contains(a, b)` as a method on a variable `sets`; the compiler
# rewrites such calls into a call of the dotted name (`rewrite_namespaced` in `__init__`).
# The Kubernetes minor whose API server first accepts a construct in a new selector, and the library it is
# part of: an API server checks new selectors against the previous minor's environment, so a library
# base.go introduces at 1.N is accepted from 1.N+1: cel-go's lists extension (with its `sortBy` macro) is
# introduced at 1.34, its two-variable comprehensions at 1.32 (`macros.py` names their forms `two-variable <name>`),
# Kubernetes' format library at 1.31 (`named_formats.py`).
LISTS_EXTENSION = "cel-go's lists extension"
TWO_VARIABLE_COMPREHENSIONS = "cel-go's two-variable comprehensions"
ACCEPTED_FROM: dict[str, tuple[tuple[int, int], str]] = {
    **{name: ((1, 35), LISTS_EXTENSION)
       for name in ("slice", "flatten", "sort", "reverse", "distinct", "lists.range", "sortBy")},
    **{f"two-variable {name}": ((1, 33), TWO_VARIABLE_COMPREHENSIONS)
       for name in ("all", "exists", "existsOne", "exists_one", "transformList", "transformMap", "transformMapEntry")},
    **NAMED_FORMATS_ACCEPTED_FROM,
}

MIN = "lists@min"
NAMESPACED = {"sets.contains", "sets.equivalent", "sets.intersects", "lists.range", "strings.quote", "ip.isCanonical"}


def _list(value: Any, name: str) -> celtypes.ListType:
    if not isinstance(value, celtypes.ListType):
        raise TypeError(f"no such overload: {name} on {type(value).__name__}")
    return value


def _int(value: Any, name: str) -> int:
    if not isinstance(value, celtypes.IntType):
        raise TypeError(f"no such overload: {name} with {type(value).__name__}")
    return int(value)


def _equal(a: Any, b: Any) -> bool:
    """CEL's heterogeneous equality (numbers by value, other types never equal)."""
    return bool(_equals(a, b))


def _contains(items: celtypes.ListType, value: Any) -> bool:
    return any(_equal(item, value) for item in items)


# --- cel-go ext/sets.go -------------------------------------------------------------------------------

def _sets_contains(a: Any, b: Any) -> celtypes.BoolType:
    """Every element of `b` is in `a`."""
    first = _list(a, "sets.contains")
    return celtypes.BoolType(all(_contains(first, x) for x in _list(b, "sets.contains")))


def _sets_equivalent(a: Any, b: Any) -> celtypes.BoolType:
    """Each list contains every element of the other (duplicates ignored)."""
    first, second = _list(a, "sets.equivalent"), _list(b, "sets.equivalent")
    return celtypes.BoolType(all(_contains(first, x) for x in second) and all(_contains(second, x) for x in first))


def _sets_intersects(a: Any, b: Any) -> celtypes.BoolType:
    first = _list(a, "sets.intersects")
    return celtypes.BoolType(any(_contains(first, x) for x in _list(b, "sets.intersects")))


# --- cel-go ext/lists.go --------------------------------------------------------------------------------

def _slice(value: Any, start: Any, end: Any) -> celtypes.ListType:
    """`list.slice(start, end)`: the elements in [start, end); cel-go's `slice` errors on a bad range."""
    items = _list(value, "slice")
    first, last = _int(start, "slice"), _int(end, "slice")
    if first < 0 or last < 0:
        raise ValueError(f"cannot slice({first}, {last}), negative indexes not supported")
    if first > last:
        raise ValueError(f"cannot slice({first}, {last}), start index must be less than or equal to end index")
    if last > len(items):
        raise ValueError(f"cannot slice({first}, {last}), list is length {len(items)}")
    return celtypes.ListType(items[first:last])


def _flatten(value: Any, depth: Any = None) -> celtypes.ListType:
    """`list.flatten()` (one level) or `list.flatten(depth)`; a negative depth is an error."""
    levels = 1 if depth is None else _int(depth, "flatten")
    if levels < 0:
        raise ValueError("level must be non-negative")

    def flat(items: celtypes.ListType, level: int) -> list[Any]:
        out: list[Any] = []
        for item in items:
            if isinstance(item, celtypes.ListType) and level > 0:
                out.extend(flat(item, level - 1))
            else:
                out.append(item)
        return out

    return celtypes.ListType(flat(_list(value, "flatten"), levels))


_COMPARABLE = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType, celtypes.StringType, celtypes.BoolType,
               celtypes.BytesType, celtypes.TimestampType, celtypes.DurationType)


def _kind(items: celtypes.ListType, name: str) -> None:
    """`sort`, `isSorted`, `min`, `max` need elements of one comparable type (cel-go `comparableTypes`)."""
    kinds = {type(item) for item in items}
    if len(kinds) > 1 or any(not issubclass(k, _COMPARABLE) for k in kinds):
        raise TypeError(f"no such overload: {name} on a list of {', '.join(sorted(k.__name__ for k in kinds))}")


def _sort(value: Any) -> celtypes.ListType:
    items = _list(value, "sort")
    return sort_by_keys(items, items)


def sort_by_keys(items: celtypes.ListType, keys: celtypes.ListType) -> celtypes.ListType:
    """The items ordered by their keys, which must share one comparable type (cel-go `sortListByAssociatedKeys`,
    behind `sort` and the `sortBy` macro; it uses Go's unstable `sort.Slice`, so items of equal keys may come in
    any order there)."""
    _kind(keys, "sort")
    return celtypes.ListType(item for _, item in sorted(zip(keys, items, strict=True), key=lambda pair: pair[0]))


def _reverse(value: Any) -> celtypes.ListType:
    return celtypes.ListType(reversed(_list(value, "reverse")))


def _distinct(value: Any) -> celtypes.ListType:
    """The elements in first-seen order, equal ones (by CEL equality: `1` and `1.0`) once."""
    out: list[Any] = []
    for item in _list(value, "distinct"):
        if not _contains(celtypes.ListType(out), item):
            out.append(item)
    return celtypes.ListType(out)


def _range(n: Any) -> celtypes.ListType:
    return celtypes.ListType(celtypes.IntType(i) for i in range(_int(n, "lists.range")))


# --- cel-go ext/strings.go ------------------------------------------------------------------------------

_QUOTED = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
           "\\": "\\\\", '"': '\\"'}


def _quote(value: Any) -> celtypes.StringType:
    """`strings.quote(s)`: s in double quotes with control characters, `\\` and `"` escaped."""
    if not isinstance(value, str):
        raise TypeError(f"no such overload: strings.quote on {type(value).__name__}")
    return celtypes.StringType('"' + "".join(_QUOTED.get(c, c) for c in value) + '"')


# --- k8s.io/apiserver pkg/cel/library/lists.go ------------------------------------------------------------

def _is_sorted(value: Any) -> celtypes.BoolType:
    items = _list(value, "isSorted")
    _kind(items, "isSorted")
    return celtypes.BoolType(all(a <= b for a, b in pairwise(items)))


def _sum(value: Any) -> Any:
    """The sum of numbers of one kind; an empty list sums to int 0."""
    items = _list(value, "sum")
    kinds = {type(item) for item in items}
    if len(kinds) > 1 or kinds - {celtypes.IntType, celtypes.UintType, celtypes.DoubleType, celtypes.DurationType}:
        raise TypeError("no such overload: sum on a list that is not of one numeric type")
    if not items:
        return celtypes.IntType(0)
    kind = type(items[0])
    total = items[0]
    for item in items[1:]:
        total = kind(total + item)  # celpy's DoubleType sum is a Python float
    return total


def _extreme(name: str, pick: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """`min` / `max` of a list of one comparable type; an empty list is an error."""
    def apply(value: Any) -> Any:
        items = _list(value, name)
        _kind(items, name)
        if not items:
            raise ValueError(f"{name} called on empty list")
        return pick(items)
    return apply


def _position(name: str, pick: Callable[[list[int]], int]) -> Callable[[Any, Any], celtypes.IntType]:
    """`indexOf` / `lastIndexOf` on a list: the first / last position of an equal element, -1 if none."""
    def apply(items: Any, value: Any) -> celtypes.IntType:
        found = [i for i, item in enumerate(_list(items, name)) if _equal(item, value)]
        return celtypes.IntType(pick(found) if found else -1)
    return apply


LIST_INDEX_OF = _position("indexOf", min)
LIST_LAST_INDEX_OF = _position("lastIndexOf", max)

FUNCTIONS: dict[str, Any] = {
    "sets.contains": _sets_contains,
    "sets.equivalent": _sets_equivalent,
    "sets.intersects": _sets_intersects,
    "lists.range": _range,
    "strings.quote": _quote,
    "slice": _slice,
    "flatten": _flatten,
    "sort": _sort,
    "reverse": _reverse,
    "distinct": _distinct,
    "isSorted": _is_sorted,
    "sum": _sum,
    "max": _extreme("max", max),
    # celpy evaluates a method `min` itself (as a reduction, on anything iterable): the compiler renames the
    # method to this name (`rewrite_namespaced` in `__init__`) so Kubernetes' list `min` runs instead
    MIN: _extreme("min", min),
}
