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


def nested(path: str, value: Any) -> dict[str, Any]:
    """`nested("a.b", v)` is `{"a": {"b": v}}`: the mapping `dig` reads `value` from at `path`."""
    head, _, rest = path.partition(".")
    return {head: nested(rest, value) if rest else value}


def chart_value(values: dict[str, Any], path: str, default: Any = None) -> Any:
    """A value as a chart's template sees it: the chart's `default` while unset, None once a null on
    the way deletes it (Helm drops null keys, defaults included)."""
    node: Any = values
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
        if node is None:
            return None
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
