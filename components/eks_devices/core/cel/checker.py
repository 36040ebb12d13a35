"""What the API server's CEL type checker refuses in a DRA selector, where the types are known without a
device: a result that is not a bool, a field `device` lacks, `<`-style operators on quantities or versions,
`==` between different known types, a method the receiver's type lacks, a global function called as a
method. Attribute values are typed per device (dyn): what reads them is left to evaluation, as the
scheduler leaves it."""

from __future__ import annotations

from typing import Any

import lark
from celpy.evaluation import celstr

from eks_devices.core.cel.errors import CelError
from eks_devices.core.cel.formatting import TAKES as FORMAT_TAKES
from eks_devices.core.cel.formatting import check_literal_call
from eks_devices.core.cel.named_formats import FUNCTIONS as NAMED_FORMATS
from eks_devices.core.cel.regex import compile_pattern

# --- what the API server's type checker refuses (types known without a device) ---------------------
# k8s.io/dynamic-resource-allocation v0.36.3 `cel/compile.go`: `device` has the fields below, capacities are
# quantities, attribute values are typed per device (dyn); the result must be a bool.

_DEVICE_FIELDS = {"driver": "string", "attributes": "attributes", "capacity": "capacity",
                  "allowMultipleAllocations": "bool"}
_LITERALS = {"INT_LIT": "int", "UINT_LIT": "uint", "FLOAT_LIT": "double", "STRING_LIT": "string",
             "BOOL_LIT": "bool", "BYTES_LIT": "bytes"}
_METHODS = {
    "quantity": {"compareTo": "int", "isGreaterThan": "bool", "isLessThan": "bool", "isInteger": "bool",
                 "asInteger": "int", "asApproximateFloat": "double", "add": "quantity", "sub": "quantity"},
    # k8s.io/apiserver v0.36.3 `pkg/cel/library/ip.go`, `cidr.go`
    "ip": {"family": "int", "isUnspecified": "bool", "isLoopback": "bool", "isLinkLocalMulticast": "bool",
           "isLinkLocalUnicast": "bool", "isGlobalUnicast": "bool"},
    "cidr": {"containsIP": "bool", "containsCIDR": "bool", "ip": "ip", "prefixLength": "int", "masked": "cidr"},
    # k8s.io/apiserver v0.36.3 `pkg/cel/library/urls.go`
    "url": {"getScheme": "string", "getHost": "string", "getHostname": "string", "getPort": "string",
            "getEscapedPath": "string", "getQuery": "map"},
    # cel-go v0.26.0 `cel/library.go` `optionalLib` (`optional.py`)
    "optional": {"hasValue": "bool", "value": None, "or": "optional", "orValue": None, "optMap": "optional",
                 "optFlatMap": "optional"},
    # k8s.io/apiserver v0.36.3 `pkg/cel/library/format.go` (`named_formats.py`)
    "format": {"validate": "optional(list(string))"},
    "semver": {"compareTo": "int", "isGreaterThan": "bool", "isLessThan": "bool", "major": "int", "minor": "int",
               "patch": "int"},
}
_ARGUMENTS = {("cidr", "containsIP"): {"string", "ip"}, ("cidr", "containsCIDR"): {"string", "cidr"},
              ("optional", "or"): {"optional"}, ("format", "validate"): {"string"}}
_CALLS = {"quantity": "quantity", "semver": "semver", "isQuantity": "bool", "isSemver": "bool", "size": "int",
          "has": "bool", "sign": "int", "ip": "ip", "cidr": "cidr", "isIP": "bool", "isCIDR": "bool",
          "ip.isCanonical": "bool", "url": "url", "isURL": "bool", "optional.of": "optional",
          "optional.ofNonZeroValue": "optional", "optional.none": "optional", "format.named": "optional(format)",
          **{name: "format" for name in NAMED_FORMATS if name.startswith("format.") and name != "format.named"}}
