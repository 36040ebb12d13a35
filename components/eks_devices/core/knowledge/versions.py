"""Version numbers as comparable tuples: Kubernetes minors ("1.36") and semver ("1.15.0")."""

from __future__ import annotations

import re
from functools import cache

# The Kubernetes minors DRA needs: DRA is GA from 1.34 (kubernetes/api `resource/v1`), where the EKS user guide
# recommends it; Auto Mode's built-in NVIDIA DRA driver and DRANET need 1.36 (EKS user guide, "Manage hardware
# devices on Amazon EKS", Using DRA with EKS Auto Mode). What each family's own driver needs is its descriptor's
# `dra_kubernetes` (`core/families/`).
DRA_KUBERNETES = (1, 34)
AUTO_MODE_DRA_KUBERNETES = (1, 36)
# DRAConsumableCapacity (KEP-5075: a device `allowMultipleAllocations`, a request's `capacity`, a constraint's
# `distinctAttribute`): alpha and off in 1.34-1.35, beta and on from 1.36 (kubernetes v1.36.3
# `pkg/features/kube_features.go`). Before, the API server drops those fields on write (`dropDisabledFields`
# in `pkg/registry/resource/*/strategy.go`), so the scheduler allocates every device to one claim at a time.
CONSUMABLE_CAPACITY_KUBERNETES = (1, 36)
# DRAPartitionableDevices (KEP-4815: devices carved out of shared counters, which the NVIDIA DRA driver's DynamicMIG
# publishes): alpha and off in 1.34-1.35, beta and on from 1.36 (kubernetes v1.36.3 `pkg/features/kube_features.go`).
PARTITIONABLE_DEVICES_KUBERNETES = (1, 36)

# The Kubernetes minors a stack may name: the oldest EKS still creates clusters on (1.31's extended support ended
# 2026-11-26, 1.32's ends 2027-03-23: EKS User Guide, kubernetes-versions.html, "Amazon EKS Kubernetes release
# calendar") to the newest this toolkit's knowledge covers (Karpenter's compatibility table reaches 1.37).
EKS_KUBERNETES = ((1, 32), (1, 37))

KUBERNETES_VERSION = re.compile(r"^([0-9]+)\.([0-9]+)$")
SEMVER = re.compile(r"^v?([0-9]+)\.([0-9]+)\.([0-9]+)(?:[-+].*)?$")


@cache  # a plan asks once per pool and rule for the same one or two versions
def kubernetes(text: str) -> tuple[int, int]:
    """`"1.36"` → `(1, 36)`; raises ValueError for anything else."""
    match = KUBERNETES_VERSION.fullmatch(text)
    if not match:
        raise ValueError(f"not a Kubernetes minor version: {text!r}")
    return int(match[1]), int(match[2])


@cache
def semver(text: str) -> tuple[int, int, int]:
    """`"1.15.0"` → `(1, 15, 0)`; raises ValueError for anything else."""
    match = SEMVER.fullmatch(text)
    if not match:
        raise ValueError(f"not a semantic version: {text!r}")
    return int(match[1]), int(match[2]), int(match[3])


def show(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


# How an existing Karpenter release gets new DRA settings (EKS User Guide, "Manage hardware devices on
# Amazon EKS", Upgrading an existing Karpenter release): charts before 1.15 default
# settings.ignoreDRARequests to true, so `helm upgrade --reuse-values` keeps it and setting
# settings.enableDRA then fails; `--reset-then-reuse-values` (Helm 3.14 or later) starts from the new defaults.
KARPENTER_RESET_THEN_REUSE = (
    "upgrading it with helm upgrade --reset-then-reuse-values (Helm 3.14 or later; --reuse-values keeps earlier "
    "charts' ignoreDRARequests: true, and settings.enableDRA then fails)")
