"""Karpenter's DRA gates read from its chart values, for the rules (from a Plan) and the policy pack
(from a program's Karpenter release) alike (Karpenter v1.15 docs, tasks/dra: `settings.enableDRA`
covers NVIDIA and EFA; `settings.awsFeatureGates.draNVIDIAGPU` / `draEFA` one each)."""

from __future__ import annotations

from typing import Any

from eks_devices.core.values import dig

GATES = {"nvidia": "draNVIDIAGPU", "efa": "draEFA"}  # device family → its single gate under settings.awsFeatureGates
EXCLUSIVE_WITH_ENABLE_DRA = ("awsFeatureGates.draNVIDIAGPU", "awsFeatureGates.draEFA", "ignoreDRARequests")


def dra_gates(settings: dict[str, Any] | None) -> set[str]:
    """The device families whose DRA requests Karpenter acts on, from its `settings` value."""
    settings = settings or {}
    if settings.get("enableDRA"):
        return {"nvidia", "efa"}
    gates = settings.get("awsFeatureGates") or {}
    return {f for f, key in GATES.items() if gates.get(key)}


def gate_clashes(settings: dict[str, Any] | None) -> list[str]:
    """The settings set together with `enableDRA` that the chart refuses to render with it."""
    settings = settings or {}
    if settings.get("enableDRA") is None:
        return []
    return [k for k in EXCLUSIVE_WITH_ENABLE_DRA if dig(settings, k) is not None]
