"""How a configuration key is spelled in each place it appears — the one home for key naming.

A model field is `node_pools` in Python; the stack file, the package's wire arguments and every
problem path spell it `nodePools` (`camel_case`, the models' alias generator); Python callers of
`Platform` write `node_pools` (`snake_case`). A Spec field is read from the stack file under
`eks-devices:<camelCase>`, except the AWS provider's own keys (`PROVIDER_KEYS`).
"""

from __future__ import annotations

import re

from eks_devices.core.vocabulary import NAMESPACE

# Spec fields read from the AWS provider's namespace of a stack file, not from `eks-devices:`.
PROVIDER_KEYS = {"region": "aws:region", "aws_profile": "aws:profile"}

_UPPER = re.compile(r"(?<!^)(?=[A-Z])")


def camel_case(name: str) -> str:
    """`node_pools` → `nodePools` (a camelCase name is returned unchanged)."""
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def snake_case(name: str) -> str:
    """`nodePools` → `node_pools` (a snake_case name is returned unchanged)."""
    return _UPPER.sub("_", name).lower()


def stack_key(field: str) -> str:
    """The stack-file key of a Spec field: `aws:region`, `aws:profile`, or `eks-devices:<camelCase>`."""
    return PROVIDER_KEYS.get(field) or f"{NAMESPACE}:{camel_case(field)}"


def property_name(key: str) -> str:
    """The argument a stack-file key is given as to `Platform` (camelCase, as on the wire and in
    problem paths): `eks-devices:nodePools` → `nodePools`, `aws:profile` → `profile`."""
    return key.partition(":")[2]


def count_key(name: str) -> str:
    """The key a count takes where a field accepts a count or a list (`availability_zones: 3 | [names]`)
    and a typed interface needs one key each: `availability_zones` → `availability_zone_count`."""
    return f"{name.removesuffix('s')}_count"
