"""The API server's cost estimate on strings of unbounded size, which it refuses as too complex.

k8s.io/apiserver v0.36.3 `pkg/cel/library/cost.go` `EstimateCallCost` gives `split` a result size that bounds
the list's length but not its elements' sizes; a function whose cost grows with a string's size (`contains`,
`lowerAscii`, `matches`, `+`, `isIP`...) applied to such an element then costs more than a selector may
(`CELSelectorExpressionMaxCost`), and the selector is refused: "too complex, exceeds cost limit". Functions whose
cost is bounded by the other operand or constant (`startsWith`, `endsWith`, `==`, `<`, `size`, `charAt`) pass.
An element is reached by an index, as a comprehension's (value) variable, or through `cel.bind`; `sort`,
`distinct`, `reverse`, `slice`, `filter` and `sortBy` keep a split list a split list. The estimate knows no size
either for the strings `charAt`, `"...".format`, and the URL getters return, for a `getQuery()` entry's values,
or for the messages of a format's `validate` (`named_formats.py`), which it charges per character of its argument.
Checked against a real 1.36 API server (`tests/e2e/test_cel_selectors.py`).
"""

from __future__ import annotations

from typing import Any

import lark

from eks_devices.core.cel.errors import CelError
from eks_devices.core.cel.macros import arguments, is_bind, is_two_variable, variable

_KEEPS_SPLIT_LIST = {"sort", "distinct", "reverse", "slice", "filter", "sortBy"}
_MACROS = {"all", "exists", "exists_one", "map", "filter", "sortBy", "transformList", "transformMap",
           "transformMapEntry"}
# string methods whose cost grows with the receiver's size, and calls whose cost grows with an argument's
_BY_RECEIVER = {"contains", "lowerAscii", "upperAscii", "matches", "trim", "split", "indexOf", "lastIndexOf",
                "substring", "replace"}
_BY_ARGUMENT = {"contains", "matches", "indexOf", "lastIndexOf", "split", "replace", "isQuantity", "isSemver",
                "isIP", "isCIDR", "quantity", "semver", "ip", "cidr", "ip.isCanonical", "strings.quote", "url",
                "validate"}
# methods whose string result has no size estimate (k8s.io/apiserver v0.36.3 `pkg/cel/library/cost.go` gives the
# URL getters a cost but no result size; cel-go v0.26.0 `ext/strings.go` none for `charAt`, `ext/formatting.go`
# none for `format`)
_UNSIZED_RESULTS = {"charAt", "format", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath"}
_WRAPPERS = {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member",
             "primary", "paren_expr"}

SPLIT_LIST, UNSIZED = "split list", "unsized string"


def _unwrap(node: Any) -> Any:
    while isinstance(node, lark.Tree) and node.data in _WRAPPERS and len(node.children) == 1:
        node = node.children[0]
    return node


def _kind(node: Any, names: dict[str, str]) -> str | None:
    """Whether a subexpression is a list of unsized strings (a split list, a `getQuery()` entry, `validate`'s
    messages), an unsized string, or neither (None)."""
    node = _unwrap(node)
    if not isinstance(node, lark.Tree):
        return None
    if node.data == "member_dot_arg":
        name, receiver = str(node.children[1]), _unwrap(node.children[0])
        if name == "split" or (name == "value" and _is_call(receiver, "validate")):
            return SPLIT_LIST
        if name in _UNSIZED_RESULTS:
            return UNSIZED
        return SPLIT_LIST if name in _KEEPS_SPLIT_LIST and _kind(node.children[0], names) == SPLIT_LIST else None
    if node.data == "member_index":
        if _is_call(_unwrap(node.children[0]), "getQuery"):
            return SPLIT_LIST
        return UNSIZED if _kind(node.children[0], names) == SPLIT_LIST else None
    if node.data == "ident":
        return names.get(str(node.children[0]))
    return None


def _is_call(node: Any, method: str) -> bool:
    return isinstance(node, lark.Tree) and node.data == "member_dot_arg" and str(node.children[1]) == method


def _variables(tree: lark.Tree) -> dict[str, str]:
    """The macro and `cel.bind` variables that hold a split list or a string out of one (scopes not told
    apart, as the compiler's name check does not)."""
    names: dict[str, str] = {}
    for _ in range(3):  # a variable bound from another variable: settle in a few rounds
        for node in tree.iter_subtrees():
            if node.data != "member_dot_arg":
                continue
            args = arguments(node)
            if is_bind(node) and len(args) == 3:
                kind, name = _kind(args[1], names), variable(args[0])
            elif str(node.children[1]) in _MACROS and len(args) >= 2:
                kind = UNSIZED if _kind(node.children[0], names) == SPLIT_LIST else None
                name = variable(args[1] if is_two_variable(node) else args[0])
            else:
                continue
            if kind and name:
                names[name] = kind
    return names


def _refuse(what: str) -> CelError:
    return CelError(f"too complex, exceeds cost limit: {what} on a string taken from split() (or from charAt(), "
                    "format(), a URL's parts, validate()'s messages), whose size the API server's cost estimate "
                    "cannot bound")


def check_string_sizes(tree: lark.Tree) -> None:
    """Refuse a size-dependent function on a string taken out of a split list (CelError), as the API server does."""
    names = _variables(tree)
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg":
            name = str(node.children[1])
            if name in _BY_RECEIVER and _kind(node.children[0], names) == UNSIZED:
                raise _refuse(f"{name}()")
            if name in _BY_ARGUMENT and any(_kind(arg, names) == UNSIZED for arg in arguments(node)):
                raise _refuse(f"{name}()")
        elif node.data == "ident_arg" and str(node.children[0]) in _BY_ARGUMENT and len(node.children) > 1:
            if any(_kind(arg, names) == UNSIZED for arg in node.children[1].children):
                raise _refuse(f"{node.children[0]}()")
        elif _concatenates_unsized(node, names):
            raise _refuse("+")


def _concatenates_unsized(node: lark.Tree, names: dict[str, str]) -> bool:
    """`a + b` with a string out of a split list on either side."""
    if node.data != "addition" or len(node.children) != 2:
        return False
    left = node.children[0]
    return isinstance(left, lark.Tree) and left.data == "addition_add" and any(
        _kind(side, names) == UNSIZED for side in (left.children[0], node.children[1]))