_CONVERSIONS = {"string", "int", "uint", "double", "bool", "bytes"}
# declared with cel.Overload, not cel.MemberOverload: `x.sign()` does not compile
_GLOBAL_ONLY = {"quantity", "semver", "isQuantity", "isSemver", "sign", "cidr", "isIP", "isCIDR", "url", "isURL"}
_STRING_METHODS = {"startsWith": "bool", "endsWith": "bool", "contains": "bool", "matches": "bool", "size": "int",
                   "lowerAscii": "string", "upperAscii": "string", "trim": "string", "replace": "string",
                   "charAt": "string", "substring": "string", "indexOf": "int", "lastIndexOf": "int",
                   "format": "string"}
# cel-go v0.26.0 `ext/lists.go` and Kubernetes' `library/lists.go` declare these on lists only
_LIST_METHODS = {"slice", "flatten", "sort", "reverse", "distinct", "isSorted", "sum", "min", "lists@min", "max"}
# The API server's cost estimate (k8s.io/apiserver v0.36.3 `pkg/cel/library/cost.go` `EstimateCallCost`) charges
# these per character of each element of a list of strings; an element's size is known only on a path under
# `device` (dynamic-resource-allocation `cel/compile.go` `sizeEstimator`), never for a literal or a `split`
# result, so the estimate overflows the selector's limit (`CELSelectorExpressionMaxCost`) and the selector is
# refused as "too complex". The same functions on numbers cost a step per element and pass.
_UNBOUNDED_ON_STRINGS = {"isSorted", "sum", "min", "lists@min", "max", "indexOf", "lastIndexOf", "join"}
_SAME_LIST = {"sort", "distinct", "reverse", "slice"}  # a list(string) in, a list(string) out
_NOT_LISTS = {"string", "bool", "int", "uint", "double", "quantity", "semver", "ip", "cidr", "url", "optional",
              "format"}
_ORDERED = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_"}
_NUMERIC = {"int", "uint", "double"}
_TYPE_NAMES = {"quantity": "kubernetes.Quantity", "semver": "kubernetes.Semver", "ip": "net.IP", "cidr": "net.CIDR",
               "url": "kubernetes.URL", "format": "kubernetes.NamedFormat"}


def _refuse(what: str, *types: str) -> CelError:
    shown = ", ".join(_TYPE_NAMES.get(t, t) for t in types)
    return CelError(f"found no matching overload for {what!r} applied to ({shown})")


def _static_type(node: Any) -> str | None:
    """The type of a subexpression where it is known without a device (None: dyn or not modelled);
    raises CelError where the API server's type checker refuses the expression."""
    return _collapsed(_typed(node))


def _collapsed(found: str | None) -> str | None:
    """A type without its element or held type (`list(int)` → `list`); an attribute value (`any`) as dyn."""
    if found and found.startswith(("list(", "optional(")):
        return found.partition("(")[0]
    return None if found == "any" else found


