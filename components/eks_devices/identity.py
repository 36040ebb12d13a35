"""Stable Pulumi identities: aliases that carry a resource's state over to a new logical name.

A resource's URN is its parent's type chain plus its logical name. When a name changes, Pulumi
treats it as a new resource (create, then delete the old one) unless the resource lists its old
name as an alias, which makes the change a rename in the state and nothing in AWS.

`renamed(old, new)` gives the options for a component renamed from `old` to `new`: an alias for
the component and, through a transformation its descendants inherit, for every descendant whose
name starts with `new` the same name starting with `old` instead. That is the convention Pulumi
follows itself for the children of an aliased parent (pulumi/pulumi v3.272.0,
sdk/python/lib/pulumi/runtime/resource.py `inherited_child_alias`; the engine applies it for alias
specs, so it also reaches the children a remote component such as pulumi-eks's Cluster registers
in its own process); stating it here makes every alias visible to the offline engine and the tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi


def moved(name: str, old: str, new: str) -> str | None:
    """`name` as it was before its prefix `new` was `old` (None when `name` does not start with `new`)."""
    return old + name[len(new):] if name.startswith(new) else None


def _alias_names(aliases: Sequence[object] | None) -> list[str]:
    return [a.name for a in aliases or () if isinstance(a, pulumi.Alias) and isinstance(a.name, str)]


def renamed(old: str, new: str) -> pulumi.ResourceOptions:
    """Options for a component now named `new` that a deployed stack knows as `old`."""
    if old == new:
        return pulumi.ResourceOptions()

    def alias_old_names(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult:
        # the resource's own old name, and the old form of any alias it states itself (a renamed pool)
        known = _alias_names(args.opts.aliases)
        names = [n for n in (moved(args.name, old, new), *(moved(a, old, new) for a in known)) if n]
        extra = [pulumi.Alias(name=n) for n in dict.fromkeys(names) if n != args.name and n not in known]
        if not extra:
            return pulumi.ResourceTransformationResult(args.props, args.opts)
        return pulumi.ResourceTransformationResult(
            args.props, pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(aliases=extra)))

    return pulumi.ResourceOptions(transformations=[alias_old_names])


def aliases(*old_names: str | None) -> list[pulumi.Input[str | pulumi.Alias]] | None:
    """Aliases from previous logical names under the same parent (None when there are none)."""
    found: list[pulumi.Input[str | pulumi.Alias]] = [pulumi.Alias(name=n) for n in old_names if n]
    return found or None
