"""Managed node group rules."""

from __future__ import annotations

from collections.abc import Iterator

from ..plan import Plan
from .registry import Finding, at, rule

RESERVED_LABEL_DOMAINS = ("kubernetes.io", "k8s.io", "eks.amazonaws.com")


@rule("managed-node-group-reserved-labels", "managed node groups reject reserved label prefixes")
def _mng_reserved_labels(plan: Plan) -> Iterator[Finding]:
    if plan.mode != "managed-node-groups":
        return
    for pool in plan.pools.values():
        for key in sorted(pool.labels):
            domain = key.split("/", 1)[0] if "/" in key else ""
            if any(domain == d or domain.endswith("." + d) for d in RESERVED_LABEL_DOMAINS):
                yield Finding("managed-node-group-reserved-labels", "error", at(pool, f"labels.{key}"),
                              f"EKS rejects node group label {key}: Label cannot contain reserved prefixes",
                              "use a label under your own prefix; device managers are in eks-devices.io/ labels")