def _typed(node: Any) -> str | None:
    """`_static_type`, but an attribute value reads as `any`: the type compile.go declares for it
    (`apiservercel.AnyType`), which matters where a literal's elements must share one type."""
    if not isinstance(node, lark.Tree):
        return None
    kids = node.children
    if node.data == "expr" and len(kids) == 3:
        for kid in kids:
            _static_type(kid)
        return None
    if node.data in ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
                     "member", "primary", "paren_expr") and len(kids) == 1:
        return _typed(kids[0])
    if node.data in ("conditionalor", "conditionaland"):
        operands = [_static_type(kid) for kid in kids]
        if any(t not in (None, "bool") for t in operands):
            raise _refuse("_||_" if node.data == "conditionalor" else "_&&_", *(t or "dyn" for t in operands))
        return "bool"
    if node.data == "relation" and len(kids) == 2:
        left_op, right = kids
        left_full, right_full = _typed(left_op.children[0]), _typed(right)
        left, right_type = _collapsed(left_full), _collapsed(right_full)
        operator_name = _ORDERED.get(left_op.data)
        if operator_name and ({left, right_type} & {"quantity", "semver", "ip", "cidr", "url", "format"} or (
                left and right_type and left != right_type and not {left, right_type} <= _NUMERIC)):
            raise _refuse(operator_name, left or "dyn", right_type or "dyn")
        if left_op.data in ("relation_eq", "relation_ne") and left and right_type and left != right_type:
            raise _refuse("_==_" if left_op.data == "relation_eq" else "_!=_", left, right_type)
        _check_format_equality(left_op.data, left_full, right_full)
        return "bool"
    if node.data == "unary" and len(kids) == 2 and isinstance(kids[0], lark.Tree) and kids[0].data == "unary_not":
        operand = _static_type(kids[1])
        if operand not in (None, "bool"):
            raise _refuse("!_", operand)
        return "bool"
    if node.data == "literal":
        return _LITERALS.get(getattr(kids[0], "type", ""))
    if node.data == "ident" and str(kids[0]) == "device":
        return "device"
    if node.data == "member_dot":
        receiver, name = _static_type(kids[0]), str(kids[1])
        if receiver == "device":
            if name not in _DEVICE_FIELDS:
                raise CelError(f"undefined field {name!r}: `device` has {', '.join(sorted(_DEVICE_FIELDS))}")
            return _DEVICE_FIELDS[name]
        return {"capacity-domain": "quantity", "attributes-domain": "any"}.get(receiver or "")
    if node.data == "member_index":
        receiver = _static_type(kids[0])
        _static_type(kids[1])
        return {"attributes": "attributes-domain", "capacity": "capacity-domain",
                "attributes-domain": "any", "capacity-domain": "quantity"}.get(receiver or "")
    if node.data in ("member_dot_opt", "member_index_opt"):
        receiver = _typed(kids[0])
        _static_walk(node)
        if receiver == "device" and node.data == "member_dot_opt":
            if str(kids[1]) not in _DEVICE_FIELDS:
                raise CelError(f"undefined field {str(kids[1])!r}: `device` has {', '.join(sorted(_DEVICE_FIELDS))}")
            return f"optional({_DEVICE_FIELDS[str(kids[1])]})"
        inner = {"attributes": "attributes-domain", "capacity": "capacity-domain", "attributes-domain": "any",
                 "capacity-domain": "quantity"}.get(receiver or "")
        return f"optional({inner})" if inner else "optional"
    if node.data == "opt_marked":  # a map key's marker (a list element's is checked by `_list_literal`)
        _static_walk(node)
        return None
    if node.data == "list_lit":
        return _list_literal(kids[0].children if kids and isinstance(kids[0], lark.Tree) else [])
    if node.data == "member_dot_arg":
        receiver, name = _typed(kids[0]), str(kids[1])
        if name == "format" and receiver == "string":
            _format_call(kids[0], kids[2].children if len(kids) > 2 and kids[2] is not None else [])
            return "string"
        for kid in kids[2:]:
            _static_walk(kid)
        if receiver == "list(string)" and name in _UNBOUNDED_ON_STRINGS:
            raise CelError(f"too complex, exceeds cost limit: {name.rpartition('@')[2]}() on a list of strings, "
                           "whose sizes the API server's cost estimate cannot bound")
        if name == "split" or (receiver == "list(string)" and name in _SAME_LIST):
            return "list(string)"
        if receiver and receiver.startswith("optional(") and name in ("value", "orValue"):
            held = receiver[9:-1]  # what the optional holds; `orValue(x)` gives it where x is of that type too
            given = [_typed(arg) for arg in kids[2].children] if len(kids) > 2 and kids[2] is not None else []
            if given == ([] if name == "value" else [held]):
                return held
        receiver = _static_type(kids[0])
        if name in _GLOBAL_ONLY:
            raise _refuse(name, f"{receiver or 'dyn'}.()")
        if (receiver in _NOT_LISTS and name in _LIST_METHODS) or (name == "ip" and receiver not in (None, "cidr")):
            raise _refuse(name, f"{receiver}.()")
        if receiver in _METHODS:
            if name not in _METHODS[receiver]:
                raise _refuse(name, f"{_shown(receiver)}.()")
            accepted = _ARGUMENTS.get((receiver, name))
            args = [_static_type(arg) for arg in kids[2].children] if accepted and len(kids) > 2 else []
            if accepted and (any(t is not None and t not in accepted for t in args) or (
                    receiver == "format" and len(args) != 1)):
                raise _refuse(name, f"{_shown(receiver)}.({', '.join(t or 'dyn' for t in args)})")
            return _METHODS[receiver][name]
        if receiver == "string":
            if name not in _STRING_METHODS and any(name in methods for methods in _METHODS.values()):
                raise _refuse(name, "string.()")  # a Kubernetes type's method, which a string lacks
            return _STRING_METHODS.get(name)
        return None
    if node.data == "ident_arg":
        name = str(kids[0])
        if name in ("optional.of", "optional.ofNonZeroValue") and len(kids) > 1 and len(kids[1].children) == 1:
            held = _typed(kids[1].children[0])
            return f"optional({held})" if held else "optional"
        args = [_static_type(arg) for arg in kids[1].children] if len(kids) > 1 else []
        if name.startswith("sets.") and any(t not in (None, "list") for t in args):
            raise _refuse(name, *(t or "dyn" for t in args))
        if name.startswith("format.") and name in NAMED_FORMATS and (
                [t for t in args if t not in (None, "string")] or len(args) != (name == "format.named")):
            raise _refuse(name, *(t or "dyn" for t in args))  # `format.named(string)`, `format.<name>()`
        if name in _CONVERSIONS and "format" in args:
            raise _refuse(name, *(t or "dyn" for t in args))
        return _CALLS.get(name)
    _static_walk(node)
    return None


