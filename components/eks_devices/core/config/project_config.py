"""Pulumi.yaml's `config:` section merged into a stack's configuration, as the Pulumi CLI merges them
before the program runs (pulumi/pulumi v3.276.0 pkg/workspace/config.go `mergeConfig`, and
sdk/go/common/workspace/project.go `RewriteShorthandConfigValues` and `Project.Validate`).

A key the stack file leaves out takes the project's `value` or `default`; a key of the project's own
namespace with neither must be set by every stack. A bare key is the project's own (`team` is
`<project>:team`); a shorthand entry (text, integer, boolean or list) is a `default` for a key of the
project's namespace and a `value` for any other. A key with a declared `type` takes only values of that
type (`ValidateConfigValue`: a stack file's scalars as the text they read as), and a typed one declared
`secret` only an encrypted value.
"""

from __future__ import annotations

import json
import re
from typing import Any

from eks_devices.core.config.errors import ConfigError, ConfigProblem, show

_ENTRY = ("a value (text, integer, boolean or list), or a mapping with `value` or `default` "
          "(and optionally `type`, `description`, `secret`, `items`)")


def merge(config: dict[str, Any], declared: Any, project: str, stack: str, source: str) -> dict[str, Any]:
    """`config` (a stack file's) with the entries of `declared` (Pulumi.yaml's `config:`) it leaves
    out; ConfigError with every problem of `declared`, then every key the stack must set and does not."""
    if not isinstance(declared, dict):
        raise ConfigError([ConfigProblem("Pulumi.yaml config", show(declared),
                                         "a mapping of configuration keys (or the name of the stack files' folder)")],
                          source)
    problems: list[ConfigProblem] = []
    missing: list[str] = []
    merged = dict(config)
    for key in sorted(declared, key=str):
        entry, own = declared[key], isinstance(key, str) and (":" not in key or key.startswith(f"{project}:"))
        where = f"Pulumi.yaml config.{key}"
        if not isinstance(key, str) or key.count(":") > 1 or key.startswith(":") or key.endswith(":"):
            problems.append(ConfigProblem(where, show(key), "a key: `name` (this project's) or `namespace:name`"))
            continue
        if isinstance(entry, str | int | list):  # not a float: Pulumi reads none as shorthand
            entry = {"default" if own else "value": entry}
        if not isinstance(entry, dict):
            problems.append(ConfigProblem(where, show(entry), _ENTRY))
            continue
        default, value = entry.get("default"), entry.get("value")
        if default is not None and value is not None:
            problems.append(ConfigProblem(where, "both `default` and `value`", "one of them"))
        elif not own and (default is not None or "type" in entry or value is None):
            problems.append(ConfigProblem(
                where, "a `type` or a `default`" if default is not None or "type" in entry else "no `value`",
                f"a `value` only: the key is not in the namespace of project {project}"))
        full = key if ":" in key else f"{project}:{key}"
        type_name = entry.get("type")
        if type_name is not None and default is not None and not fits(type_name, entry.get("items"), default):
            problems.append(ConfigProblem(where, f"default {show(default)}",
                                          f"a default of type '{full_type(type_name, entry.get('items'))}'"))
        if full in config:
            problems += _stack_value_problems(full, config[full], entry, stack)
            continue
        if default is not None or value is not None:
            merged[full] = default if default is not None else value
        elif own:
            missing.append(full)
    if problems:
        raise ConfigError(problems, source)
    if missing:
        raise ConfigError([ConfigProblem(key, f"no value in stack {stack} and no default in Pulumi.yaml",
                                         f"a value in Pulumi.{stack}.yaml (`pulumi config set {key.split(':', 1)[1]} "
                                         "<value>`), or a default in Pulumi.yaml: Pulumi runs no program without it")
                           for key in sorted(missing)], source)
    return merged


def full_type(type_name: Any, items: Any) -> str:
    """A declared type as Pulumi names it (`array<integer>`)."""
    if isinstance(items, dict):
        return f"array<{full_type(items.get('type'), items.get('items'))}>"
    return str(type_name)


def fits(type_name: Any, items: Any, value: Any) -> bool:
    """Whether `value` is of the declared type, as Pulumi decides (pulumi/pulumi v3.276.0
    sdk/go/common/workspace/project.go `ValidateConfigValue`): an integer may be a whole float or
    text that reads as one, a boolean the text `true` or `false`; an array needs its `items` type."""
    if type_name == "string":
        return isinstance(value, str)
    if type_name == "integer":
        if isinstance(value, bool):
            return False
        if isinstance(value, float):
            return value.is_integer()
        return isinstance(value, int) or (isinstance(value, str) and re.fullmatch(r"[+-]?[0-9]+", value) is not None)
    if type_name == "boolean":
        return isinstance(value, bool) or value in ("true", "false")
    if type_name == "object":
        return isinstance(value, dict)
    if not isinstance(value, list) or not isinstance(items, dict):
        return False
    return all(fits(items.get("type"), items.get("items"), item) for item in value)


def _stack_value_problems(key: str, value: Any, entry: dict[str, Any], stack: str) -> list[ConfigProblem]:
    """What `pulumi up` refuses in a stack's value for a key Pulumi.yaml declares a `type` of (it checks
    no other): plain text where the key is also declared secret, or a value not of the type (an
    encrypted one cannot be read offline)."""
    type_name = entry.get("type")
    if type_name is None:
        return []
    secure = isinstance(value, dict) and set(value) == {"secure"}
    if entry.get("secret") is True and not secure:
        return [ConfigProblem(key, "a value in plain text", f"an encrypted value (`pulumi config set --secret "
                                                            f"{key.split(':', 1)[1]} <value>` in stack {stack}): "
                                                            "Pulumi.yaml declares it secret")]
    if secure:
        return []
    read = value if isinstance(value, dict | list | str) else json.dumps(value)  # a scalar as the text Pulumi reads
    if fits(type_name, entry.get("items"), read):
        return []
    return [ConfigProblem(key, show(value), f"a value of type '{full_type(type_name, entry.get('items'))}', as "
                                            "Pulumi.yaml declares it")]
