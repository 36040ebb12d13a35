"""The functions Kubernetes' CEL environment gives DRA selectors, for cel-python: quantities and versions
(kubernetes/apiserver v0.36.3 `pkg/cel/library/quantity.go`, `semverlib.go`), cel-go's string extensions
(`ext/strings.go`, in the apiserver's base environment, `pkg/cel/environment/base.go`), and equality and
order as cel-go decides them at run time (heterogeneous equality: values of different types are unequal;
numbers compare by value; quantities and versions have no `<`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from functools import total_ordering
from typing import Any

import celpy
from celpy import celtypes

# --- Kubernetes quantities and versions -------------------------------------------------------

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}
_QUANTITY = re.compile(r"^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?[0-9]+))?$")
_SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
                     r"(?:-((?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[A-Za-z-][0-9A-Za-z-]*))*))?"
                     r"(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$")


@total_ordering
class Quantity:
    """A Kubernetes resource quantity (`80Gi`, `500m`, `1e3`), compared by exact value."""

    def __init__(self, text: str | int):
        match = _QUANTITY.match(str(text).strip())
        if not match:
            raise ValueError(f"{text!r} is not a Kubernetes quantity")
        number, suffix, exponent = match.groups()
        value = Fraction(number)
        if exponent is not None:
            value *= Fraction(10) ** int(exponent)
        elif suffix in _BINARY:
            value *= _BINARY[suffix]
        else:
            value *= _DECIMAL[suffix or ""]
        self.value = value
        self.text = str(text)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"quantity({self.text!r})"


@total_ordering
class Semver:
    """A semantic version as Kubernetes' `semver()` reads it: major.minor.patch[-pre][+build]."""

    def __init__(self, text: str):
        match = _SEMVER.match(str(text))
        if not match:
            raise ValueError(f"{text!r} is not a semantic version (major.minor.patch)")
        self.major, self.minor, self.patch = (int(match.group(i)) for i in (1, 2, 3))
        self.pre: tuple[Any, ...] = tuple(
            (0, int(p), "") if p.isdigit() else (1, 0, p) for p in (match.group(4) or "").split(".") if p)
        self.text = str(text)

    def _key(self) -> tuple[Any, ...]:
        # a pre-release sorts before its release; build metadata never counts
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, self.pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other: Semver) -> bool:
        if not isinstance(other, Semver):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"semver({self.text!r})"


def _same_kind(a: Any, b: Any) -> None:
    if not (isinstance(a, Quantity) and isinstance(b, Quantity)) and not (
            isinstance(a, Semver) and isinstance(b, Semver)):
        raise TypeError(f"no such overload for {type(a).__name__} and {type(b).__name__}")


def _compare_to(a: Any, b: Any) -> celtypes.IntType:
    _same_kind(a, b)
    return celtypes.IntType(0 if a == b else (-1 if a < b else 1))


def _greater(a: Any, b: Any) -> celtypes.BoolType:
    _same_kind(a, b)
    return celtypes.BoolType(a > b)


def _less(a: Any, b: Any) -> celtypes.BoolType:
    _same_kind(a, b)
    return celtypes.BoolType(a < b)


def _quantity_only(value: Any) -> Quantity:
    if not isinstance(value, Quantity):
        raise TypeError(f"no such overload for {type(value).__name__}")
    return value


def _as_integer(value: Any) -> celtypes.IntType:
    q = _quantity_only(value).value
    if q.denominator != 1:
        raise ValueError("quantity is not an integer")
    return celtypes.IntType(q.numerator)


def _arith(sign: int) -> Callable[[Any, Any], Quantity]:
    def apply(a: Any, b: Any) -> Quantity:
        left = _quantity_only(a)
        right = b if isinstance(b, Quantity) else Quantity(int(b))
        out = Quantity(0)
        out.value = left.value + sign * right.value
        out.text = str(out.value)
        return out
    return apply


def _version_part(name: str) -> Callable[[Any], celtypes.IntType]:
    def part(value: Any) -> celtypes.IntType:
        if not isinstance(value, Semver):
            raise TypeError(f"no such overload: {name}() on {type(value).__name__}")
        return celtypes.IntType(getattr(value, name))
    return part