def _check_format_equality(operator: str, left: str | None, right: str | None) -> None:
    """The API server's cost estimate bounds `==` between formats (k8s.io/apiserver v0.36.3 `pkg/cel/library/cost.go`
    `EstimateCallCost`, `cel.FormatType`) and against an attribute value, but not `!=` or `==` between optional
    formats: the selector is refused as too complex. `==` against a dyn operand is left alone: it is bounded where
    the checker types that operand a format (a comprehension's variable over a list of formats), which this model
    does not follow, and refused otherwise (`format.uuid() == dyn(x)`)."""
    if operator not in ("relation_eq", "relation_ne") or not {left, right} & {"format", "optional(format)"}:
        return
    if operator == "relation_ne" or "optional(format)" in (left, right):
        shown = "==" if operator == "relation_eq" else "!="
        raise CelError(f"too complex, exceeds cost limit: `{shown}` on ({_shown(left or 'dyn')}, "
                       f"{_shown(right or 'dyn')}), whose cost the API server's estimate cannot bound")


def _list_literal(elements: list[Any]) -> str:
    """A list literal's elements must share one type (cel-go `HomogeneousAggregateLiterals`, which
    k8s.io/apiserver `pkg/cel/environment/base.go` sets): an attribute value (`any`) beside an `int` is refused,
    and so are nested lists of different element types (`[[1], [true]]`); an empty or dyn list fits any list.
    Its type: `list(<element type>)` where every element's type is known, else `list`."""
    typed = [_marked_element(element) for element in elements]
    known: list[str] = []
    for found in typed:
        if found is None or found in ("list", "optional") or (found.startswith("list(") and "list" in known) or (
                found.startswith("optional(") and "optional" in known):
            continue
        if found not in known:
            known.append(found)
    if len(known) > 1:
        raise CelError(f"a list literal mixes types: expected type {_shown(known[0])!r} "
                       f"but found {_shown(known[1])!r}")
    return f"list({known[0]})" if known and typed.count(known[0]) == len(typed) else "list"


def _marked_element(element: Any) -> str | None:
    """A list element's type; a `?`-marked element must be an optional, and is typed as what it holds (dyn)."""
    kids = element.children if isinstance(element, lark.Tree) else []
    if len(kids) == 1 and isinstance(kids[0], lark.Tree) and kids[0].data == "opt_marked":
        inner = _static_type(kids[0].children[0])
        if inner not in (None, "optional"):
            raise CelError(f"expected type 'optional_type({_shown(inner)})' but found {_shown(inner)!r}")
        return None
    return _typed(element)


