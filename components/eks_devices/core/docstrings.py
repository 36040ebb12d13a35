"""Docstrings written under assignments (a configuration field's, a vocabulary word's), read from the
source, since Python keeps none for them.

They become the descriptions of the generated stack-file schema and component types. They are read
only when those are generated, never when the configuration models are imported: pydantic's
`use_attribute_docstrings` parses each model's source at class creation, which cost every command
30–40 ms (docs/performance.md).
"""

from __future__ import annotations

import ast
import inspect
import sys
from functools import cache
from itertools import pairwise
from types import ModuleType


@cache
def _tree(module: str) -> ast.Module:
    return ast.parse(inspect.getsource(sys.modules[module]))


def _following(body: list[ast.stmt]) -> dict[str, str]:
    """Name → docstring for each assignment to one name that a string literal follows."""
    docs: dict[str, str] = {}
    for stmt, after in pairwise(body):
        target = (stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                  else stmt.target if isinstance(stmt, ast.AnnAssign) else None)
        if (isinstance(target, ast.Name) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)):
            docs[target.id] = inspect.cleandoc(after.value.value)
    return docs


def module_docs(module: ModuleType) -> dict[str, str]:
    """Docstrings of a module's top-level names (`Mode = Literal[...]` followed by a string)."""
    return _following(_tree(module.__name__).body)


def class_docs(cls: type) -> dict[str, str]:
    """Docstrings of the attributes a class's own body defines; none for a class that no `class`
    statement at its module's top level made (`create_model`, nested classes)."""
    module = sys.modules.get(cls.__module__)
    if module is None or getattr(module, cls.__name__, None) is not cls:
        return {}
    for stmt in _tree(cls.__module__).body:
        if isinstance(stmt, ast.ClassDef) and stmt.name == cls.__name__:
            return _following(stmt.body)
    return {}


def attribute_doc(cls: type, name: str) -> str | None:
    """The docstring of attribute `name` where the class or its nearest base declares it."""
    for owner in cls.__mro__:
        if name in inspect.get_annotations(owner):
            return class_docs(owner).get(name)
    return None
