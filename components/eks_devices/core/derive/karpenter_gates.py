"""Karpenter's DRA gates read from its chart values, for the rules (from a Plan) and the policy pack
(from a program's Karpenter release) alike (Karpenter v1.15 docs, tasks/dra: `settings.enableDRA`
covers NVIDIA and EFA; `settings.awsFeatureGates.draNVIDIAGPU` / `draEFA` one each)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from eks_devices.core.families import DESCRIPTORS
from eks_devices.core.values import dig

# device family → its single gate under settings.awsFeatureGates (its descriptor's); enableDRA covers them all
GATES = {d.name: d.karpenter_gate for d in DESCRIPTORS if d.karpenter_gate}
EXCLUSIVE_WITH_ENABLE_DRA = (*(f"awsFeatureGates.{gate}" for gate in GATES.values()), "ignoreDRARequests")


def dra_gates(settings: dict[str, Any] | None) -> set[str]:
    """The device families whose DRA requests Karpenter acts on, from its `settings` value."""
    settings = settings or {}
    if settings.get("enableDRA"):
        return set(GATES)
    gates = settings.get("awsFeatureGates") or {}
    return {f for f, key in GATES.items() if gates.get(key)}


def karpenter_dra_settings(dra: Collection[str]) -> dict[str, Any]:
    """Karpenter's DRA settings from the device families its dynamic pools run DRA drivers for:
    `enableDRA` when every gated family, else each one's gate, else nothing."""
    wanted = [f for f in GATES if f in dra]
    if len(wanted) == len(GATES):
        return {"enableDRA": True}
    return {"awsFeatureGates": {GATES[f]: True for f in wanted}} if wanted else {}


def gate_clashes(settings: dict[str, Any] | None) -> list[str]:
    """The settings set together with `enableDRA` that the chart refuses to render with it."""
    settings = settings or {}
    if settings.get("enableDRA") is None:
        return []
    return [k for k in EXCLUSIVE_WITH_ENABLE_DRA if dig(settings, k) is not None]