def _shown(kind: str) -> str:
    """A type as cel-go names it (`list(kubernetes.Quantity)`)."""
    if kind.startswith("list("):
        return f"list({_shown(kind[5:-1])})"
    if kind.startswith("optional("):
        return f"optional_type({_shown(kind[9:-1])})"
    return _TYPE_NAMES.get(kind, kind)


def _format_call(receiver: Any, args: list[Any]) -> None:
    """`"...".format([...])`: its argument list is exempt from one element type (cel-go `stringFormatValidator`
    adds `format` to `HomogeneousAggregateLiteralExemptFunctions`), and a literal call is checked as cel-go checks
    it (`formatting.check_literal_call`)."""
    if len(args) != 1:
        raise _refuse("format", "string.(" + ", ".join(_static_type(a) or "dyn" for a in args) + ")")
    elements = _list_elements(args[0])
    if elements is None:
        given = _static_type(args[0])
        if given not in (None, "list"):
            raise _refuse("format", f"string.({given})")
        return
    types = [_format_type(e) for e in elements]
    text = _string_literal(receiver)
    if text is not None:
        check_literal_call(text, types, _shown)


def _format_type(node: Any) -> str | None:
    """An argument's type as cel-go's format validator sees it: an attribute value is `google.protobuf.Any`,
    which no clause takes (`dyn(...)` makes it dyn), a domain map is a map, and a list literal is a list if
    `%s` can print each of its elements, else the first element type it cannot."""
    elements = _list_elements(node)
    if elements is None:
        found = _typed(node)
        return {"attributes": "map", "capacity": "map", "attributes-domain": "map", "capacity-domain": "map",
                "any": "google.protobuf.Any"}.get(found or "", found)
    for element in elements:
        found = _format_type(element)
        if found is not None and found not in FORMAT_TAKES["s"] and not found.startswith("list"):
            return found
    return "list"


def _list_elements(node: Any) -> list[Any] | None:
    """The elements of an expression that is only a list literal, else None."""
    while isinstance(node, lark.Tree) and len(node.children) == 1 and node.data != "list_lit":
        node = node.children[0]
    if not (isinstance(node, lark.Tree) and node.data == "list_lit"):
        return None
    return list(node.children[0].children) if node.children and isinstance(node.children[0], lark.Tree) else []


def _static_walk(node: Any) -> None:
    """Type-check every subexpression below a node whose own type is not modelled."""
    if isinstance(node, lark.Tree):
        for kid in node.children:
            if isinstance(kid, lark.Tree):
                _static_type(kid)


def check_types(tree: lark.Tree) -> None:
    """Refuse the expression where the type checker would (CelError with its reason)."""
    result = _static_type(tree)
    if result is not None and result != "bool":
        raise CelError(f"a selector must return a bool, not {_TYPE_NAMES.get(result, result)}")


# --- regular expressions: RE2, checked where the pattern is a literal -----------------------------------
# k8s.io/apiserver v0.36.3 `pkg/cel/environment/base.go` adds cel-go's `cel.ValidateRegexLiterals()` from 1.29:
# a literal pattern of `matches` that RE2 does not compile (lookahead, backreferences) is refused at compile
# time; a pattern computed per device fails at evaluation (`regex.matches`).


def _string_literal(node: Any) -> str | None:
    """The value of an expression that is only a string literal, else None."""
    while isinstance(node, lark.Tree) and len(node.children) == 1:
        node = node.children[0]
    if isinstance(node, lark.Token) and node.type in ("STRING_LIT", "MLSTRING_LIT"):
        return str(celstr(node))
    return None


def check_regex_literals(tree: lark.Tree) -> None:
    """Refuse a `matches` whose literal pattern RE2 does not compile, as the API server does."""
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg" and str(node.children[1]) == "matches" and len(node.children) > 2:
            args = node.children[2].children
            pattern = _string_literal(args[0]) if args else None
        elif node.data == "ident_arg" and str(node.children[0]) == "matches" and len(node.children) > 1:
            args = node.children[1].children
            pattern = _string_literal(args[1]) if len(args) > 1 else None
        else:
            continue
        if pattern is not None:
            compile_pattern(pattern)
