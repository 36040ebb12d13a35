"""CEL for DRA device selectors, evaluated offline with cel-python.

Kubernetes evaluates DeviceClass and request selectors against each device a driver publishes:
`device.driver`, `device.attributes["<domain>"].<name>` and `device.capacity["<domain>"].<name>`
(kubernetes/api `resource/v1/types.go`). This module gives the toolkit the same view without a cluster:

- `compile_expression(expression)` parses an expression and checks that every function it calls
  and every variable it reads exists in the DRA environment, raising `CelError` with the reason;
- `evaluate(expression, device)` runs it against one device, given as
  `{"driver": str, "attributes": {domain: {name: value}}, "capacity": {domain: {name: quantity}}}`
  (and `allowMultipleAllocations`, false when absent).
  Attribute values are Python `str`, `int` or `bool`; a version attribute may be given as
  `{"version": "1.2.3"}` (the ResourceSlice spelling). Capacities are Kubernetes quantities
  (`"80Gi"`, `"81152Mi"`, `4`).

The Kubernetes CEL library functions DRA selectors use are provided: `quantity()` with
`compareTo`, `isGreaterThan`, `isLessThan`, `asInteger`, `asApproximateFloat`, `isInteger`,
`add`, `sub`, and the global `sign(q)` (a function, not a method: `q.sign()` does not compile); `semver()`
(and `semver(text, true)`, normalizing) with `compareTo`, `isGreaterThan`, `isLessThan`, `major`, `minor`,
`patch`; `isQuantity()` and `isSemver()`; cel-go's
string extensions (`lowerAscii`, `upperAscii`, `trim`, `split`, `join`, `replace`, `indexOf`,
`lastIndexOf`, `charAt`, `substring`, `strings.quote`), its sets and lists extensions and Kubernetes' list
library (`extensions.py`), its `ip` and `cidr` libraries (`network.py`), its `url` library (`urls.py`), its
`format` library (`format.named`, `format.dns1123Label()` and the other formats, `validate`: `named_formats.py`),
cel-go's string `format` (`formatting.py`), optional values (`optional.py`), and the macros cel-python lacks
(two-variable comprehensions, `sortBy`, `cel.bind`: `macros.py`); `matches` is RE2 (`regex.py`).
As in Kubernetes, looking up a domain a device does not have gives an empty map (so
`"x" in device.attributes` is false), and reading a missing attribute is a runtime error, which
`evaluate` raises as `CelError`, as the scheduler fails allocation on it.
Equality across types is false, not an error (cel-go's heterogeneous equality: an int attribute `== 'x'`
simply does not match), and numbers of different kinds compare by value.

`compile_expression` also refuses what the API server's type checker refuses where the types are
known without a device: a selector that is not a bool (`device.driver`), a field `device` lacks, `<`,
`<=`, `>`, `>=` on quantities or versions (they compare with `compareTo`), `==` between different
known types (a capacity against an int), methods a quantity or version lacks, a literal pattern RE2 refuses,
a list literal mixing types, a literal `format` call cel-go's validator refuses, the list functions whose cost
on a list of strings it cannot bound and size-dependent functions on a string out of `split()` (`cost.py`).
Attribute values are typed only per device, so reads of them are checked at evaluation, as the scheduler does.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from functools import cache
from typing import Any

import celpy
import lark
from celpy import celtypes

from eks_devices.core.cel.checker import check_regex_literals, check_types
from eks_devices.core.cel.cost import check_string_sizes
from eks_devices.core.cel.errors import CelError
from eks_devices.core.cel.extensions import ACCEPTED_FROM, LIST_INDEX_OF, LIST_LAST_INDEX_OF, MIN, NAMESPACED
from eks_devices.core.cel.extensions import FUNCTIONS as EXTENSIONS
from eks_devices.core.cel.formatting import format_string
from eks_devices.core.cel.library import FUNCTIONS as LIBRARY
from eks_devices.core.cel.library import Quantity, Semver
from eks_devices.core.cel.macros import Runner, bound_variables, is_bind, is_two_variable
from eks_devices.core.cel.named_formats import FUNCTIONS as NAMED_FORMATS
from eks_devices.core.cel.named_formats import NAMESPACED as NAMED_FORMATS_NAMESPACED
from eks_devices.core.cel.named_formats import left_dispatched
from eks_devices.core.cel.network import FUNCTIONS as NETWORK
from eks_devices.core.cel.network import ip_function, string_of
from eks_devices.core.cel.optional import FUNCTIONS as OPTIONAL
from eks_devices.core.cel.optional import LAZY as OPTIONAL_LAZY
from eks_devices.core.cel.optional import MACROS as OPTIONAL_MACROS
from eks_devices.core.cel.optional import NAMESPACED as OPTIONAL_NAMESPACED
from eks_devices.core.cel.optional import Parser, check_markers
from eks_devices.core.cel.regex import matches
from eks_devices.core.cel.urls import FUNCTIONS as URLS

__all__ = ["CelError", "Quantity", "Semver", "compile_expression", "device", "evaluate", "selects"]


def _on_lists(on_list: Any, on_string: Any) -> Any:
    """`indexOf` / `lastIndexOf`: Kubernetes' list library on a list, cel-go's strings extension otherwise."""
    def apply(receiver: Any, *args: Any) -> Any:
        return on_list(receiver, *args) if isinstance(receiver, celtypes.ListType) else on_string(receiver, *args)
    return apply


def _string(value: Any) -> Any:
    """`string(x)`: an IP or CIDR in its canonical spelling, anything else as CEL converts it."""
    found = string_of(value)
    return found if found is not None else celpy.evaluation.base_functions["string"](value)


FUNCTIONS = {**LIBRARY, **EXTENSIONS, **NETWORK, **URLS, **OPTIONAL, **NAMED_FORMATS, "format": format_string,
             "matches": matches, "ip": ip_function, "string": _string,
             "_==_": left_dispatched(LIBRARY["_==_"]), "_!=_": left_dispatched(LIBRARY["_!=_"]),
             "indexOf": _on_lists(LIST_INDEX_OF, LIBRARY["indexOf"]),
             "lastIndexOf": _on_lists(LIST_LAST_INDEX_OF, LIBRARY["lastIndexOf"])}
_MACROS = {"has", "all", "exists", "exists_one", "map", "filter", "sortBy", *OPTIONAL_MACROS, *OPTIONAL_LAZY}
_KNOWN_FUNCTIONS = set(FUNCTIONS) | set(celpy.evaluation.base_functions) | _MACROS | {"dyn"}
_BINDING_MACROS = {"all", "exists", "exists_one", "map", "filter"}


class _Environment(celpy.Environment):
    """celpy's environment with our parser only (celpy's grammar with cel-go's optional syntax, `optional.py`).

    celpy's own `__init__` (cel-python 0.5.0 `celpy/__init__.py`) also builds celpy's grammar, a second LALR
    table nothing here parses with (~0.15 s of CPU); this sets the same attributes without it."""

    def __init__(self) -> None:
        sys.setrecursionlimit(max(sys.getrecursionlimit(), 2500))  # as celpy: CEL's nesting minimums
        self.logger = logging.getLogger("celpy.Environment")
        self.package = None
        self.annotations = dict(celpy.googleapis)
        self.runner_class = Runner
        self.cel_parser = Parser()


@cache
def _env() -> celpy.Environment:
    """The CEL environment, built on first use: building its parser takes a noticeable part of a second."""
    return _Environment()


# --- compile and evaluate ---------------------------------------------------------------------

def _rewrite_namespaced(tree: lark.Tree) -> None:
    """`sets.contains(a, b)` parses as a method `contains` on a variable `sets`: make it a call of the
    function `sets.contains`, as cel-go resolves a qualified function name (cel-go v0.26.0 `checker`); and
    route the method `min` to Kubernetes' list `min` rather than celpy's own reduction."""
    for node in tree.iter_subtrees():
        if node.data != "member_dot_arg":
            continue
        receiver, method = node.children[0], str(node.children[1])
        if method == "min":
            node.children[1] = lark.Token("IDENT", MIN)
        if not (isinstance(receiver, lark.Tree) and receiver.data == "member" and len(receiver.children) == 1):
            continue
        primary = receiver.children[0]
        if not (isinstance(primary, lark.Tree) and primary.data == "primary"
                and isinstance(primary.children[0], lark.Tree) and primary.children[0].data == "ident"):
            continue
        qualified = f"{primary.children[0].children[0]}.{method}"
        if qualified in NAMESPACED | OPTIONAL_NAMESPACED | NAMED_FORMATS_NAMESPACED:
            args = node.children[2:] or [lark.Tree("exprlist", [])]
            node.data = "primary"
            node.children = [lark.Tree("ident_arg", [lark.Token("IDENT", qualified), *args])]


def _check_names(tree: lark.Tree) -> None:
    """Reject calls to functions the DRA environment lacks and variables other than `device`."""
    bound: set[str] = set()
    binders: set[int] = set()  # the `cel` of each `cel.bind(...)`
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg":
            bound.update(bound_variables(node))
            if is_bind(node):
                binders.update(id(n) for n in node.children[0].iter_subtrees() if n.data == "ident")
        if node.data == "member_dot_arg" and str(node.children[1]) in _BINDING_MACROS and not is_two_variable(node):
            args = node.children[2]
            if isinstance(args, lark.Tree) and args.children:
                first = next((t for t in args.children[0].scan_values(lambda v: isinstance(v, lark.Token))), None)
                if first is not None:
                    bound.add(str(first))
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg":
            name = str(node.children[1])
            if is_two_variable(node) or is_bind(node):
                continue
        elif node.data == "ident_arg":
            name = str(node.children[0])
        elif node.data == "ident":
            var = str(node.children[0])
            if var != "device" and var not in bound and id(node) not in binders:
                raise CelError(f"undeclared reference to {var!r}: selectors can read only `device`")
            continue
        else:
            continue
        if name not in _KNOWN_FUNCTIONS:
            raise CelError(f"undeclared function {name!r}")


@cache
def _program(expression: str) -> celpy.Runner:
    return _compiled(expression)[1]


@cache
def _compiled(expression: str) -> tuple[frozenset[str], celpy.Runner]:
    """The functions an expression calls, and its program."""
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
    _rewrite_namespaced(tree)
    check_markers(tree)
    _check_names(tree)
    check_types(tree)
    check_regex_literals(tree)
    check_string_sizes(tree)
    return frozenset(_calls(tree)), _env().program(tree, functions=FUNCTIONS)


def _calls(tree: lark.Tree) -> Iterator[str]:
    """The functions and macros an expression calls; a two-variable comprehension as `two-variable <name>`."""
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg":
            yield f"two-variable {node.children[1]}" if is_two_variable(node) else str(node.children[1])
        elif node.data == "ident_arg":
            yield str(node.children[0])


MAX_DEPTH = 200  # nesting the evaluator (a recursive tree walk) stands; real selectors nest a dozen levels


def _depth(tree: lark.Tree) -> int:
    """The parse tree's depth, walked without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, lark.Tree))
    return deepest


