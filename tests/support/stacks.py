"""Stack builders for tests: one base stack per mode, changed only where a test says (deep-merged
overrides), the shipped stacks (optionally with some pools changed), and their specs and plans."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import yaml

from eks_devices.core import planner as planning
from eks_devices.core.config import stack_file
from eks_devices.core.config.stack import Spec, parse
from eks_devices.core.model import Finding
from eks_devices.core.values import merge  # mappings merge, anything else replaces

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
SHIPPED = ("dev", "staging", "prod")
REGION = "us-west-2"
VERSIONS = {"auto-mode": "1.36", "karpenter": "1.36", "managed-node-groups": "1.36"}


def _recorded(cfg: dict[str, Any]) -> dict[str, Any]:
    """`cfg`, also written to `$EKS_DEVICES_RECORD_STACKS/<hash>.json` when that is set: the stacks the suite
    builds, for `scripts/behaviour.py` to compare the toolkit's behaviour on them across commits."""
    folder = os.environ.get("EKS_DEVICES_RECORD_STACKS")
    if folder:
        text = json.dumps(cfg, sort_keys=True, default=str)
        Path(folder, hashlib.sha256(text.encode()).hexdigest()[:16] + ".json").write_text(text)
    return cfg


def example_config(example: str) -> dict[str, Any]:
    """The `config:` of an example program's Pulumi.yaml (such as its `aws:region`), as `pulumi up` gives it."""
    return dict(yaml.safe_load((ROOT / "examples" / example / "Pulumi.yaml").read_text()).get("config") or {})


def base(mode: str = "karpenter", version: str | None = None, *, name: str = "test",
         region: str = REGION) -> dict[str, Any]:
    """The smallest valid stack `config:` of a mode: a cluster and no node pools."""
    return {"aws:region": region,
            "eks-devices:cluster": {"name": name, "version": version or VERSIONS[mode], "mode": mode},
            "eks-devices:nodePools": {}}


def config(mode: str = "karpenter", version: str | None = None, pools: dict[str, Any] | None = None, *,
           name: str = "test", region: str = REGION, overrides: dict[str, Any] | None = None,
           **sections: Any) -> dict[str, Any]:
    """A stack `config:` mapping: the mode's base stack with `pools`; `sections` are extra
    `eks-devices:<key>` values (`cluster=` merges into the cluster); `overrides` (full config keys)
    are deep-merged last."""
    out = base(mode, version, name=name, region=region)
    out["eks-devices:nodePools"] = copy.deepcopy(pools or {})
    out = merge(out, {f"eks-devices:{key}": value for key, value in sections.items()})
    return _recorded(merge(out, overrides or {}))


def shipped(stack: str, pools: dict[str, dict[str, Any]] | None = None, *, claims: bool = True,
            overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """A shipped stack's `config:` (a copy); `pools` replaces or adds settings of some pools (each
    pool's keys are updated, not deep-merged), `claims=False` drops the shipped claims, and
    `overrides` are deep-merged last."""
    out = copy.deepcopy(stack_file.read_config(STACKS / f"Pulumi.{stack}.yaml"))
    for pool, changes in (pools or {}).items():
        out["eks-devices:nodePools"].setdefault(pool, {}).update(copy.deepcopy(changes))
    if not claims:
        out.pop("eks-devices:claims", None)
    return _recorded(merge(out, overrides or {}))


def build(cfg: dict[str, Any]) -> planning.Plan:
    """The plan of a stack `config:` mapping."""
    return planning.build(parse(cfg))


def spec(mode: str = "karpenter", version: str | None = None, pools: dict[str, Any] | None = None,
         **sections: Any) -> Spec:
    return parse(config(mode, version, pools, **sections))


def plan(mode: str = "karpenter", version: str | None = None, pools: dict[str, Any] | None = None,
         **sections: Any) -> planning.Plan:
    return build(config(mode, version, pools, **sections))


def shipped_plan(stack: str) -> planning.Plan:
    return planning.build(stack_file.load(stack, STACKS))


def slugs(p: planning.Plan, severity: str | None = None) -> set[str]:
    return {f.slug for f in p.findings if severity is None or f.severity == severity}


def findings(p: planning.Plan, slug: str) -> list[Finding]:
    return [f for f in p.findings if f.slug == slug]
