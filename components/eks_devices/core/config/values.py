"""The values a stack configuration may hold: what JSON (and so Pulumi's config and the engine's
protobuf) can carry, and not too many of them. Checked before anything reads the configuration, so
a date, a NaN, a `!!binary` or `!!set`, a non-text mapping key, a self-containing alias or an
alias bomb is a configuration problem with its path instead of a crash later."""

from __future__ import annotations

import math
from typing import Any

from eks_devices.core.config.errors import ConfigProblem, article, show

MAX_VALUES = 100_000  # scalars, lists and mappings a stack configuration expands to (stacks hold a few hundred)
# how the problems of a value that never ends or is too large to walk begin: nothing more is read of it
ENDLESS = ("a value that contains itself", f"more than {MAX_VALUES} values")


def value_problems(value: Any, root: str) -> list[ConfigProblem]:
    """Every value under `root` that JSON cannot carry; stops at MAX_VALUES values or the first cycle."""
    problems: list[ConfigProblem] = []
    budget = MAX_VALUES
    stack: list[tuple[Any, str, tuple[int, ...]]] = [(value, root, ())]
    while stack:
        node, path, ancestors = stack.pop()
        budget -= 1
        if budget < 0:
            return [*problems, ConfigProblem(root, f"more than {MAX_VALUES} values (YAML aliases expand in place)",
                                             "a configuration of ordinary size: repeat values without nesting "
                                             "aliases of aliases")]
        if isinstance(node, dict | list):
            if id(node) in ancestors:
                problems.append(ConfigProblem(path, "a value that contains itself (a YAML alias cycle)",
                                              "values that end"))
                continue
            inner = (*ancestors, id(node))
            if isinstance(node, dict):
                for key, child in node.items():
                    if not isinstance(key, str):
                        problems.append(ConfigProblem(f"{path}.{key}", f"{article(type(key).__name__)} mapping key",
                                                      "text keys (quote it)"))
                        continue
                    stack.append((child, f"{path}.{key}", inner))
            else:
                stack.extend((child, f"{path}.{i}", inner) for i, child in enumerate(node))
        elif isinstance(node, float) and not math.isfinite(node):
            problems.append(ConfigProblem(path, show(node), "a finite number (JSON has no NaN or infinity)"))
        elif not (node is None or isinstance(node, str | bool | int | float)):
            problems.append(ConfigProblem(path, f"{article(type(node).__name__)} ({show(node)})",
                                          "text, a number, true/false, null, a list or a mapping "
                                          "(quote dates and timestamps)"))
    return problems
