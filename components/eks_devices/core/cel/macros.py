"""The macros cel-python lacks and Kubernetes gives DRA selectors, evaluated by an extended celpy evaluator.

- cel-go's two-variable comprehensions (`ext.TwoVarComprehensions()`, k8s.io/apiserver v0.36.3
  `pkg/cel/environment/base.go`, introduced at 1.32): `all`, `exists`, `existsOne` / `exists_one` with an
  index (list) or key (map) and a value, `transformList`, `transformMap`, `transformMapEntry` (with an
  optional filter); semantics of cel-go v0.26.0 `ext/comprehensions.go`;
- `sortBy` of cel-go's lists extension (`ext/lists.go` `sortByMacro`, version 2; base.go adds version 3 at 1.34);
- `cel.bind` of cel-go's bindings extension (`ext/bindings.go`), which k8s.io/dynamic-resource-allocation
  v0.36.3 `cel/compile.go` `newCompiler` adds to DRA selectors at 1.31.
The evaluator also reads the optional syntax and short-circuits `or`, `orValue`, `optMap`, `optFlatMap`
(`optional.py`). Like celpy's own macros, a failing step yields a `CELEvalError` value, so `&&` and `||` can
absorb it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import lark
from celpy import InterpretedRunner, celtypes
from celpy.evaluation import CELEvalError, Evaluator

from eks_devices.core.cel.errors import CelError
from eks_devices.core.cel.extensions import sort_by_keys
from eks_devices.core.cel.library import _equals
from eks_devices.core.cel.optional import LAZY, MACROS, NONE, Marked, Optional, of, select

# name -> the numbers of arguments (the two variables included) of its two-variable form
TWO_VARIABLE = {"all": (3,), "exists": (3,), "existsOne": (3,), "exists_one": (3,),
                "transformList": (3, 4), "transformMap": (3, 4), "transformMapEntry": (3, 4)}


def arguments(node: lark.Tree) -> list[Any]:
    """The argument expressions of a `member_dot_arg` node."""
    return list(node.children[2].children) if len(node.children) > 2 and node.children[2] is not None else []


def is_two_variable(node: lark.Tree) -> bool:
    return node.data == "member_dot_arg" and len(arguments(node)) in TWO_VARIABLE.get(str(node.children[1]), ())


def is_bind(node: lark.Tree) -> bool:
    """`cel.bind(name, init, expr)`: CEL parses it as a method `bind` on a variable `cel`."""
    if node.data != "member_dot_arg" or str(node.children[1]) != "bind":
        return False
    receiver = node.children[0]
    return bool(receiver.data == "member" and [t.value for t in receiver.scan_values(
        lambda v: isinstance(v, lark.Token))] == ["cel"])


def variable(expr: Any) -> str | None:
    """The name an argument spells if it is a bare identifier (a macro's variable), else None."""
    names = [str(t) for t in expr.scan_values(lambda v: isinstance(v, lark.Token))] if isinstance(
        expr, lark.Tree) else []
    idents = list(expr.find_data("ident")) if isinstance(expr, lark.Tree) else []
    return names[0] if len(names) == 1 and len(idents) == 1 else None


def bound_variables(node: lark.Tree) -> list[str]:
    """The variables a macro node binds (for the compiler's check of names); CelError where cel-go's macro
    expansion refuses them (`ext/comprehensions.go` `extractIterVars`)."""
    args = arguments(node) if node.data == "member_dot_arg" else []
    name = str(node.children[1]) if node.data == "member_dot_arg" else ""
    if is_two_variable(node):
        names = [variable(args[0]), variable(args[1])]
        if None in names:
            raise CelError(f"{name}: argument must be a simple name")
        if names[0] == names[1]:
            raise CelError(f"{name}: duplicate variable name: {names[0]}")
        return [str(n) for n in names]
    if is_bind(node) or (name in ("sortBy", *MACROS) and len(args) == 2):
        return [v for v in (variable(args[0]),) if v] if args else []
    return []


def _entries(target: Any) -> list[tuple[Any, Any]]:
    if isinstance(target, celtypes.MapType):
        return list(target.items())
    if isinstance(target, celtypes.ListType):
        return [(celtypes.IntType(i), v) for i, v in enumerate(target)]
    raise TypeError(f"no such overload: a comprehension over {type(target).__name__}")


class _Evaluator(Evaluator):
    """celpy's evaluator with the macros above."""

    def sub_evaluator(self, ast: lark.Tree) -> Evaluator:
        return _Evaluator(ast, activation=self.activation)

    def _bound(self, expr: lark.Tree, names: list[str]) -> Callable[..., Any]:
        """The expression as a function of the variables, returning a CELEvalError rather than raising it."""
        nested = self.sub_evaluator(expr)

        def run(*values: Any) -> Any:
            try:
                return nested.evaluate(dict(zip(names, values, strict=True)))
            except CELEvalError as exc:
                return exc
            except (TypeError, ValueError, ArithmeticError, KeyError) as exc:
                return CELEvalError(str(exc), type(exc), None, tree=expr)
        return run

    # --- optional values (`optional.py`) ---
    def expr(self, tree: lark.Tree) -> Any:
        kids = tree.children
        if len(kids) == 1 and isinstance(kids[0], lark.Tree) and kids[0].data == "opt_marked":
            value = self.visit(kids[0].children[0])
            return value if isinstance(value, CELEvalError) else Marked(value)
        return super().expr(tree)

    def exprlist(self, tree: lark.Tree) -> Any:
        values = [self.visit(kid) for kid in tree.children]
        failed = next((v for v in values if isinstance(v, CELEvalError)), None)
        if failed is not None:
            return failed
        out = []
        for value in values:
            if isinstance(value, Marked):
                if not isinstance(value.value, Optional):
                    return CELEvalError("no such overload: a ?-marked element that is not optional", TypeError, None)
                if value.value.present:
                    out.append(value.value.value)
            else:
                out.append(value)
        return celtypes.ListType(out)

    def mapinits(self, tree: lark.Tree) -> Any:
        values = [self.visit(kid) for kid in tree.children]
        out = celtypes.MapType()
        for key, value in zip(values[0::2], values[1::2], strict=True):
            if isinstance(key, Marked):
                if not isinstance(value, Optional):
                    raise TypeError("no such overload: a ?-marked key whose value is not optional")
                if not value.present:
                    continue
                key, value = key.value, value.value
            if key in out:
                raise ValueError(f"Failed with repeated key {key!r}")
            out[key] = value
        return out

    def member_dot_opt(self, tree: lark.Tree) -> Any:
        target = self.visit(tree.children[0])
        return target if isinstance(target, CELEvalError) else self._select(target, celtypes.StringType(
            tree.children[1]), tree)

    def member_index_opt(self, tree: lark.Tree) -> Any:
        target, key = self.visit(tree.children[0]), self.visit(tree.children[1])
        failed = next((v for v in (target, key) if isinstance(v, CELEvalError)), None)
        return failed if failed is not None else self._select(target, key, tree)

    def member_dot(self, tree: lark.Tree) -> Any:
        target = self.visit(tree.children[0])
        if isinstance(target, Optional):  # a field of an optional: an optional
            return self._select(target, celtypes.StringType(tree.children[1]), tree)
        return super().member_dot(tree)

    def member_index(self, tree: lark.Tree) -> Any:
        target = self.visit(tree.children[0])
        if isinstance(target, Optional):
            key = self.visit(tree.children[1])
            return key if isinstance(key, CELEvalError) else self._select(target, key, tree)
        return super().member_index(tree)

    @staticmethod
    def _select(target: Any, key: Any, tree: lark.Tree) -> Any:
        try:
            return select(target, key)
        except TypeError as exc:
            return CELEvalError(str(exc), TypeError, None, tree=tree)

    def _optional_call(self, name: str, tree: lark.Tree) -> Any:
        """`or`, `orValue` (the argument evaluated only for an empty optional), `optMap`, `optFlatMap`."""
        target = self.visit(tree.children[0])
        if isinstance(target, CELEvalError):
            return target
        if not isinstance(target, Optional):
            return CELEvalError(f"no such overload: {name} on {type(target).__name__}", TypeError, None, tree=tree)
        args = arguments(tree)
        if name in LAZY:
            if target.present:
                return target if name == "or" else target.value
            other = self.visit(args[0])
            if name == "or" and not isinstance(other, Optional | CELEvalError):
                return CELEvalError("no such overload: or with a value that is not optional", TypeError, None)
            return other
        if not target.present:
            return NONE
        result = self._bound(args[1], [str(variable(args[0]))])(target.value)
        if isinstance(result, CELEvalError) or name == "optFlatMap":
            return result
        return of(result)

    def member_dot_arg(self, tree: lark.Tree) -> Any:
        if is_bind(tree):
            return self._bind(tree)
        args, name = arguments(tree), str(tree.children[1])
        if (name in LAZY and len(args) == 1) or (name in MACROS and len(args) == 2):
            return self._optional_call(name, tree)
        if is_two_variable(tree) or (name == "sortBy" and len(args) == 2):
            target = self.visit(tree.children[0])
            if isinstance(target, CELEvalError):
                return target
            try:
                if name == "sortBy":
                    return self._sort_by(target, args, tree)
                return self._two_variable(name, _entries(target), args)
            except (TypeError, ValueError) as exc:
                return CELEvalError(str(exc), type(exc), None, tree=tree)
        return super().member_dot_arg(tree)

    def _bind(self, tree: lark.Tree) -> Any:
        """`cel.bind(name, init, expr)`: expr with name bound to init (cel-go `ext/bindings.go`)."""
        args = arguments(tree)
        init = self.visit(args[1])
        if isinstance(init, CELEvalError):
            return init
        return self._bound(args[2], [str(variable(args[0]))])(init)

    def _sort_by(self, target: Any, args: list[Any], tree: lark.Tree) -> Any:
        """`list.sortBy(e, key)`: the list ordered by each element's key (cel-go `sortByMacro`)."""
        if not isinstance(target, celtypes.ListType):
            raise TypeError(f"no such overload: sortBy on {type(target).__name__}")
        key = self._bound(args[1], [str(variable(args[0]))])
        keys = [key(item) for item in target]
        failed = next((k for k in keys if isinstance(k, CELEvalError)), None)
        return failed if failed is not None else sort_by_keys(target, celtypes.ListType(keys))

    @staticmethod
    def _exists_one(entries: list[tuple[Any, ...]], predicate: Callable[..., Any]) -> Any:
        """Exactly one entry satisfies the predicate; no short circuit, so any error is the result."""
        count = 0
        for entry in entries:
            result = predicate(*entry)
            if isinstance(result, CELEvalError):
                return result
            if not isinstance(result, celtypes.BoolType):
                raise TypeError("no such overload: a predicate that is not a bool")
            count += bool(result)
        return celtypes.BoolType(count == 1)

    def _two_variable(self, name: str, entries: list[tuple[Any, Any]], args: list[Any]) -> Any:
        names = [str(variable(args[0])), str(variable(args[1]))]
        if name in ("all", "exists"):
            return _quantify(name == "all", entries, self._bound(args[2], names))
        if name in ("existsOne", "exists_one"):
            return self._exists_one(entries, self._bound(args[2], names))
        keep = self._bound(args[2], names) if len(args) == 4 else None
        transform = self._bound(args[-1], names)
        out: list[Any] = []
        mapped: dict[Any, Any] = {}
        for key, value in entries:
            if keep is not None:
                wanted = keep(key, value)
                if isinstance(wanted, CELEvalError):
                    return wanted
                if not isinstance(wanted, celtypes.BoolType):
                    raise TypeError("no such overload: a filter that is not a bool")
                if not wanted:
                    continue
            result = transform(key, value)
            if isinstance(result, CELEvalError):
                return result
            if name == "transformList":
                out.append(result)
            elif name == "transformMap":
                mapped[key] = result
            else:
                if not isinstance(result, celtypes.MapType):
                    raise TypeError("no such overload: transformMapEntry needs a map entry")
                for k, v in result.items():
                    if any(_same_key(k, seen) for seen in mapped):
                        raise ValueError(f"insert failed: key {k} already exists")
                    mapped[k] = v
        return celtypes.ListType(out) if name == "transformList" else celtypes.MapType(mapped)


def _same_key(a: Any, b: Any) -> bool:
    return bool(_equals(a, b))


def _quantify(every: bool, entries: list[tuple[Any, Any]], predicate: Callable[..., Any]) -> Any:
    """`all` / `exists` as cel-go folds them: `&&` / `||` over the entries, stopping at the deciding value;
    an error stands only if no entry decides."""
    failed: Any = None
    for key, value in entries:
        result = predicate(key, value)
        if isinstance(result, celtypes.BoolType):
            if bool(result) != every:
                return celtypes.BoolType(not every)
            continue
        failed = failed or (result if isinstance(result, CELEvalError) else CELEvalError(
            "no such overload: a predicate that is not a bool", TypeError, None))
    return failed if failed is not None else celtypes.BoolType(every)


class Runner(InterpretedRunner):
    """celpy's interpreter, evaluating with the macros above."""

    def evaluate(self, context: Any) -> Any:
        return _Evaluator(ast=self.ast, activation=self.new_activation()).evaluate(context)
