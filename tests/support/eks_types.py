"""The installed pulumi-eks SDK's input types, read from its `...Args` classes: each input's wire name,
whether an `Output` may stand there (`pulumi.Input[...]`) or it is plain-only, its nested shape,
enum values and whether it is required."""

from __future__ import annotations

import collections.abc
import enum
import functools
import inspect
import typing
from dataclasses import dataclass
from typing import Any

import pulumi_eks


@dataclass(frozen=True)
class Shape:
    """One input's declared type: its kind, whether an `Output` may stand there, and what it holds."""

    kind: str  # bool, str, number, any, enum, list, map, object, resource, union
    output_ok: bool = False
    name: str = ""  # enum, object and resource types
    item: Shape | None = None  # list items, map values
    values: tuple[str, ...] = ()  # enum values
    args: type | None = None  # object: the SDK's `...Args` class
    options: tuple[Shape, ...] = ()  # union members


@dataclass(frozen=True)
class Prop:
    python: str
    shape: Shape
    required: bool


_SCALARS = {bool: "bool", str: "str", int: "number", float: "number"}


def _is_output(a: Any) -> bool:
    if isinstance(a, typing.ForwardRef):
        return a.__forward_arg__.startswith("Output")
    return typing.get_origin(a) is not None and getattr(typing.get_origin(a), "__name__", "") == "Output"


def shape_of(annotation: Any) -> Shape:
    """The shape of an SDK annotation (`pulumi.Input[...]` is a union with `Output`, flattened by typing)."""
    origin, members = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Union:
        output_ok = any(_is_output(m) for m in members)
        kept = [m for m in members if m is not type(None) and not _is_output(m)
                and typing.get_origin(m) is not collections.abc.Awaitable]
        inner = [shape_of(m) for m in kept]
        one = inner[0] if len(inner) == 1 else Shape("union", options=tuple(inner))
        return Shape(one.kind, output_ok or one.output_ok, one.name, one.item, one.values, one.args, one.options)
    if origin in (collections.abc.Sequence, list):
        return Shape("list", item=shape_of(members[0]))
    if origin in (collections.abc.Mapping, dict):
        return Shape("map", item=shape_of(members[1]))
    if isinstance(annotation, typing.ForwardRef):
        return _named(annotation.__forward_arg__)
    if annotation in _SCALARS:
        return Shape(_SCALARS[annotation])
    return Shape("any", output_ok=True)


def _named(name: str) -> Shape:
    if "." in name:  # e.g. 'pulumi_aws.ec2.SecurityGroup': a resource, sent as a reference
        return Shape("resource", name=name)
    found = getattr(pulumi_eks, name)
    if isinstance(found, type) and issubclass(found, enum.Enum):
        return Shape("enum", name=name, values=tuple(str(m.value) for m in found))
    return Shape("object", name=name, args=found)


def describe(shape: Shape) -> str:
    """A shape as a reader would write it: `Input[...]` where an Output may stand, else plain."""
    inner = {"list": lambda: f"list[{describe(shape.item)}]", "map": lambda: f"map[{describe(shape.item)}]",
             "union": lambda: " | ".join(describe(o) for o in shape.options)}.get(shape.kind, lambda: shape.name
                                                                                  or shape.kind)()
    return f"Input[{inner}]" if shape.output_ok else inner


@functools.cache
def properties(args: type) -> dict[str, Prop]:
    """An SDK `...Args` class's inputs by wire name (the `@pulumi.getter(name=...)` of each)."""
    out: dict[str, Prop] = {}
    for name, param in inspect.signature(args.__init__).parameters.items():
        if name == "__self__" or param.kind is not inspect.Parameter.KEYWORD_ONLY:
            continue
        getter = getattr(args, name).fget
        wire = getattr(getter, "_pulumi_name", name)
        out[wire] = Prop(name, shape_of(param.annotation), param.default is inspect.Parameter.empty)
    return out


def args_class(type_token: str) -> type | None:
    """The SDK's args class of an `eks:` resource type (`eks:index:Cluster` → `ClusterArgs`)."""
    return getattr(pulumi_eks, f"{type_token.rsplit(':', 1)[-1]}Args", None)
