"""`"...".format([...])` of cel-go's strings extension, for cel-python, and its check of literal calls.

k8s.io/apiserver v0.36.3 `pkg/cel/environment/base.go` adds `ext.Strings(ext.StringsVersion(2))` from 1.29, whose
`format` is cel-go v0.26.0 `ext/formatting.go` (`parseFormatString`, `stringFormatter`, locale en-US): clauses
`%s %d %f %e %b %x %X %o` and `%%`, a precision (`%.2f`) read by `%f` only. `%f` groups thousands as
golang.org/x/text/message prints en-US (`1,234.50`, `∞`, `NaN`), `%e` prints `2.718280×10⁰⁰` and ignores the
precision (cel-go passes it as a width); `%s` of a double is Go's `strconv.FormatFloat(f, 'g', -1, 64)`, and a
list or map prints its doubles as `%.6f`, its strings quoted, a map's entries ordered by their printed key.
`stringFormatValidator` refuses, at compile time, a literal format string with a literal argument list whose
clauses do not parse, whose arguments are too few or too many, or whose literal arguments a clause cannot take
(`check_literal_calls`). Checked against cel-go itself and a real 1.36 API server
(`tests/e2e/test_cel_selectors.py`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from eks_devices.core.cel.errors import CelError

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_FLOAT_WORDS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

# what each clause takes, by the checker's type names (`checker.py`); `None` (dyn) is left to evaluation, and so
# is which strings `%f` and `%e` take (`NaN`, `Infinity`, `-Infinity`)
TAKES = {"s": {"string", "bool", "bytes", "int", "uint", "double", "map", "null", "type", "duration", "timestamp"},
         "d": {"int", "uint"}, "f": {"double", "string"}, "e": {"double", "string"}, "b": {"int", "uint", "bool"},
         "x": {"int", "uint", "string", "bytes"}, "X": {"int", "uint", "string", "bytes"}, "o": {"int", "uint"}}
_NAMES = {"s": "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, "
               "durations, and timestamps", "d": "decimal clause can only be used on integers",
          "f": "fixed-point clause can only be used on doubles", "e": "scientific clause can only be used on doubles",
          "b": "only integers and bools can be formatted as binary",
          "x": "only integers, byte buffers, and strings can be formatted as hex",
          "o": "octal clause can only be used on integers"}


class FormatError(ValueError):
    """A format string or argument cel-go refuses."""


def clauses(text: str) -> list[tuple[int, int, str, int | None]]:
    """The clauses of a format string in order (`%%` skipped): (start, end, letter, precision); FormatError where
    cel-go `parseFormatString` fails on the string itself."""
    found, i = [], 0
    while i < len(text):
        if text[i] != "%":
            i += 1
            continue
        if text[i + 1:i + 2] == "%":
            i += 2
            continue
        if i + 1 >= len(text):
            raise FormatError("unexpected end of string")
        start, i, precision = i, i + 1, None
        if text[i] == ".":
            digits = i = i + 1
            while i < len(text) and text[i].isascii() and text[i].isdigit():
                i += 1
            if i >= len(text):
                raise FormatError("could not parse formatting clause: error while parsing precision: could not "
                                  "find end of precision specifier")
            if i == digits:
                raise FormatError("could not parse formatting clause: error while parsing precision: error while "
                                  "converting precision to integer")
            precision = int(text[digits:i])
        if text[i] not in TAKES:
            raise FormatError(f"could not parse formatting clause: unrecognized formatting clause {text[i]!r}")
        found.append((start, i + 1, text[i], precision))
        i += 1
    return found


def go_float(value: float) -> str:
    """Go `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits, `%e` form from an exponent of 6 or below -4."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    digits_tuple = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, digits_tuple.digits))
    exponent = len(digits) + int(digits_tuple.exponent) - 1
    if exponent < -4 or exponent >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    point = exponent + 1
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t",
            "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def _go_quote(text: str) -> str:
    """Go's `%q` of a string (strconv.Quote): printable characters kept, the rest escaped."""
    def one(c: str) -> str:
        if c in _ESCAPES:
            return _ESCAPES[c]
        if c.isprintable():
            return c
        code = ord(c)
        return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return '"' + "".join(one(c) for c in text) + '"'


def _member(value: Any) -> str:
    """A list element or map value as `formatList` / `formatMap` print it."""
    if isinstance(value, celtypes.StringType | str):
        return _go_quote(str(value))
    if isinstance(value, celtypes.BytesType | bytes):
        return "b" + _go_quote(_bytes_text(value))
    if isinstance(value, float):  # celpy's arithmetic gives a plain float: still a CEL double
        printed = f"{float(value):.6f}" if math.isfinite(value) else go_float(float(value))
        return printed if math.isfinite(value) else f'"{printed}"'
    return _string(value)


def _bytes_text(value: bytes) -> str:
    try:
        return bytes(value).decode()
    except UnicodeDecodeError:
        raise FormatError("could not convert argument to string: invalid UTF-8 in bytes") from None


def _string(value: Any) -> str:
    """`%s` (cel-go `FormatString`)."""
    if value is None:
        return "null"
    if isinstance(value, celtypes.BoolType):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return go_float(float(value))
    if isinstance(value, celtypes.StringType | str):
        return str(value)
    if isinstance(value, celtypes.BytesType | bytes):
        return _bytes_text(value)
    if isinstance(value, celtypes.ListType):
        return "[" + ", ".join(_member(v) for v in value) + "]"
    if isinstance(value, celtypes.MapType):
        entries = []
        for key, item in value.items():
            if not isinstance(key, celtypes.StringType | celtypes.BoolType | celtypes.IntType | celtypes.UintType):
                raise FormatError(f"no formatting function for map key of type {type(key).__name__}")
            entries.append((_member(key), _member(item)))
        return "{" + ", ".join(f"{k}:{v}" for k, v in sorted(entries, key=lambda e: e[0].encode())) + "}"
    raise FormatError(f"{_NAMES['s']}, was given {type(value).__name__}")


def _double(value: Any, clause: str) -> float:
    if isinstance(value, celtypes.StringType | str) and str(value) in _FLOAT_WORDS:
        return _FLOAT_WORDS[str(value)]
    if not isinstance(value, float):
        raise FormatError(f"{_NAMES[clause]}, was given {type(value).__name__}")
    return float(value)


def _fixed(value: Any, precision: int | None) -> str:
    """`%f`: en-US digits as golang.org/x/text/message prints them (thousands grouped, an exact zero unsigned)."""
    number = _double(value, "f")
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "∞" if number > 0 else "-∞"
    return f"{abs(number) if number == 0 else number:,.{6 if precision is None else precision}f}"


def _scientific(value: Any) -> str:
    """`%e`: six decimals and a superscript exponent of at least two digits (`1.234500×10⁰³`); the precision is
    passed to Go as a width of 6, which pads only the short NaN and infinities."""
    number = _double(value, "e")
    if math.isnan(number) or math.isinf(number):
        return ("NaN" if math.isnan(number) else "∞" if number > 0 else "-∞").rjust(6)
    mantissa, _, exponent = f"{abs(number) if number == 0 else number:.6e}".partition("e")
    power = int(exponent)
    return f"{mantissa}×10" + (("-" if power < 0 else "") + f"{abs(power):02d}").translate(_SUPERSCRIPT)


def _integer(value: Any, clause: str, bools: bool = False) -> int:
    if isinstance(value, celtypes.BoolType):
        if bools:
            return int(bool(value))
        raise FormatError(f"{_NAMES[clause]}, was given bool")
    if not isinstance(value, int):
        raise FormatError(f"{_NAMES[clause]}, was given {type(value).__name__}")
    return int(value)


def _hex(value: Any, upper: bool) -> str:
    if isinstance(value, celtypes.StringType | str | celtypes.BytesType | bytes):
        raw = str(value).encode() if isinstance(value, str) else bytes(value)
        out = raw.hex()
    else:
        number = _integer(value, "x")
        out = ("-" if number < 0 else "") + format(abs(number), "x")
    return out.upper() if upper else out


def _signed(number: int, spec: str) -> str:
    return ("-" if number < 0 else "") + format(abs(number), spec)


_FORMATTERS: dict[str, Callable[[Any, int | None], str]] = {
    "s": lambda v, _: _string(v),
    "d": lambda v, _: str(_integer(v, "d")),
    "f": _fixed,
    "e": lambda v, _: _scientific(v),
    "b": lambda v, _: _signed(_integer(v, "b", bools=True), "b"),
    "x": lambda v, _: _hex(v, upper=False),
    "X": lambda v, _: _hex(v, upper=True),
    "o": lambda v, _: _signed(_integer(v, "o"), "o"),
}


def format_string(text: Any, args: Any) -> Any:
    """`text.format(args)`; a CELEvalError (returned, as celpy propagates it) where cel-go's formatting fails."""
    if not isinstance(text, str) or not isinstance(args, celtypes.ListType):
        raise TypeError("no such overload: format takes a string and a list")
    try:
        out, position = [], 0
        for argument, (start, end, clause, precision) in enumerate(clauses(str(text))):
            if argument >= len(args):
                raise FormatError(f"index {argument} out of range")
            out += [text[position:start].replace("%%", "%"), _FORMATTERS[clause](args[argument], precision)]
            position = end
        out.append(text[position:].replace("%%", "%"))
        return celtypes.StringType("".join(out))
    except FormatError as exc:
        return CELEvalError(f"error during formatting: {exc}", ValueError, None)


def check_literal_call(text: str, argument_types: list[str | None],
                       shown: Callable[[str], str] = str) -> None:
    """cel-go `stringFormatValidator`: a literal format string with a literal list of arguments must parse, use
    every argument, and give each clause an argument of a type it takes (where the type is known); CelError."""
    try:
        found = clauses(text)
    except FormatError as exc:
        raise CelError(str(exc)) from None
    for index, (_, _, clause, _) in enumerate(found):
        if index >= len(argument_types):
            raise CelError(f"index {index} out of range")
        given = argument_types[index]
        if given is not None and given not in TAKES[clause] and not (clause == "s" and given.startswith("list")):
            raise CelError(f"error during formatting: {_NAMES[clause]}, was given {shown(given)}")
    if len(argument_types) > len(found):
        raise CelError(f"too many arguments supplied to string.format (expected {len(found)}, "
                       f"got {len(argument_types)})")
