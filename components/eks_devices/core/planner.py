"""One entry point of the core: `build(spec)` derives the Plan, fits the declared claims on its
pools, then runs every rule on the result. Everything above the core (components, CLI, preview,
render, preflight) starts from the Plan this returns."""

from __future__ import annotations

from dataclasses import replace

from eks_devices.core.config.stack import Spec
from eks_devices.core.derive.claim_fit import plan_claims
from eks_devices.core.derive.pools import derive
from eks_devices.core.model import Plan
from eks_devices.core.rules import evaluate

__all__ = ["Plan", "build"]


def build(spec: Spec) -> Plan:
    """Derive → claims → rules; the findings travel with the plan."""
    plan = derive(spec)
    plan = replace(plan, claims=plan_claims(spec, plan.pools, plan.device_classes))
    return replace(plan, findings=tuple(evaluate(plan)))
