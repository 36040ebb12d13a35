"""Stable Pulumi identities: aliases that carry a resource's state over to a new logical name.

A resource's URN is its parent's type chain plus its logical name. When a name changes, Pulumi
treats it as a new resource (create, then delete the old one) unless the resource lists its old
name as an alias, which makes the change a rename in the state and nothing in AWS.

`renamed(old, new)` gives the options for a component renamed from `old` to `new`: an alias for
the component and, through a transformation its descendants inherit, for every descendant whose
name starts with `new` the same name starting with `old` instead. The engine would infer most of
these from the component's own alias (pulumi/pulumi v3.276.0, pkg/resource/deploy/step_generator.go
`generateAliases`, `inheritedChildAlias`), and it does so for the children a remote component such
as pulumi-eks's Cluster registers in its own process; but it infers them only from a parent it
found by an alias in the same update. After an update that stopped once the components had moved
in the state and before their resources had, only the aliases each resource states finds it; and
stated, they are visible to the offline engine and the tests.

The aliases are given as whole URNs where the transformation knows every parent's type (it has
seen the component's parent: the stack), and as `Alias(name=...)` otherwise (under a team's own
component): the engine reads both alike, and a URN costs the SDK none of the Outputs it makes for
an `Alias` (pulumi 3.272.0 `resource.py` `Resource.__init__`, `runtime/resource.py`
`collapse_alias_to_urn`: ~30 event-loop callbacks each, whose result the engine never reads, as it
takes the alias spec).
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi

STACK_TYPE = "pulumi:pulumi:Stack"  # the root resource: no part of its children's URNs
PROVIDER_TYPE_PREFIX = "pulumi:providers:"  # a provider resource's type: this, then its package


def moved(name: str, old: str, new: str) -> str | None:
    """`name` as it was before its prefix `new` was `old` (None when `name` does not start with `new`)."""
    return old + name[len(new):] if name.startswith(new) else None


def _alias_names(aliases: Sequence[object] | None) -> list[str]:
    return [a.name for a in aliases or () if isinstance(a, pulumi.Alias) and isinstance(a.name, str)]


def renamed(old: str, new: str) -> pulumi.ResourceOptions:
    """Options for a component now named `new` that a deployed stack knows as `old`."""
    if old == new:
        return pulumi.ResourceOptions()
    types: dict[pulumi.Resource, str] = {}  # each resource reached so far: its qualified type

    def alias_old_names(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult:
        qualified = _qualified_type(args, types)
        if qualified is not None:
            types[args.resource] = qualified
        # the resource's own old name, and the old form of any alias it states itself (a renamed pool)
        known = _alias_names(args.opts.aliases)
        names = [n for n in (moved(args.name, old, new), *(moved(a, old, new) for a in known)) if n]
        was = [n for n in dict.fromkeys(names) if n != args.name and n not in known]
        if not was:
            return pulumi.ResourceTransformationResult(args.props, args.opts)
        extra = [pulumi.Alias(name=n) if qualified is None else urn(qualified, n) for n in was]
        return pulumi.ResourceTransformationResult(
            args.props, pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(aliases=extra)))

    return pulumi.ResourceOptions(transformations=[alias_old_names])


def _qualified_type(args: pulumi.ResourceTransformationArgs, types: dict[pulumi.Resource, str]) -> str | None:
    """The type part of the resource's URN: its parents' types and its own, `$`-joined, as the engine
    spells it (the stack itself is left out); None under a parent the transformation never saw."""
    parent = args.opts.parent
    if parent is None or parent.pulumi_resource_type == STACK_TYPE:
        return args.type_
    return types[parent] + "$" + args.type_ if parent in types else None


def urn(qualified_type: str, name: str, stack: str | None = None, project: str | None = None) -> str:
    """The URN of `name` with this qualified type (its parents' types and its own, `$`-joined, the
    stack's left out) in a stack of a project (this one unless named), as the engine spells URNs."""
    return f"urn:pulumi:{stack or pulumi.get_stack()}::{project or pulumi.get_project()}::{qualified_type}::{name}"


def aliases(*old_names: str | None) -> list[pulumi.Input[str | pulumi.Alias]] | None:
    """Aliases from previous logical names under the same parent (None when there are none)."""
    found: list[pulumi.Input[str | pulumi.Alias]] = [pulumi.Alias(name=n) for n in old_names if n]
    return found or None