def compile_expression(expression: str, kubernetes: tuple[int, int] | None = None) -> None:
    """Check that a selector compiles in the DRA CEL environment; raise CelError naming the problem.

    With `kubernetes` (the cluster's minor), also refuse the functions that API server does not yet accept in
    a new selector: it checks them against the previous minor's environment (k8s.io/apiserver v0.36.3
    `pkg/cel/environment/base.go`, `DefaultCompatibilityVersion`: the binary's minor minus one)."""
    calls, _ = _compiled(expression)
    if kubernetes is None:
        return
    late: dict[str, list[str]] = {}
    for name in sorted(calls):
        if name in ACCEPTED_FROM and ACCEPTED_FROM[name][0] > kubernetes:
            late.setdefault(ACCEPTED_FROM[name][1], []).append(name)
    if late:
        shown = f"{kubernetes[0]}.{kubernetes[1]}"
        raise CelError("; ".join(
            f"{library} ({', '.join(names)}) is refused by a Kubernetes {shown} API server, which checks new "
            f"selectors against {kubernetes[0]}.{kubernetes[1] - 1}'s CEL environment; it is accepted from "
            f"{'.'.join(map(str, ACCEPTED_FROM[names[0]][0]))}" for library, names in late.items()))


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
        celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(
            bool(device.get("allowMultipleAllocations"))),
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
