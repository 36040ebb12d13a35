"""Compile and evaluate DRA device selectors (CEL) the way the Kubernetes scheduler reads them.

A selector sees one variable, `device`, with `device.driver`, `device.attributes["<domain>"].<name>`
and `device.capacity["<domain>"].<name>` (FACTS §5). Here a device is a plain dict of that shape:

    {"driver": "gpu.nvidia.com",
     "attributes": {"gpu.nvidia.com": {"type": "gpu", "productName": "NVIDIA H100 80GB HBM3"},
                    "resource.kubernetes.io": {"pcieRoot": "pci0000:00"}},
                    "capacity": {"gpu.nvidia.com": {"memory": "80Gi"}}}

`device(driver, attributes, capacity)` builds one from qualified names (`"gpu.nvidia.com/type"`, or a
bare name, which belongs to the driver's domain). As in Kubernetes, an unknown attribute domain
reads as an empty map, and an evaluation error (for example a missing attribute that the expression
does not guard with a driver check) is an error, not a non-match: it fails the allocation.
`quantity("80Gi")` and `semver("1.2.3")` exist with `compareTo`, `isGreaterThan`, `isLessThan`
(plus `isGreaterThan`/`isLessThan`/`compareTo` on version strings and quantities in the device).

Public API: `compile_expression(expression)` (raises `CelError`), `evaluate(expression, device) -> bool`,
`selects(selectors, device) -> bool` for a DeviceClass's or request's `selectors` list, `device(...)`.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import cache
from typing import Any, TypedDict

import celpy
from celpy import celtypes

MAX_EXPRESSION_LENGTH = 10 * 1024  # resource.k8s.io/v1 CELDeviceSelector.expression limit


class Device(TypedDict, total=False):
    """One device as a selector sees it (a ResourceSlice entry, flattened by domain)."""

    driver: str
    attributes: dict[str, dict[str, Any]]
    capacity: dict[str, dict[str, Any]]


class CelError(ValueError):
    """An expression that does not compile, or fails while evaluating against a device."""

    def __init__(self, expression: str, reason: str):
        self.expression = expression
        self.reason = reason
        super().__init__(f"CEL {expression!r}: {reason}")


def device(driver: str, attributes: dict[str, Any] | None = None,
           capacity: dict[str, Any] | None = None) -> Device:
    """A Device from qualified names: `"dra.net/rdma"` goes to domain `dra.net`, `"type"` to the driver's."""
    def nest(flat: dict[str, Any]) -> dict[str, dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for name, value in flat.items():
            domain, _, short = name.rpartition("/")
            out.setdefault(domain or driver, {})[short] = value
        return out
    return {"driver": driver, "attributes": nest(attributes or {}), "capacity": nest(capacity or {})}


# --- Kubernetes CEL library extensions: quantity and semver ------------------------------------

_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eE][+-]?[0-9]+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$")
_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "k": 10**3,
           "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}


class Quantity(Fraction):
    """A resource.Quantity, compared by value."""


class Semver(tuple):  # type: ignore[type-arg]
    """A semantic version, compared by (major, minor, patch)."""


def _quantity(text: Any) -> Quantity:
    if isinstance(text, Quantity):
        return text
    if isinstance(text, int | float | Fraction):
        return Quantity(text)
    match = _QUANTITY.match(str(text))
    if not match:
        raise ValueError(f"not a quantity: {text!r}")
    number, suffix = Fraction(match.group(1)), match.group(2) or ""
    if suffix[:1] in ("e", "E") and len(suffix) > 1:
        return Quantity(number * Fraction(10) ** int(suffix[1:]))
    return Quantity(number * _SUFFIX.get(suffix, 1))


def _semver(text: Any) -> Semver:
    if isinstance(text, Semver):
        return text
    match = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", str(text))
    if not match:
        raise ValueError(f"not a semantic version: {text!r}")
    return Semver(int(part) for part in match.groups())


def _coerce(left: Any, right: Any) -> tuple[Any, Any]:
    if isinstance(left, Semver) or isinstance(right, Semver):
        return _semver(left), _semver(right)
    return _quantity(left), _quantity(right)


def _compare_to(left: Any, right: Any) -> celtypes.IntType:
    a, b = _coerce(left, right)
    return celtypes.IntType((a > b) - (a < b))


def _greater(left: Any, right: Any) -> celtypes.BoolType:
    a, b = _coerce(left, right)
    return celtypes.BoolType(a > b)


def _less(left: Any, right: Any) -> celtypes.BoolType:
    a, b = _coerce(left, right)
    return celtypes.BoolType(a < b)


_FUNCTIONS = {"quantity": _quantity, "semver": _semver, "compareTo": _compare_to,
              "isGreaterThan": _greater, "isLessThan": _less}


class _Domains(celtypes.MapType):
    """`device.attributes` / `device.capacity`: an unknown domain reads as an empty map."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType()


def _activation(dev: Device) -> dict[str, Any]:
    def domains(value: dict[str, dict[str, Any]] | None) -> _Domains:
        return _Domains({celtypes.StringType(d): celpy.json_to_cel(dict(v)) for d, v in (value or {}).items()})
    cel_device = celtypes.MapType({
        celtypes.StringType("driver"): celtypes.StringType(dev.get("driver", "")),
        celtypes.StringType("attributes"): domains(dev.get("attributes")),
        celtypes.StringType("capacity"): domains(dev.get("capacity")),
    })
    return {"device": cel_device}


@cache
def compile_expression(expression: str) -> celpy.Runner:
    """Parse and check an expression once; raise CelError with the parser's reason if it is not CEL."""
    if not expression.strip():
        raise CelError(expression, "empty expression")
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise CelError(expression, f"longer than {MAX_EXPRESSION_LENGTH} characters")
    env = celpy.Environment()
    try:
        ast = env.compile(expression)
        return env.program(ast, functions=_FUNCTIONS)
    except celpy.CELParseError as exc:
        raise CelError(expression, " ".join(str(exc).split())) from None


def evaluate(expression: str, dev: Device) -> bool:
    """Whether the expression selects the device. A non-boolean result or an evaluation error
    (which fails allocation in Kubernetes) raises CelError."""
    program = compile_expression(expression)
    try:
        result = program.evaluate(_activation(dev))
    except (celpy.CELEvalError, ValueError, TypeError) as exc:
        raise CelError(expression, f"evaluation failed: {exc}") from None
    if isinstance(result, celpy.CELEvalError):
        raise CelError(expression, f"evaluation failed: {result}")
    if not isinstance(result, celtypes.BoolType):
        raise CelError(expression, f"result is {type(result).__name__}, not bool")
    return bool(result)


def selects(selectors: list[dict[str, Any]], dev: Device) -> bool:
    """A DeviceClass's (or request's) `selectors`: the device must satisfy every one."""
    return all(evaluate(s["cel"]["expression"], dev) for s in selectors)
