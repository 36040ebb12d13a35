"""How the Kubernetes API server stores what it is sent: the lists it writes as absent when empty.

The server decodes a built-in kind into its Go type and writes it back from there; a list field tagged
`omitempty` that was sent empty is then absent from the stored object (k8s.io/api v0.36.3
`resource/v1/types.go`: `DeviceClaim.Constraints` and `.Config`, `ExactDeviceRequest.Selectors`,
`DeviceSubRequest.Selectors`, `DeviceConstraint.Requests`, `DeviceClaimConfiguration.Requests`,
`DeviceClassSpec.Selectors` and `.Config`). pulumi-kubernetes diffs a program's inputs against the live
object pruned to the previous inputs' shape (pulumi/pulumi-kubernetes provider/pkg/provider/provider.go
`Diff`, `pruneLiveState`), so an empty list a program sends there is a change on every `pulumi up` —
for a claim or a claim template, whose spec is immutable, a replacement. Custom resources are stored as
sent (the table has none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from eks_devices.core.knowledge.device_classes import RESOURCE_API_V1

Path = tuple[str, ...]  # keys from an object's root; "*" is every item of a list

# under a claim's `devices` (ResourceClaim `spec.devices`, ResourceClaimTemplate `spec.spec.devices`)
DEVICE_CLAIM: tuple[Path, ...] = (
    ("constraints",), ("config",),
    ("requests", "*", "exactly", "selectors"), ("requests", "*", "firstAvailable", "*", "selectors"),
    ("constraints", "*", "requests"), ("config", "*", "requests"))

OMITTED_WHEN_EMPTY: dict[tuple[str, str], tuple[Path, ...]] = {
    (RESOURCE_API_V1, "ResourceClaim"): tuple(("spec", "devices", *p) for p in DEVICE_CLAIM),
    (RESOURCE_API_V1, "ResourceClaimTemplate"): tuple(("spec", "spec", "devices", *p) for p in DEVICE_CLAIM),
    (RESOURCE_API_V1, "DeviceClass"): (("spec", "selectors"), ("spec", "config")),
}


def without_empty(value: Any, paths: Sequence[Path]) -> Any:
    """`value` (not changed) without an empty list at any of `paths`; everything else as it is."""
    if not paths:
        return value
    if isinstance(value, list):
        rest = [p[1:] for p in paths if p and p[0] == "*"]
        return [without_empty(item, rest) for item in value] if rest else value
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        ends_here = any(p == (key,) for p in paths)
        if ends_here and item == []:
            continue
        out[key] = without_empty(item, [p[1:] for p in paths if len(p) > 1 and p[0] == key])
    return out


def as_stored(obj: Mapping[str, Any]) -> Any:
    """A Kubernetes object (or a Pulumi resource's inputs for one) as the API server stores it, as far as
    `OMITTED_WHEN_EMPTY` knows its kind; any other object as it is."""
    paths = OMITTED_WHEN_EMPTY.get((str(obj.get("apiVersion", "")), str(obj.get("kind", ""))), ())
    return without_empty(obj, paths)
