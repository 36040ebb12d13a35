"""Bottlerocket settings as the TOML user data Bottlerocket reads (pure: the spec checks a pool's
`bottlerocketSettings` with it at parse time, node classes and launch templates write it)."""

from __future__ import annotations

import json
import re
from typing import Any

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


def _text_ok(text: str, path: str) -> None:
    """TOML text is Unicode scalar values: a lone surrogate (a YAML "\\ud800" escape) has no TOML form."""
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        raise ValueError(f"Bottlerocket setting {path}: {text!r} holds a lone UTF-16 surrogate, which TOML cannot "
                         "carry")


def _toml_key(key: str) -> str:
    _text_ok(key, "key")
    return key if _BARE_KEY.fullmatch(key) else json.dumps(key)


def _toml_value(value: Any, path: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:
        raise ValueError(f"Bottlerocket setting {path}: {value} is outside TOML's 64-bit integers")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        _text_ok(value, path)
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v, f"{path}[]") for v in value) + "]"
    raise ValueError(f"Bottlerocket setting {path}: {type(value).__name__} values have no TOML form here")


def _toml_table(path: tuple[str, ...], table: dict[str, Any]) -> list[str]:
    for key in table:
        if not isinstance(key, str):
            raise ValueError(f"Bottlerocket setting {'.'.join(path)}: key {key!r} is not text")
    scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
    lines: list[str] = []
    if scalars:
        lines.append("[" + ".".join(_toml_key(p) for p in path) + "]")
        dotted = ".".join(path)
        lines += [f"{_toml_key(k)} = {_toml_value(scalars[k], f'{dotted}.{k}')}" for k in sorted(scalars)]
    for key in sorted(k for k, v in table.items() if isinstance(v, dict)):
        lines += _toml_table((*path, key), table[key])
    return lines


def bottlerocket_toml(settings: dict[str, Any]) -> str:
    """Bottlerocket settings as the TOML user data it reads (`[settings.…]` tables); Karpenter and
    EKS merge it with the settings they generate."""
    return "\n".join(_toml_table(("settings",), settings)) + "\n"
