"""Helm-values helpers: dotted-path lookup and the deep merge Helm applies to user overrides."""

from __future__ import annotations

import copy
from typing import Any


def dig(values: dict[str, Any], path: str, default: Any = None) -> Any:
    """`dig(v, "a.b")` is `v["a"]["b"]`, or `default` when any step is missing or not a mapping."""
    node: Any = values
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge `override` onto a copy of `base`: mappings merge, anything else replaces."""
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out
