"""CEL for DRA device selectors, evaluated offline with cel-python.

Kubernetes evaluates DeviceClass and request selectors against each device a driver publishes:
`device.driver`, `device.attributes["<domain>"].<name>` and `device.capacity["<domain>"].<name>`
(kubernetes/api `resource/v1/types.go`). This module gives the toolkit the same view without a cluster:

- `compile_expression(expression)` parses an expression and checks that every function it calls
  and every variable it reads exists in the DRA environment, raising `CelError` with the reason;
- `evaluate(expression, device)` runs it against one device, given as
  `{"driver": str, "attributes": {domain: {name: value}}, "capacity": {domain: {name: quantity}}}`.
  Attribute values are Python `str`, `int` or `bool`; a version attribute may be given as
  `{"version": "1.2.3"}` (the ResourceSlice spelling). Capacities are Kubernetes quantities
  (`"80Gi"`, `"81152Mi"`, `4`).

The Kubernetes CEL library functions DRA selectors use are provided: `quantity()` with
`compareTo`, `isGreaterThan`, `isLessThan`, `asInteger`, `asApproximateFloat`, `sign`, `isInteger`,
`add`, `sub`; `semver()` with `compareTo`, `isGreaterThan`, `isLessThan`, `major`, `minor`, `patch`;
`isQuantity()` and `isSemver()`. As in Kubernetes, looking up a domain a device does not have gives
an empty map (so `"x" in device.attributes` is false), and reading a missing attribute is a
runtime error, which `evaluate` raises as `CelError`, as the scheduler fails allocation on it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from functools import cache, total_ordering
from typing import Any

import celpy
import lark
from celpy import celtypes

__all__ = ["CelError", "Quantity", "Semver", "compile_expression", "device", "evaluate", "selects"]


class CelError(ValueError):
    """A CEL expression that does not compile, or fails or is not a bool when evaluated."""


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


FUNCTIONS: dict[str, Any] = {
    "quantity": lambda text: Quantity(str(text)),
    "semver": lambda text: Semver(str(text)),
    "isQuantity": _parses(Quantity),
    "isSemver": _parses(Semver),
    "compareTo": _compare_to,
    "isGreaterThan": _greater,
    "isLessThan": _less,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda v: celtypes.DoubleType(float(_quantity_only(v).value)),
    "sign": lambda v: celtypes.IntType((_quantity_only(v).value > 0) - (_quantity_only(v).value < 0)),
    "isInteger": lambda v: celtypes.BoolType(_quantity_only(v).value.denominator == 1),
    "add": _arith(1),
    "sub": _arith(-1),
    "major": _version_part("major"),
    "minor": _version_part("minor"),
    "patch": _version_part("patch"),
}
_MACROS = {"has", "all", "exists", "exists_one", "map", "filter"}
_KNOWN_FUNCTIONS = set(FUNCTIONS) | set(celpy.evaluation.base_functions) | _MACROS | {
    "dyn", "lowerAscii", "upperAscii", "trim", "split", "join", "replace", "indexOf", "lastIndexOf"}
_BINDING_MACROS = {"all", "exists", "exists_one", "map", "filter"}



@cache
def _env() -> celpy.Environment:
    """The CEL environment, built on first use: building its parser takes a noticeable part of a second."""
    return celpy.Environment()


# --- compile and evaluate ---------------------------------------------------------------------

def _check_names(tree: lark.Tree) -> None:
    """Reject calls to functions the DRA environment lacks and variables other than `device`."""
    bound: set[str] = set()
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg" and str(node.children[1]) in _BINDING_MACROS:
            args = node.children[2]
            if isinstance(args, lark.Tree) and args.children:
                first = next((t for t in args.children[0].scan_values(lambda v: isinstance(v, lark.Token))), None)
                if first is not None:
                    bound.add(str(first))
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg":
            name = str(node.children[1])
        elif node.data == "ident_arg":
            name = str(node.children[0])
        elif node.data == "ident":
            var = str(node.children[0])
            if var != "device" and var not in bound:
                raise CelError(f"undeclared reference to {var!r}: selectors can read only `device`")
            continue
        else:
            continue
        if name not in _KNOWN_FUNCTIONS:
            raise CelError(f"undeclared function {name!r}")


@cache
def _program(expression: str) -> celpy.Runner:
    if not isinstance(expression, str) or not expression.strip():
        raise CelError("an empty CEL expression")
    if len(expression) > 10 * 1024:
        raise CelError("a CEL selector may be at most 10Ki characters")
    try:
        tree = _env().compile(expression)
    except celpy.CELParseError as exc:
        where = f" at line {exc.line}, column {exc.column}" if getattr(exc, "column", None) else ""
        raise CelError(f"CEL syntax error{where} in {expression!r}") from None
    except RecursionError:
        raise CelError(f"a CEL selector nested more than {MAX_DEPTH} levels deep") from None
    if _depth(tree) > MAX_DEPTH:
        raise CelError(f"a CEL selector nested more than {MAX_DEPTH} levels deep")
    _check_names(tree)
    return _env().program(tree, functions=FUNCTIONS)


MAX_DEPTH = 200  # nesting the evaluator (a recursive tree walk) stands; real selectors nest a dozen levels


def _depth(tree: lark.Tree) -> int:
    """The parse tree's depth, walked without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, lark.Tree))
    return deepest