def _parses(kind: type) -> Any:
    def check(text: Any) -> celtypes.BoolType:
        try:
            kind(str(text))
        except ValueError:
            return celtypes.BoolType(False)
        return celtypes.BoolType(True)
    return check


# --- cel-go's string extensions (cel-go `ext/strings.go`, in Kubernetes' base CEL environment) --------

def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"no such overload for {type(value).__name__}")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"no such overload for {type(value).__name__}")
    return int(value)


def _ascii(convert: Callable[[str], str]) -> Callable[[Any], celtypes.StringType]:
    """lowerAscii / upperAscii: only the ASCII letters change."""
    def apply(value: Any) -> celtypes.StringType:
        return celtypes.StringType("".join(convert(c) if c.isascii() else c for c in _text(value)))
    return apply


def _split(value: Any, separator: Any, limit: Any = -1) -> celtypes.ListType:
    """Go's strings.SplitN: limit 0 gives no parts, a negative limit every part, "" splits into characters."""
    text, sep, n = _text(value), _text(separator), _int(limit)
    if n == 0:
        return celtypes.ListType()
    if sep == "":
        parts = list(text) if n < 0 or n >= len(text) else [*text[:n - 1], text[n - 1:]]
    else:
        parts = text.split(sep) if n < 0 else text.split(sep, n - 1)
    return celtypes.ListType(celtypes.StringType(p) for p in parts)


def _join(values: Any, separator: Any = "") -> celtypes.StringType:
    if not isinstance(values, list):
        raise TypeError(f"no such overload for {type(values).__name__}")
    return celtypes.StringType(_text(separator).join(_text(v) for v in values))


def _replace(value: Any, old: Any, new: Any, limit: Any = -1) -> celtypes.StringType:
    n = _int(limit)
    return celtypes.StringType(_text(value).replace(_text(old), _text(new), n if n >= 0 else -1))


def _index_of(value: Any, sub: Any, offset: Any = 0) -> celtypes.IntType:
    text, start = _text(value), _int(offset)
    if not 0 <= start <= len(text):
        raise ValueError(f"index out of range: {start}")
    return celtypes.IntType(text.find(_text(sub), start))


def _last_index_of(value: Any, sub: Any, offset: Any = None) -> celtypes.IntType:
    text = _text(value)
    end = len(text) if offset is None else _int(offset)
    if not 0 <= end <= len(text):
        raise ValueError(f"index out of range: {end}")
    return celtypes.IntType(text.rfind(_text(sub), 0, end + len(_text(sub))))


def _char_at(value: Any, index: Any) -> celtypes.StringType:
    text, i = _text(value), _int(index)
    if not 0 <= i <= len(text):
        raise ValueError(f"index out of range: {i}")
    return celtypes.StringType(text[i:i + 1])


def _substring(value: Any, start: Any, end: Any = None) -> celtypes.StringType:
    text = _text(value)
    first, last = _int(start), len(text) if end is None else _int(end)
    if not 0 <= first <= last <= len(text):
        raise ValueError(f"substring range [{first}, {last}) out of range for {len(text)} characters")
    return celtypes.StringType(text[first:last])


# --- equality and order as cel-go decides them at run time ---------------------------------------

_NUMBERS = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)


def _numeric(a: Any, b: Any) -> bool:
    return all(isinstance(v, _NUMBERS) and not isinstance(v, celtypes.BoolType) for v in (a, b))


def _same_type(a: Any, b: Any) -> bool:
    """One CEL type; celpy's `+` gives a plain `str` (`bytes`), which is still a CEL string (bytes)."""
    return _numeric(a, b) or type(a) is type(b) or all(isinstance(v, str) for v in (a, b)) or all(
        isinstance(v, bytes) for v in (a, b)) or (
        isinstance(a, (list, celtypes.ListType)) and isinstance(b, (list, celtypes.ListType))) or (
        isinstance(a, (dict, celtypes.MapType)) and isinstance(b, (dict, celtypes.MapType)))


