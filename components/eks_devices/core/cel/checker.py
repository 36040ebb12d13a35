"""What the API server's CEL type checker refuses in a DRA selector, where the types are known without a
device: a result that is not a bool, a field `device` lacks, `<`-style operators on quantities or versions,
`==` between different known types, a method the receiver's type lacks, a global function called as a
method. Attribute values are typed per device (dyn): what reads them is left to evaluation, as the
scheduler leaves it."""

from __future__ import annotations

from typing import Any

import lark

from eks_devices.core.cel.errors import CelError

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
    "semver": {"compareTo": "int", "isGreaterThan": "bool", "isLessThan": "bool", "major": "int", "minor": "int",
               "patch": "int"},
}
_CALLS = {"quantity": "quantity", "semver": "semver", "isQuantity": "bool", "isSemver": "bool", "size": "int",
          "has": "bool", "sign": "int"}
# declared with cel.Overload, not cel.MemberOverload: `x.sign()` does not compile
_GLOBAL_ONLY = {"quantity", "semver", "isQuantity", "isSemver", "sign"}
_STRING_METHODS = {"startsWith": "bool", "endsWith": "bool", "contains": "bool", "matches": "bool", "size": "int",
                   "lowerAscii": "string", "upperAscii": "string", "trim": "string", "replace": "string",
                   "charAt": "string", "substring": "string", "indexOf": "int", "lastIndexOf": "int"}
_ORDERED = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_gt": "_>_", "relation_ge": "_>=_"}
_NUMERIC = {"int", "uint", "double"}
_TYPE_NAMES = {"quantity": "kubernetes.Quantity", "semver": "kubernetes.Semver"}


def _refuse(what: str, *types: str) -> CelError:
    shown = ", ".join(_TYPE_NAMES.get(t, t) for t in types)
    return CelError(f"found no matching overload for {what!r} applied to ({shown})")


def _static_type(node: Any) -> str | None:
    """The type of a subexpression where it is known without a device (None: dyn or not modelled);
    raises CelError where the API server's type checker refuses the expression."""
    if not isinstance(node, lark.Tree):
        return None
    kids = node.children
    if node.data == "expr" and len(kids) == 3:
        for kid in kids:
            _static_type(kid)
        return None
    if node.data in ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
                     "member", "primary", "paren_expr") and len(kids) == 1:
        return _static_type(kids[0])
    if node.data in ("conditionalor", "conditionaland"):
        operands = [_static_type(kid) for kid in kids]
        if any(t not in (None, "bool") for t in operands):
            raise _refuse("_||_" if node.data == "conditionalor" else "_&&_", *(t or "dyn" for t in operands))
        return "bool"
    if node.data == "relation" and len(kids) == 2:
        left_op, right = kids
        left = _static_type(left_op.children[0])
        right_type = _static_type(right)
        operator_name = _ORDERED.get(left_op.data)
        if operator_name and ({left, right_type} & {"quantity", "semver"} or (
                left and right_type and left != right_type and not {left, right_type} <= _NUMERIC)):
            raise _refuse(operator_name, left or "dyn", right_type or "dyn")
        if left_op.data in ("relation_eq", "relation_ne") and left and right_type and left != right_type:
            raise _refuse("_==_" if left_op.data == "relation_eq" else "_!=_", left, right_type)
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
        return "quantity" if receiver == "capacity-domain" else None
    if node.data == "member_index":
        receiver = _static_type(kids[0])
        _static_type(kids[1])
        return {"attributes": "attributes-domain", "capacity": "capacity-domain"}.get(receiver or "")
    if node.data == "member_dot_arg":
        receiver, name = _static_type(kids[0]), str(kids[1])
        for kid in kids[2:]:
            _static_walk(kid)
        if name in _GLOBAL_ONLY:
            raise _refuse(name, f"{receiver or 'dyn'}.()")
        if receiver in _METHODS:
            if name not in _METHODS[receiver]:
                raise _refuse(name, f"{receiver}.()")
            return _METHODS[receiver][name]
        if receiver == "string":
            return _STRING_METHODS.get(name)
        return None
    if node.data == "ident_arg":
        for kid in kids[1:]:
            _static_walk(kid)
        return _CALLS.get(str(kids[0]))
    _static_walk(node)
    return None


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
