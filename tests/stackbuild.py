"""Small builders for stack configurations in tests: a valid stack, changed only where a test says."""

from __future__ import annotations

import copy
from typing import Any

from eks_devices.core import planner as planning
from eks_devices.core.spec.stack import Spec, parse

VERSIONS = {"auto-mode": "1.36", "karpenter": "1.36", "managed-node-groups": "1.36"}


def config(mode: str = "karpenter", version: str | None = None, pools: dict[str, Any] | None = None,
           **sections: Any) -> dict[str, Any]:
    """A stack `config:` mapping; `sections` are extra `eks-devices:<key>` values (cluster keys merge)."""
    cluster = {"name": "test", "version": version or VERSIONS[mode], "mode": mode}
    cluster.update(sections.pop("cluster", {}))
    out: dict[str, Any] = {"aws:region": "us-west-2", "eks-devices:cluster": cluster,
                           "eks-devices:nodePools": copy.deepcopy(pools or {})}
    for key, value in sections.items():
        out[f"eks-devices:{key}"] = value
    return out


def spec(mode: str = "karpenter", version: str | None = None, pools: dict[str, Any] | None = None,
         **sections: Any) -> Spec:
    return parse(config(mode, version, pools, **sections))


def plan(mode: str = "karpenter", version: str | None = None, pools: dict[str, Any] | None = None,
         **sections: Any) -> planning.Plan:
    return planning.build(spec(mode, version, pools, **sections))


def slugs(p: planning.Plan, severity: str | None = None) -> set[str]:
    return {f.slug for f in p.findings if severity is None or f.severity == severity}


def findings(p: planning.Plan, slug: str) -> list[Any]:
    return [f for f in p.findings if f.slug == slug]
