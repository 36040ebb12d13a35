"""Every path by which `auto` resolves to a device manager, and the reason it records."""

from __future__ import annotations

from typing import Any

import pytest

from support import stacks


def resolution(mode: str, pool: dict[str, Any], family: str, version: str | None = None,
               karpenter: str = "1.15.0") -> tuple[str, str]:
    p = stacks.plan(mode, version, {"p": pool}, cluster={"karpenter": {"version": karpenter}})
    res = p.pools["p"].managers[family]
    return res.manager, res.reason


STATIC = {"provisioning": "static", "replicas": 1}


@pytest.mark.parametrize(("mode", "pool", "family", "version", "karpenter", "manager", "reason"), [
    # family not on the instance types
    ("karpenter", {"instanceTypes": ["g6.xlarge"]}, "efa", None, "1.15.0", "none", "no EFA devices"),
    ("karpenter", {"instanceTypes": ["g6.xlarge"]}, "neuron", None, "1.15.0", "none", "no Neuron devices"),
    ("karpenter", {"instanceTypes": ["inf2.xlarge"]}, "nvidia", None, "1.15.0", "none", "no NVIDIA GPU devices"),
    # explicit choice
    ("karpenter", {"instanceTypes": ["g6.xlarge"], "devices": {"nvidia": "device-plugin"}}, "nvidia", None,
     "1.15.0", "device-plugin", "set in the stack configuration"),
    # below DRA GA
    ("managed-node-groups", {"instanceTypes": ["g6.xlarge"], **STATIC}, "nvidia", "1.33", "1.15.0",
     "device-plugin", "below 1.34"),
    # Auto Mode
    ("auto-mode", {"instanceTypes": ["g6.xlarge"]}, "nvidia", "1.36", "1.15.0", "dra", "DRA is supported"),
    ("auto-mode", {"instanceTypes": ["g6.xlarge"]}, "nvidia", "1.35", "1.15.0", "device-plugin", "needs Kubernetes 1.36"),
    ("auto-mode", {"instanceTypes": ["g7e.2xlarge"]}, "nvidia", "1.36", "1.15.0", "device-plugin", "g7e.2xlarge"),
    ("auto-mode", {"instanceTypes": ["trn1.32xlarge"]}, "neuron", "1.36", "1.15.0", "device-plugin",
     "device plugin only"),
    ("auto-mode", {"instanceTypes": ["g6.xlarge"], "gpuSharing": {"strategy": "time-slicing", "replicas": 2}},
     "nvidia", "1.36", "1.15.0", "device-plugin", "no time-slicing through DRA"),
    ("auto-mode", {"instanceTypes": ["p4d.24xlarge"], "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}},
     "nvidia", "1.36", "1.15.0", "device-plugin", "no mig through DRA"),
    ("auto-mode", {"instanceTypes": ["p5.48xlarge"]}, "efa", "1.36", "1.15.0", "dra", "DRA is supported"),
    # self-managed: aws-dranet gated on 1.35
    ("managed-node-groups", {"instanceTypes": ["p5.48xlarge"], **STATIC}, "efa", "1.34", "1.15.0",
     "device-plugin", "aws-dranet needs Kubernetes 1.35"),
    ("managed-node-groups", {"instanceTypes": ["p5.48xlarge"], **STATIC}, "nvidia", "1.34", "1.15.0", "dra",
     "DRA is supported"),
    ("managed-node-groups", {"instanceTypes": ["trn1.32xlarge"], **STATIC}, "neuron", "1.34", "1.15.0", "dra",
     "DRA is supported"),
    # Karpenter dynamic
    ("karpenter", {"instanceTypes": ["p5.48xlarge"]}, "nvidia", "1.36", "1.14.1", "device-plugin", "needs 1.15"),
    ("karpenter", {"instanceTypes": ["trn2.48xlarge"]}, "neuron", "1.36", "1.15.0", "device-plugin",
     "no DRA metadata for trn2.48xlarge"),
    ("karpenter", {"instanceTypes": ["p4d.24xlarge"], "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}},
     "nvidia", "1.36", "1.15.0", "device-plugin", "MIG"),
    ("karpenter", {"instanceTypes": ["g6.xlarge"], "gpuSharing": {"strategy": "time-slicing", "replicas": 2}},
     "nvidia", "1.35", "1.15.0", "device-plugin", "consumable capacity needs Kubernetes 1.36"),
    ("karpenter", {"instanceTypes": ["g6.xlarge"], "gpuSharing": {"strategy": "time-slicing", "replicas": 2}},
     "nvidia", "1.36", "1.15.0", "dra", "DRA is supported"),
    ("karpenter", {"instanceTypes": ["p5.48xlarge"]}, "efa", "1.36", "1.15.0", "dra", "DRA is supported"),
    # Karpenter static: no metadata or Karpenter version needed
    ("karpenter", {"instanceTypes": ["trn2.48xlarge"], **STATIC}, "neuron", "1.36", "1.15.0", "dra", "DRA is supported"),
    ("karpenter", {"instanceTypes": ["p5.48xlarge"], **STATIC}, "nvidia", "1.36", "1.14.1", "dra", "DRA is supported"),
    ("karpenter", {"instanceTypes": ["p4d.24xlarge"], "gpuSharing": {"strategy": "mig", "profile": "1g.5gb"}, **STATIC},
     "nvidia", "1.36", "1.15.0", "dra", "DRA is supported"),
])
def test_auto_resolution(mode: str, pool: dict, family: str, version: str | None, karpenter: str,
                         manager: str, reason: str) -> None:
    got_manager, got_reason = resolution(mode, pool, family, version, karpenter)
    assert got_manager == manager
    assert reason in got_reason


def test_absent_family_resolves_to_none_even_when_requested() -> None:
    p = stacks.plan(pools={"p": {"instanceTypes": ["g6.xlarge"], "devices": {"efa": "dra"}}})
    res = p.pools["p"].managers["efa"]
    assert (res.manager, res.requested) == ("none", "dra")


def test_mixed_types_resolve_on_the_weakest() -> None:
    """One type without DRA metadata in a dynamic Karpenter pool keeps the whole pool on the plugin."""
    manager, reason = resolution("karpenter", {"instanceTypes": ["g6.xlarge", "g7e.2xlarge"]}, "nvidia")
    assert manager == "device-plugin"
    assert "g7e.2xlarge" in reason and "g6.xlarge" not in reason