def compile_expression(expression: str) -> None:
    """Check that a selector compiles in the DRA CEL environment; raise CelError naming the problem."""
    _program(expression)


class _Domains(celtypes.MapType):
    """`device.attributes` / `device.capacity`: an unknown domain reads as an empty map."""

    def __missing__(self, key: Any) -> celtypes.MapType:
        return celtypes.MapType()


def _attribute(value: Any) -> Any:
    if isinstance(value, dict) and len(value) == 1:
        (kind, inner), = value.items()
        if kind == "version":
            return Semver(inner)
        value = inner
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, Semver):
        return value
    raise CelError(f"attribute value {value!r} is not a string, int, bool or version")


def _activation(device: dict[str, Any]) -> dict[str, Any]:
    attributes = _Domains({
        celtypes.StringType(domain): celtypes.MapType(
            {celtypes.StringType(n): _attribute(v) for n, v in names.items()})
        for domain, names in (device.get("attributes") or {}).items()})
    capacity = _Domains({
        celtypes.StringType(domain): celtypes.MapType(
            {celtypes.StringType(n): v if isinstance(v, Quantity) else Quantity(v) for n, v in names.items()})
        for domain, names in (device.get("capacity") or {}).items()})
    return {"device": celtypes.MapType({
        celtypes.StringType("driver"): celtypes.StringType(device.get("driver", "")),
        celtypes.StringType("attributes"): attributes,
        celtypes.StringType("capacity"): capacity,
    })}


def evaluate(expression: str, device: dict[str, Any]) -> bool:
    """Whether `device` matches the selector; CelError on a runtime error or a non-bool result."""
    program = _program(expression)
    try:
        result = program.evaluate(_activation(device))
    except CelError:
        raise
    except celpy.CELEvalError as exc:
        raise CelError(f"{expression!r} failed on a {device.get('driver')} device: {exc.args[0]}") from None
    except (RecursionError, TypeError, ValueError, ArithmeticError, AttributeError, KeyError) as exc:
        # celpy raises plain Python errors for some ill-typed expressions (`1.5.map(x, x)`)
        raise CelError(f"{expression!r} cannot be evaluated on a {device.get('driver')} device: "
                       f"{type(exc).__name__}") from None
    if isinstance(result, celpy.CELEvalError):
        raise CelError(f"{expression!r} failed on a {device.get('driver')} device: {result.args[0]}")
    if not isinstance(result, celtypes.BoolType):
        raise CelError(f"{expression!r} returned {type(result).__name__}, a selector must return a bool")
    return bool(result)


def device(driver: str, attributes: dict[str, Any] | None = None,
           capacity: dict[str, Any] | None = None) -> dict[str, Any]:
    """A device from flat names: `"dra.net/rdma"` goes to domain `dra.net`, a bare `"type"` to the driver's."""

    def nest(flat: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for name, value in flat.items():
            domain, _, short = name.rpartition("/")
            out.setdefault(domain or driver, {})[short] = value
        return out

    return {"driver": driver, "attributes": nest(attributes or {}), "capacity": nest(capacity or {})}


def selects(selectors: list[dict[str, Any]], dev: dict[str, Any]) -> bool:
    """A DeviceClass's (or request's) `selectors`: the device must satisfy every one."""
    return all(evaluate(s["cel"]["expression"], dev) for s in selectors)