def _equals(a: Any, b: Any) -> Any:
    """Heterogeneous equality: values of different types are unequal; numbers compare by value."""
    if isinstance(a, celpy.CELEvalError):
        return a
    if isinstance(b, celpy.CELEvalError):
        return b
    if not _same_type(a, b):
        return celtypes.BoolType(False)
    if _numeric(a, b):
        return celtypes.BoolType(Fraction(a) == Fraction(b) if not any(
            isinstance(v, celtypes.DoubleType) and v != v for v in (a, b)) else False)
    return celpy.evaluation.bool_eq(a, b)


def _not_equals(a: Any, b: Any) -> Any:
    result = _equals(a, b)
    return result if isinstance(result, celpy.CELEvalError) else celtypes.BoolType(not result)


def _ordering(name: str, compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    """`<`, `<=`, `>`, `>=`: numbers of any kind by value, otherwise operands of one type; never quantities
    or versions (Kubernetes gives them `compareTo`, `isLessThan`, `isGreaterThan` instead)."""
    def apply(a: Any, b: Any) -> Any:
        if isinstance(a, celpy.CELEvalError):
            return a
        if isinstance(b, celpy.CELEvalError):
            return b
        if isinstance(a, (Quantity, Semver)) or isinstance(b, (Quantity, Semver)):
            raise TypeError(f"found no matching overload for '{name}'")
        if _numeric(a, b):
            return celtypes.BoolType(compare(Fraction(a), Fraction(b)))
        # celpy's `+` gives a plain `str` (`bytes`): still a CEL string (bytes), ordered as one
        if type(a) is not type(b) and not (isinstance(a, str) and isinstance(b, str)) and not (
                isinstance(a, bytes) and isinstance(b, bytes)):
            raise TypeError(f"found no matching overload for '{name}'")
        return celtypes.BoolType(compare(a, b))
    return apply


def _normalized(text: str) -> str:
    """`semver(text, true)`: a leading `v` dropped, leading zeros trimmed, a short version filled up with `.0`
    (kubernetes/apiserver v0.36.3 `pkg/cel/library/semverlib.go` `normalizeAndParse`)."""
    parts = text.removeprefix("v").split(".", 2)
    for i, part in enumerate(parts):
        if len(part) > 1:
            part = part.lstrip("0")
            parts[i] = part if part and part[0].isdigit() else "0" + part
    if len(parts) < 3 and any(c in parts[-1] for c in "+-"):
        raise ValueError(f"{text!r}: a short version cannot carry a pre-release or build")
    return ".".join(parts + ["0"] * (3 - len(parts)))


def _semver(text: Any, normalize: Any = False) -> Semver:
    if not isinstance(normalize, (bool, celtypes.BoolType)):
        raise TypeError(f"no such overload for {type(normalize).__name__}")
    return Semver(_normalized(str(text)) if bool(normalize) else str(text))


def _is_semver(text: Any, normalize: Any = False) -> celtypes.BoolType:
    try:
        _semver(text, normalize)
    except ValueError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


FUNCTIONS: dict[str, Any] = {
    "quantity": lambda text: Quantity(str(text)),
    "semver": _semver,
    "isQuantity": _parses(Quantity),
    "isSemver": _is_semver,
    "sign": lambda v: celtypes.IntType((_quantity_only(v).value > 0) - (_quantity_only(v).value < 0)),
    "compareTo": _compare_to,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda v: celtypes.DoubleType(float(_quantity_only(v).value)),
    "isInteger": lambda v: celtypes.BoolType(_quantity_only(v).value.denominator == 1),
    "add": _arith(1),
    "sub": _arith(-1),
    "major": _version_part("major"),
    "minor": _version_part("minor"),
    "patch": _version_part("patch"),
    "lowerAscii": _ascii(str.lower),
    "upperAscii": _ascii(str.upper),
    "trim": lambda v: celtypes.StringType(_text(v).strip()),
    "split": _split,
    "join": _join,
    "replace": _replace,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "charAt": _char_at,
    "substring": _substring,
    "_==_": _equals,
    "_!=_": _not_equals,
    "_<_": _ordering("_<_", lambda a, b: a < b),
    "_<=_": _ordering("_<=_", lambda a, b: a <= b),
    "_>_": _ordering("_>_", lambda a, b: a > b),
    "_>=_": _ordering("_>=_", lambda a, b: a >= b),
}
